// `radiusward member --config FILE`: one cluster member (docs/design.md "Roles
// and processes"): the raft node over the accounting ledger, the submission
// listener for gateways and the admin API. Wiring only.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace rw::app {

struct MemberCommand {
  std::string config_file{};
  bool recover_alone = false;  // --recover-alone: NodeOptions::recover_alone
};

// Registers the `member` subcommand and its flags on `app`, filling `command`.
CLI::App* add_member_command(CLI::App& app, MemberCommand& command);

// Runs the member until SIGTERM or SIGINT (a leader hands leadership over
// first) and returns 0; 2 on a config error; 1 when something fails to
// start or the node fails after start.
[[nodiscard]] int run_member(const MemberCommand& command);

}  // namespace rw::app
