// `radiusward ctl`: reads a running process's admin API over its Unix socket
// and prints it for people (tables) or scripts (--json), asks a member
// leader for a membership change, asks a process to reload, or disconnects
// or changes sessions at their NAS (RFC 5176; docs/admin_api.md). Exit
// status 0 on 200, 1 when the process cannot be reached or answers with an
// error, 2 on usage errors, 3 when `status` finds the process unhealthy, 4
// when `reload` is rejected; disconnect and coa: 5 when no session matches,
// 6 when a NAS did not acknowledge (app/exit_codes.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace rw::app {

// What `ctl` can ask for; each maps to GET /<name> (`top`: /metrics, again
// and again; `explain`: POST /explain, then GET /explain/traces until done;
// `reload`: POST /reload; `config`: GET /config, printed for people).
inline constexpr double kCtlGraceSeconds = 2.0;

// `disconnect` and `coa` send Disconnect- and CoA-Requests to the NASes of
// the sessions a member lists (docs/operations.md "Disconnect and CoA").
inline const std::vector<std::string> kCtlQueries = {"status",  "sessions",   "records", "metrics",
                                                     "version", "top",        "explain", "reload",
                                                     "config",  "disconnect", "coa"};

struct CtlCommand {
  std::optional<std::string> socket{};  // --socket PATH
  std::optional<std::string> dir{};     // --dir DIR: DIR/admin/<process>.sock
  std::optional<int> member{};          // --member N with --dir: member-N, else the gateway
  std::string query{};                  // One of kCtlQueries, or empty with `members`.
  bool json = false;                    // --json: status, sessions and config print the body as received.
  // status: how long to ask again while the only problems are ones that
  // clear by themselves (no leader known yet, a gateway reconnecting).
  std::optional<double> grace_s{};  // default kCtlGraceSeconds
  // sessions, disconnect, coa: --user --nas --mac --ip --session.
  std::optional<std::string> user{}, nas{}, mac{}, ip{}, session{};
  // disconnect, coa: the clients file with the NASes' secrets (with --dir:
  // default the one DIR/gateway.yaml names), tries per request, and for coa
  // the ATTR=VALUE changes.
  std::optional<std::string> clients{};
  std::optional<int> tries{};
  std::vector<std::string> changes{};
  std::optional<double> interval_s{};  // top: seconds between refreshes; default 1
  std::optional<int> count{};  // top: refreshes, explain: traces before it exits; 0: until interrupted
  // explain: --user --nas --mac select (as for sessions), and:
  std::optional<double> fraction{};  // the fraction of the selected requests followed; default 1
  std::optional<double> seconds{};   // how long the gateway follows them; default 600
  // `ctl ... members add ID RAFT | remove ID | replace ID RAFT`: POST
  // /members/<action> to the leader (with --dir alone: the member-N socket,
  // N = 1..9, whose /status says leader).
  std::string members_action{};  // Empty: no membership change.
  int members_id = 0;
  std::string members_raft{};
};

// Registers the `ctl` subcommand and its flags on `app`, filling `command`.
CLI::App* add_ctl_command(CLI::App& app, CtlCommand& command);

// Runs it: tables or bodies to stdout, errors to stderr.
[[nodiscard]] int run_ctl(const CtlCommand& command);

}  // namespace rw::app
