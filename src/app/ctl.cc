// `radiusward ctl`: flags to a socket path, one GET (or a few), the answer to
// stdout as a table or as received; the tables, filters and health verdict
// are pure code in src/admin/.
#include "app/ctl.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "admin/config_text.h"
#include "admin/dynamic_targets.h"
#include "admin/explain_view.h"
#include "admin/metrics_rates.h"
#include "admin/session_filter.h"
#include "admin/sessions_view.h"
#include "admin/status_view.h"
#include "app/dynamic_sender.h"
#include "app/exit_codes.h"
#include "config/clients_file.h"
#include "config/gateway_config.h"
#include "io/admin_client.h"
#include "io/clock.h"

namespace rw::app {

CLI::App* add_ctl_command(CLI::App& app, CtlCommand& command) {
  CLI::App* ctl = app.add_subcommand("ctl", "Query a running process's admin API (docs/admin_api.md)");
  CLI::Option* socket =
      ctl->add_option("--socket", command.socket, "The process's admin Unix socket")->type_name("PATH");
  CLI::Option* dir = ctl->add_option("--dir", command.dir, "A deployment folder: its admin/<process>.sock")
                         ->type_name("DIR");
  ctl->add_option("--member", command.member, "With --dir: member N instead of the gateway")
      ->type_name("N")
      ->check(CLI::Range(1, 255))
      ->needs(dir);
  socket->excludes(dir);
  ctl->add_option("query", command.query,
                  "status, sessions, records, metrics, version, top, explain, reload, config, "
                  "disconnect or coa")
      ->check(CLI::IsMember(kCtlQueries));
  ctl->add_option("changes", command.changes, "coa: the attributes to apply, as ATTR=VALUE")
      ->type_name("ATTR=VALUE");
  ctl->add_flag("--json", command.json, "Print the admin API's body as received, for scripts");
  ctl->add_option("--grace", command.grace_s,
                  "status: seconds to ask again while no leader is known or a gateway reconnects (default 2)")
      ->type_name("S")
      ->check(CLI::Range(0.0, 600.0));
  ctl->add_option("--clients", command.clients,
                  "disconnect, coa: clients.conf with the NASes' secrets (with --dir: gateway.yaml's)")
      ->type_name("FILE");
  ctl->add_option("--tries", command.tries,
                  "disconnect, coa: sends per request, waiting 1, 2, 4 s... (default 3)")
      ->type_name("N")
      ->check(CLI::Range(1, 10));
  ctl->add_option("--user", command.user, "sessions, explain, disconnect, coa: this User-Name only")
      ->type_name("NAME");
  ctl->add_option(
         "--nas", command.nas,
         "sessions, disconnect, coa: this NAS (address, NAS-Identifier or client name); explain: client "
         "name or address")
      ->type_name("NAS");
  ctl->add_option("--mac", command.mac, "sessions, explain: this Calling-Station-Id MAC, in any notation")
      ->type_name("MAC");
  ctl->add_option("--fraction", command.fraction, "explain: follow this fraction of the selected requests")
      ->type_name("F")
      ->check(CLI::Range(0.000001, 1.0));
  ctl->add_option("--seconds", command.seconds, "explain: how long the gateway follows them (default 600)")
      ->type_name("S")
      ->check(CLI::Range(0.1, 86400.0));
  ctl->add_option("--ip", command.ip, "sessions: this Framed-IP-Address")->type_name("ADDR");
  ctl->add_option("--session", command.session, "sessions: this Acct-Session-Id or Acct-Unique-Session-Id")
      ->type_name("ID");
  ctl->add_option("--interval", command.interval_s, "top: seconds between refreshes (default 1)")
      ->type_name("S")
      ->check(CLI::Range(0.1, 3600.0));
  ctl->add_option("--count", command.count,
                  "top: refreshes, explain: traces before exiting (default 0: until interrupted)")
      ->type_name("K")
      ->check(CLI::Range(0, 1'000'000));
  CLI::App* members = ctl->add_subcommand("members", "Change the cluster's voters (on the leader)");
  members->add_option("action", command.members_action, "add, remove or replace")
      ->required()
      ->check(CLI::IsMember({"add", "remove", "replace"}));
  members->add_option("id", command.members_id, "The member's raft id")
      ->required()
      ->check(CLI::Range(1, 255));
  members->add_option("raft", command.members_raft, "add, replace: its raft address, IPv4:port");
  return ctl;
}

namespace {

// The member-N socket of `dir` (N = 1..9) whose /status says leader.
std::optional<std::string> find_leader_socket(const std::string& dir) {
  for (int id = 1; id <= 9; ++id) {
    const std::string path = io::admin_socket_path(dir, "member-" + std::to_string(id));
    auto reply = io::admin_request(path, "GET", "/status", {}, Duration::seconds(5));
    if (!reply || reply->status != 200) continue;
    const auto status = nlohmann::json::parse(reply->body, nullptr, /*allow_exceptions=*/false);
    const auto role = status.is_object() ? status.find("raft_role") : status.end();
    if (role != status.end() && *role == "leader") return path;
  }
  return std::nullopt;
}

// The request `command` asks for: method, target and body.
struct CtlRequest {
  std::string method;
  std::string target;
  std::string body;
};

CtlRequest request_of(const CtlCommand& command) {
  if (command.members_action.empty()) return CtlRequest{"GET", "/" + command.query, ""};
  nlohmann::json body{{"id", command.members_id}};
  if (command.members_action != "remove") body["raft"] = command.members_raft;
  return CtlRequest{"POST", "/members/" + command.members_action, body.dump()};
}

// The answer, whatever its status; a process that cannot be reached is said
// on stderr and gives nothing.
std::optional<io::AdminReply> ask(const std::string& path, const CtlRequest& request,
                                  Duration timeout = Duration::seconds(30)) {
  auto reply = io::admin_request(path, request.method, request.target, request.body, timeout);
  if (!reply) {
    const int error = reply.error().error_number;
    const bool not_running = error == ENOENT || error == ECONNREFUSED;
    std::fprintf(stderr, "radiusward ctl: cannot reach %s: %s%s\n", path.c_str(),
                 reply.error().to_string().c_str(), not_running ? " (is the process running?)" : "");
    return std::nullopt;
  }
  return std::move(*reply);
}

void say_unexpected(const std::string& path, const io::AdminReply& reply) {
  std::fprintf(stderr, "radiusward ctl: %s answered %d: %s", path.c_str(), reply.status, reply.body.c_str());
  if (reply.body.empty() || reply.body.back() != '\n') std::fputc('\n', stderr);
}

// The body of a 200 answer; anything else is said on stderr and gives nothing.
std::optional<std::string> fetch(const std::string& path, const CtlRequest& request) {
  std::optional<io::AdminReply> reply = ask(path, request);
  if (!reply) return std::nullopt;
  if (reply->status != 200) {
    say_unexpected(path, *reply);
    return std::nullopt;
  }
  return std::move(reply->body);
}

// Writes `text` to stdout, with a final newline if it lacks one.
int print(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (!text.empty() && text.back() != '\n') std::fputc('\n', stdout);
  return std::fflush(stdout) == 0 ? kExitOk : kExitRuntimeFailure;
}

int unreadable(const std::string& path, const std::string& what, const std::string& why) {
  std::fprintf(stderr, "radiusward ctl: %s answered %s with something unreadable: %s\n", path.c_str(),
               what.c_str(), why.c_str());
  return kExitRuntimeFailure;
}

void sleep_for_seconds(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

// `status`: the table (or the body with --json) and the verdict as exit
// status; while every problem may clear by itself, asks again for the grace
// period (docs/admin_api.md "Health").
int run_status(const std::string& path, const CtlCommand& command) {
  const Instant deadline =
      io::monotonic_now() +
      Duration::milliseconds(static_cast<std::int64_t>(command.grace_s.value_or(kCtlGraceSeconds) * 1000));
  for (;;) {
    std::optional<std::string> body = fetch(path, CtlRequest{"GET", "/status", ""});
    if (!body) return kExitRuntimeFailure;
    auto view = admin::view_status(*body);
    if (!view) {
      if (command.json) (void)print(*body);
      return unreadable(path, "/status", view.error());
    }
    if (view->health.transient && io::monotonic_now() < deadline) {
      sleep_for_seconds(0.25);
      continue;
    }
    const int printed = print(command.json ? *body : view->table);
    if (printed != kExitOk) return printed;
    return view->health.healthy() ? kExitOk : kExitUnhealthy;
  }
}

// `reload`: POST /reload; 200 is accepted, 422 rejected with every error
// (docs/admin_api.md "Reload"). Loading a large users file takes a while:
// the answer is waited for longer than other queries'.
int run_reload(const std::string& path, const CtlCommand& command) {
  std::optional<io::AdminReply> reply = ask(path, CtlRequest{"POST", "/reload", ""}, Duration::seconds(300));
  if (!reply) return kExitRuntimeFailure;
  if (reply->status != 200 && reply->status != 422) {
    say_unexpected(path, *reply);
    return kExitRuntimeFailure;
  }
  const auto body = nlohmann::json::parse(reply->body, nullptr, /*allow_exceptions=*/false);
  const bool readable = body.is_object() && body.contains("accepted") && body["accepted"].is_boolean() &&
                        body.contains("generation") && body["generation"].is_number_unsigned() &&
                        body.contains("errors") && body["errors"].is_array();
  if (!readable) return unreadable(path, "/reload", "no accepted, generation and errors");
  const bool accepted = body["accepted"].get<bool>();
  const auto generation = body["generation"].get<std::uint64_t>();
  if (command.json) {
    if (print(reply->body) != kExitOk) return kExitRuntimeFailure;
  } else if (accepted) {
    if (print("reloaded: configuration generation " + std::to_string(generation) + " in effect") != kExitOk)
      return kExitRuntimeFailure;
  }
  if (accepted) return kExitOk;
  for (const auto& error : body["errors"]) {
    if (error.is_string()) std::fprintf(stderr, "%s\n", error.get<std::string>().c_str());
  }
  std::fprintf(
      stderr,
      "radiusward ctl: reload rejected with %zu error(s); configuration generation %llu stays in effect\n",
      body["errors"].size(), static_cast<unsigned long long>(generation));
  return kExitReloadRejected;
}

// The checked filter of --user --nas --mac --ip --session; a bad value is
// said on stderr and gives nothing.
std::optional<admin::SessionFilter> filter_of(const CtlCommand& command) {
  auto filter = admin::make_session_filter(admin::SessionFilter{.user = command.user,
                                                                .nas = command.nas,
                                                                .mac = command.mac,
                                                                .ip = command.ip,
                                                                .session = command.session});
  if (!filter) {
    std::fprintf(stderr, "radiusward ctl: %s\n", filter.error().c_str());
    return std::nullopt;
  }
  return std::move(*filter);
}

// `sessions`: the member filters (GET /sessions?...), the table filters again.
int run_sessions(const std::string& path, const CtlCommand& command) {
  std::optional<admin::SessionFilter> filter = filter_of(command);
  if (!filter) return kExitConfigError;
  std::optional<std::string> body =
      fetch(path, CtlRequest{"GET", "/sessions" + admin::session_query(*filter), ""});
  if (!body) return kExitRuntimeFailure;
  if (command.json) return print(*body);
  auto view = admin::view_sessions(*body, *filter);
  if (!view) return unreadable(path, "/sessions", view.error());
  return print(view->table);
}

// `config`: the configuration in force (/config), as a table and a key list
// or, with --json, as received.
int run_config(const std::string& path, const CtlCommand& command) {
  std::optional<std::string> body = fetch(path, CtlRequest{"GET", "/config", ""});
  if (!body) return kExitRuntimeFailure;
  if (command.json) return print(*body);
  auto text = admin::render_config(*body);
  if (!text) return unreadable(path, "/config", text.error());
  return print(*text);
}

// The clients file of `disconnect` and `coa`: --clients, else the one
// DIR/gateway.yaml names.
std::optional<std::vector<config::ClientDef>> read_clients(const CtlCommand& command) {
  std::string path;
  if (command.clients) {
    path = *command.clients;
  } else {
    const std::string gateway_yaml = *command.dir + "/gateway.yaml";
    auto gateway = config::load_gateway_config(gateway_yaml);
    if (!gateway) {
      for (const config::ConfigError& error : gateway.error())
        std::fprintf(stderr, "radiusward ctl: %s\n", error.to_string().c_str());
      std::fprintf(stderr, "radiusward ctl: give --clients FILE\n");
      return std::nullopt;
    }
    path = gateway->clients_file.path;
  }
  auto clients = config::load_clients_file(path);
  if (!clients) {
    std::fprintf(stderr, "radiusward ctl: %s\n", clients.error().to_string().c_str());
    return std::nullopt;
  }
  return std::move(clients->clients);
}

// `disconnect` and `coa`: the sessions the member lists for the filter, one
// request to each one's NAS, one line per session; 0 only when every NAS
// acknowledged (docs/operations.md "Disconnect and CoA").
int run_dynamic(const std::string& path, const CtlCommand& command) {
  const radius::DynamicKind kind =
      command.query == "disconnect" ? radius::DynamicKind::kDisconnect : radius::DynamicKind::kCoa;
  std::optional<admin::SessionFilter> filter = filter_of(command);
  if (!filter) return kExitConfigError;
  const auto dictionary = radius::Dictionary::builtin();
  std::vector<radius::ChangeAttribute> changes;
  for (const std::string& text : command.changes) {
    auto change = radius::parse_change_attribute(*dictionary, text);
    if (!change) {
      std::fprintf(stderr, "radiusward ctl: %s\n", change.error().c_str());
      return kExitConfigError;
    }
    changes.push_back(std::move(*change));
  }
  std::optional<std::vector<config::ClientDef>> clients = read_clients(command);
  if (!clients) return kExitConfigError;
  std::optional<std::string> body =
      fetch(path, CtlRequest{"GET", "/sessions" + admin::session_query(*filter), ""});
  if (!body) return kExitRuntimeFailure;
  auto targets = admin::dynamic_targets(*body, *filter, *clients);
  if (!targets) return unreadable(path, "/sessions", targets.error());
  if (targets->empty()) {
    std::fprintf(stderr, "radiusward ctl: no session matches the filter; nothing was sent\n");
    return kExitNoSession;
  }
  const SendOptions options{.tries = command.tries.value_or(3)};
  bool all_acknowledged = true;
  std::string lines;
  for (const SendOutcome& outcome : send_dynamic_requests(kind, *targets, changes, options, *dictionary)) {
    lines += outcome.line + "\n";
    all_acknowledged = all_acknowledged && outcome.acknowledged;
  }
  if (print(lines) != kExitOk) return kExitRuntimeFailure;
  return all_acknowledged ? kExitOk : kExitNotAcknowledged;
}

// One /metrics page and when it was read.
struct Page {
  std::vector<admin::MetricSample> samples;
  Instant at;
};

std::optional<Page> read_metrics(const std::string& path, int& failed) {
  std::optional<std::string> body = fetch(path, CtlRequest{"GET", "/metrics", ""});
  if (!body) {
    failed = kExitRuntimeFailure;
    return std::nullopt;
  }
  auto samples = admin::parse_metrics(*body);
  if (!samples) {
    failed = unreadable(path, "/metrics", samples.error());
    return std::nullopt;
  }
  return Page{std::move(*samples), io::monotonic_now()};
}

// `top`: rates between consecutive /metrics pages, `--count` times or until
// interrupted; the screen is cleared (ANSI) only when stdout is a terminal.
int run_top(const std::string& path, const CtlCommand& command) {
  const bool terminal = ::isatty(STDOUT_FILENO) == 1;
  int failed = kExitOk;
  std::optional<Page> previous = read_metrics(path, failed);
  if (!previous) return failed;
  const double interval_s = command.interval_s.value_or(1.0);
  const int count = command.count.value_or(0);
  for (int refresh = 1; count == 0 || refresh <= count; ++refresh) {
    sleep_for_seconds(interval_s);
    std::optional<Page> current = read_metrics(path, failed);
    if (!current) return failed;
    const double seconds = static_cast<double>((current->at - previous->at).ns) / 1e9;
    char header[512];
    std::snprintf(header, sizeof header, "%s  every %g s  refresh %d\n\n", path.c_str(), interval_s, refresh);
    std::string text = (terminal ? "\x1b[H\x1b[2J" : (refresh > 1 ? "\n" : "")) + std::string(header);
    text += admin::render_rates(previous->samples, current->samples, seconds > 0 ? seconds : 1e-9);
    if (print(text) != kExitOk) return kExitRuntimeFailure;
    previous = std::move(current);
  }
  return kExitOk;
}

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int) { g_interrupted = 1; }

// `explain`: asks the gateway to follow the selected requests (POST
// /explain), prints their traces as they come (GET /explain/traces) until
// --count traces, the selector's time is up or Ctrl-C, then removes the
// selector (DELETE /explain?id=N) so that the gateway stops following.
int run_explain(const std::string& path, const CtlCommand& command) {
  nlohmann::json body = nlohmann::json::object();
  if (command.user) body["user"] = *command.user;
  if (command.nas) body["nas"] = *command.nas;
  if (command.mac) body["mac"] = *command.mac;
  if (command.fraction) body["fraction"] = *command.fraction;
  if (command.seconds) body["seconds"] = *command.seconds;
  std::optional<std::string> added = fetch(path, CtlRequest{"POST", "/explain", body.dump()});
  if (!added) return kExitRuntimeFailure;
  const auto selector = nlohmann::json::parse(*added, nullptr, /*allow_exceptions=*/false);
  const auto id = selector.is_object() ? selector.find("id") : selector.end();
  const auto last = selector.is_object() ? selector.find("last_sequence") : selector.end();
  const auto remaining = selector.is_object() ? selector.find("remaining_s") : selector.end();
  if (id == selector.end() || !id->is_number_unsigned() || last == selector.end() ||
      !last->is_number_unsigned() || remaining == selector.end() || !remaining->is_number()) {
    return unreadable(path, "POST /explain", "no id, last_sequence and remaining_s");
  }
  const std::uint64_t selector_id = id->get<std::uint64_t>();
  std::uint64_t after = last->get<std::uint64_t>();
  std::fprintf(stderr, "radiusward ctl: following selector %llu on %s for %g s; Ctrl-C stops\n",
               static_cast<unsigned long long>(selector_id), path.c_str(), remaining->get<double>());
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  const Instant until = io::monotonic_now() +
                        Duration::milliseconds(static_cast<std::int64_t>(remaining->get<double>() * 1000));
  const int count = command.count.value_or(0);
  int printed = 0;
  int status = kExitOk;
  bool done = false;
  while (!done && g_interrupted == 0) {
    const std::string target =
        "/explain/traces?after=" + std::to_string(after) + "&selector=" + std::to_string(selector_id);
    std::optional<std::string> page = fetch(path, CtlRequest{"GET", target, ""});
    if (!page) {
      status = kExitRuntimeFailure;
      break;
    }
    std::size_t start = 0;
    while (!done && start < page->size()) {
      const std::size_t end = std::min(page->find('\n', start), page->size());
      const std::string line = page->substr(start, end - start);
      start = end + 1;
      if (line.empty()) continue;
      auto view = admin::view_trace(line);
      if (!view) {
        status = unreadable(path, "/explain/traces", view.error());
        done = true;
        break;
      }
      after = std::max(after, view->sequence);
      if (print(command.json ? line : view->text) != kExitOk) return kExitRuntimeFailure;
      done = count > 0 && ++printed >= count;
    }
    if (done || io::monotonic_now() >= until) break;
    sleep_for_seconds(0.2);
  }
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  // Gone already when its time ran out: the gateway answers 404 then.
  (void)io::admin_request(path, "DELETE", "/explain?id=" + std::to_string(selector_id), {});
  return status;
}

// Usage errors run_ctl finds beyond CLI11's own; nothing when the command is usable.
std::optional<std::string> usage_error(const CtlCommand& command) {
  const bool membership = !command.members_action.empty();
  if (!command.socket && !command.dir) return "give --socket PATH or --dir DIR";
  if (command.query.empty() == !membership) {
    return "give one query (status, sessions, records, metrics, version, top, explain, reload, config, "
           "disconnect, coa) or `members ...`";
  }
  if (membership && (command.members_action == "remove") != command.members_raft.empty()) {
    return "members add and replace take ID RAFT, remove takes ID only";
  }
  const bool filtered = command.user || command.nas || command.mac || command.ip || command.session;
  const bool dynamic = command.query == "disconnect" || command.query == "coa";
  if (filtered && command.query != "sessions" && command.query != "explain" && !dynamic) {
    return "--user, --nas, --mac, --ip and --session go with sessions, disconnect and coa (--user, --nas and "
           "--mac with explain)";
  }
  if (command.query == "explain" && (command.ip || command.session))
    return "explain selects by --user, --nas, --mac and --fraction";
  if (command.query == "explain" && !command.user && !command.nas && !command.mac && !command.fraction)
    return "explain needs --user, --nas, --mac or --fraction";
  if ((command.fraction || command.seconds) && command.query != "explain")
    return "--fraction and --seconds go with explain";
  // An empty filter would disconnect every session of the cluster.
  if (dynamic && !filtered) return command.query + " needs a filter: --user, --nas, --mac, --ip or --session";
  if ((command.clients || command.tries) && !dynamic)
    return "--clients and --tries go with disconnect and coa";
  if (dynamic && !command.clients && !command.dir) return command.query + " needs --clients FILE (or --dir)";
  if (command.query == "coa" && command.changes.empty()) return "coa needs at least one ATTR=VALUE";
  if (command.query != "coa" && !command.changes.empty()) return "only coa takes ATTR=VALUE arguments";
  if (command.json && (membership || command.query == "top" || dynamic))
    return "--json goes with a query other than top, disconnect and coa";
  if (command.interval_s && command.query != "top") return "--interval goes with top";
  if (command.count && command.query != "top" && command.query != "explain") {
    return "--count goes with top and explain";
  }
  if (command.grace_s && command.query != "status") return "--grace goes with status";
  return std::nullopt;
}

}  // namespace

int run_ctl(const CtlCommand& command) {
  if (std::optional<std::string> error = usage_error(command)) {
    std::fprintf(stderr, "radiusward ctl: %s\n", error->c_str());
    return kExitConfigError;
  }
  const bool membership = !command.members_action.empty();
  const bool dynamic = command.query == "disconnect" || command.query == "coa";
  const std::string process = command.member ? "member-" + std::to_string(*command.member) : "gateway";
  std::string path = command.socket ? *command.socket : io::admin_socket_path(*command.dir, process);
  // The leader has every committed session: membership changes and the
  // sessions of disconnect and coa ask it.
  if ((membership || dynamic) && command.dir && !command.member) {
    std::optional<std::string> leader = find_leader_socket(*command.dir);
    if (!leader) {
      std::fprintf(stderr, "radiusward ctl: no member of %s/admin/member-1..9.sock says it is the leader\n",
                   command.dir->c_str());
      return kExitRuntimeFailure;
    }
    path = *leader;
  }
  if (command.query == "status") return run_status(path, command);
  if (command.query == "sessions") return run_sessions(path, command);
  if (command.query == "top") return run_top(path, command);
  if (command.query == "explain") return run_explain(path, command);
  if (command.query == "reload") return run_reload(path, command);
  if (command.query == "config") return run_config(path, command);
  if (dynamic) return run_dynamic(path, command);
  std::optional<std::string> body = fetch(path, request_of(command));
  return body ? print(*body) : kExitRuntimeFailure;
}

}  // namespace rw::app
