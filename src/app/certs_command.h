// `radiusward certs`: the cluster CA and the certificates of members and
// gateways for a real deployment (docs/operations.md "Cluster certificates").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace rw::app {

struct CertsCommand {
  std::string dir{};
  int members = 0;                      // Member ids 1..N.
  std::vector<std::string> gateways{};  // Gateway names.
  std::vector<std::string> revoke{};    // Common names to put in crl.pem.
};

// Registers the `certs` subcommand and its flags on `app`, filling `command`.
CLI::App* add_certs_command(CLI::App& app, CertsCommand& command);

// Creates what is missing in --dir, prints what it wrote; 0, or 2 on wrong
// flags, 1 when a file cannot be written.
[[nodiscard]] int run_certs(const CertsCommand& command);

}  // namespace rw::app
