// `radiusward audit verify` (audit_command.h): files in, audit::Verifier's
// findings out.
#include "app/audit_command.h"

#include <cstdio>
#include <fstream>
#include <iterator>

#include "app/exit_codes.h"
#include "audit/verify.h"
#include "gateway_shell/audit_log.h"

namespace rw::app {

CLI::App* add_audit_command(CLI::App& app, AuditCommand& command) {
  CLI::App* audit = app.add_subcommand("audit", "The audit log of decisions (docs/operations.md)");
  audit->require_subcommand(1);
  CLI::App* verify =
      audit->add_subcommand("verify", "Check the hash chain of audit log files, given oldest first");
  verify->add_option("--key", command.key_file, "HMAC key file the gateway's audit.key_file names")
      ->type_name("FILE");
  verify->add_option("files", command.files, "Audit log files, oldest first (FILE.2 FILE.1 FILE)")
      ->type_name("FILE")
      ->required();
  return audit;
}

int run_audit(const AuditCommand& command) {
  std::optional<audit::ChainKey> key;
  if (command.key_file) {
    auto read = gateway_shell::read_audit_key(*command.key_file);
    if (!read) {
      std::fprintf(stderr, "radiusward audit verify: %s\n", read.error().c_str());
      return kExitConfigError;
    }
    key = audit::ChainKey::keyed(std::move(*read));
  }
  audit::Verifier verifier(std::move(key));
  for (const std::string& path : command.files) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "radiusward audit verify: cannot read %s\n", path.c_str());
      return kExitConfigError;
    }
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    verifier.on_file(path, bytes);
  }
  const audit::Verification result = verifier.finish();
  for (const audit::Note& note : result.notes) std::printf("note: %s\n", note.to_string().c_str());
  for (const audit::Finding& finding : result.problems) std::printf("%s\n", finding.to_string().c_str());
  if (result.problems_not_listed > 0) std::printf("... and %zu more problems\n", result.problems_not_listed);
  const std::string head = result.head ? "head sequence " + std::to_string(result.head->sequence) + " hash " +
                                             audit::to_hex(result.head->hash)
                                       : std::string("no head");
  if (result.intact()) {
    std::printf("OK: %llu lines in %zu file(s), %s\n", static_cast<unsigned long long>(result.lines),
                command.files.size(), head.c_str());
    return kExitOk;
  }
  std::printf("BROKEN: %zu problem(s) in %llu lines, %s\n",
              result.problems.size() + result.problems_not_listed,
              static_cast<unsigned long long>(result.lines), head.c_str());
  return kExitAuditBroken;
}

}  // namespace rw::app
