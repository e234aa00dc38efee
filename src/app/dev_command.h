// `radiusward dev`: a whole local deployment on loopback — three members and
// a gateway as supervised child processes, with configs generated under one
// folder (docs/operations.md, "Trying it out").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "config/gateway_config.h"

namespace rw::app {

struct DevCommand {
  std::string dir = "radiusward-dev";
  std::optional<std::string> users_file{};
  std::optional<std::string> clients_file{};
  std::optional<std::string> policy_file{};  // --policy: the gateway's authorization policy (docs/policy.md).
  std::optional<std::uint16_t> auth_port{};
  std::optional<std::uint16_t> acct_port{};
  std::optional<std::string> binary{};              // Default: this executable.
  std::optional<std::uint16_t> member_port_base{};  // Default: ports the kernel chooses.
  int restart_delay_ms = 1000;
  int stop_timeout_ms = 10'000;
  // --tls-* and --radsec-*: passed on to the gateway's command line.
  config::GatewayOverrides tls_flags{};
  // --audit-log FILE: passed to the gateway (docs/operations.md "Audit log").
  std::optional<std::string> audit_log{};
};

// Registers the `dev` subcommand and its flags on `app`, filling `command`.
CLI::App* add_dev_command(CLI::App& app, DevCommand& command);

// Generates or reuses the configs, starts and supervises the processes until
// SIGTERM or SIGINT, stops them and returns 0; 2 when a config is wrong
// (nothing started), 1 when the environment refuses (ports, files).
[[nodiscard]] int run_dev(const DevCommand& command);

}  // namespace rw::app
