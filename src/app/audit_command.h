// `radiusward audit verify [--key FILE] FILE...`: checks the hash chain of
// audit log files, oldest first (docs/operations.md "Audit log").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace rw::app {

struct AuditCommand {
  std::optional<std::string> key_file{};
  std::vector<std::string> files{};
};

// Registers `audit` and its `verify` subcommand on `app`, filling `command`.
CLI::App* add_audit_command(CLI::App& app, AuditCommand& command);

// Prints every break with its file:line, then OK or BROKEN with the line
// count and the head; 0 when intact, kExitAuditBroken when not, 2 when a
// file or the key cannot be read.
[[nodiscard]] int run_audit(const AuditCommand& command);

}  // namespace rw::app
