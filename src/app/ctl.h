// `radiusward ctl`: reads a running process's admin API over its Unix socket
// and prints the answer, or asks a member leader for a membership change
// (docs/admin_api.md). Exit status 0 on 200, 1 when
// the process cannot be reached or answers with an error, 2 on usage errors.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace rw::app {

// What `ctl` can ask for; each maps to GET /<name>.
inline const std::vector<std::string> kCtlQueries = {"status", "sessions", "records", "metrics", "version"};

struct CtlCommand {
  std::optional<std::string> socket{};  // --socket PATH
  std::optional<std::string> dir{};     // --dir DIR: DIR/admin/<process>.sock
  std::optional<int> member{};          // --member N with --dir: member-N, else the gateway
  std::string query{};                  // One of kCtlQueries, or empty with `members`.
  // `ctl ... members add ID RAFT | remove ID | replace ID RAFT`: POST
  // /members/<action> to the leader (with --dir alone: the member-N socket,
  // N = 1..9, whose /status says leader).
  std::string members_action{};  // Empty: no membership change.
  int members_id = 0;
  std::string members_raft{};
};

// Registers the `ctl` subcommand and its flags on `app`, filling `command`.
CLI::App* add_ctl_command(CLI::App& app, CtlCommand& command);

// Runs it: the body goes to stdout as received (records: one JSON object per
// line), errors to stderr.
[[nodiscard]] int run_ctl(const CtlCommand& command);

}  // namespace rw::app
