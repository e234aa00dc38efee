// `radiusward ctl`: flags to a socket path, one GET, the body to stdout.
#include "app/ctl.h"

#include <cerrno>
#include <cstdio>

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
      ->required()
      ->check(CLI::IsMember(kCtlQueries));
  return ctl;
}

int run_ctl(const CtlCommand& command) {
  if (!command.socket && !command.dir) {
    std::fprintf(stderr, "radiusward ctl: give --socket PATH or --dir DIR\n");
    return kExitConfigError;
  }
  const std::string process = command.member ? "member-" + std::to_string(*command.member) : "gateway";
  const std::string path = command.socket ? *command.socket : io::admin_socket_path(*command.dir, process);
  auto reply = io::admin_request(path, "GET", "/" + command.query);
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
