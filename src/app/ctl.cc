// `radiusward ctl`: flags to a socket path, one GET, the body to stdout.
#include "app/ctl.h"

#include <cerrno>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>

#include "app/exit_codes.h"
#include "io/admin_client.h"

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
  ctl->add_option("query", command.query, "status, sessions, records, metrics or version")
      ->check(CLI::IsMember(kCtlQueries));
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
    if (status.is_object() && status.value("raft_role", "") == "leader") return path;
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

}  // namespace

int run_ctl(const CtlCommand& command) {
  if (!command.socket && !command.dir) {
    std::fprintf(stderr, "radiusward ctl: give --socket PATH or --dir DIR\n");
    return kExitConfigError;
  }
  const bool membership = !command.members_action.empty();
  if (command.query.empty() == !membership) {
    std::fprintf(stderr, "radiusward ctl: give one query (%s) or `members ...`\n",
                 "status, sessions, records, metrics, version");
    return kExitConfigError;
  }
  if (membership && (command.members_action == "remove") != command.members_raft.empty()) {
    std::fprintf(stderr, "radiusward ctl: members add and replace take ID RAFT, remove takes ID only\n");
    return kExitConfigError;
  }
  const std::string process = command.member ? "member-" + std::to_string(*command.member) : "gateway";
  std::string path = command.socket ? *command.socket : io::admin_socket_path(*command.dir, process);
  if (membership && command.dir && !command.member) {
    std::optional<std::string> leader = find_leader_socket(*command.dir);
    if (!leader) {
      std::fprintf(stderr, "radiusward ctl: no member of %s/admin/member-1..9.sock says it is the leader\n",
                   command.dir->c_str());
      return kExitRuntimeFailure;
    }
    path = *leader;
  }
  const CtlRequest request = request_of(command);
  auto reply = io::admin_request(path, request.method, request.target, request.body);
  if (!reply) {
    const int error = reply.error().error_number;
    const bool not_running = error == ENOENT || error == ECONNREFUSED;
    std::fprintf(stderr, "radiusward ctl: cannot reach %s: %s%s\n", path.c_str(),
                 reply.error().to_string().c_str(), not_running ? " (is the process running?)" : "");
    return kExitRuntimeFailure;
  }
  if (reply->status != 200) {
    std::fprintf(stderr, "radiusward ctl: %s answered %d: %s", path.c_str(), reply->status,
                 reply->body.c_str());
    if (reply->body.empty() || reply->body.back() != '\n') std::fputc('\n', stderr);
    return kExitRuntimeFailure;
  }
  std::fwrite(reply->body.data(), 1, reply->body.size(), stdout);
  if (!reply->body.empty() && reply->body.back() != '\n') std::fputc('\n', stdout);
  return std::fflush(stdout) == 0 ? kExitOk : kExitRuntimeFailure;
}

}  // namespace rw::app
