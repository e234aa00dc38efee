// The radiusward subcommands, each a function from parsed flags to an exit
// status (exit_codes.h). main.cc maps the command line onto these.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "config/gateway_config.h"

namespace rw::app {

// `radiusward gateway`: a config file, flags, or both (flags win).
struct GatewayCommand {
  std::optional<std::string> config_file{};
  config::GatewayOverrides overrides{};
};

// The gateway's TLS and RadSec flags (--tls-cert, --tls-key, --tls-ca,
// --tls-crl, --radsec-port, --radsec-clients), shared by `gateway` and `dev`.
void add_tls_flags(CLI::App& command, config::GatewayOverrides& flags);

// Runs the gateway until SIGTERM or SIGINT.
[[nodiscard]] int run_gateway(const GatewayCommand& command);

// `radiusward check --config FILE`: validates the config and the files it
// names; prints every error to stderr.
[[nodiscard]] int run_check(const std::string& config_file);
// `radiusward check --member-config FILE`: a member config, its TLS files,
// and plaintext only on loopback.
[[nodiscard]] int run_check_member(const std::string& config_file);

// `radiusward check --policy FILE`: validates an authorization policy file
// alone (docs/policy.md), printing every error as file:line:col.
[[nodiscard]] int run_check_policy(const std::string& policy_file);

// `radiusward version`.
[[nodiscard]] int run_version();

}  // namespace rw::app
