// radiusward's entry point: maps the command line onto the subcommands of
// commands.h (docs/design.md "Roles and processes"). Usage errors exit with 2.
#include <CLI/CLI.hpp>

#include "app/audit_command.h"
#include "app/bench_command.h"
#include "app/certs_command.h"
#include "app/commands.h"
#include "app/ctl.h"
#include "app/dev_command.h"
#include "app/exit_codes.h"
#include "app/member_command.h"

namespace {

// An option that may be given several times, one value each time.
void repeatable(CLI::Option* option, std::string type_name) {
  option->type_name(std::move(type_name))
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

void add_gateway_flags(CLI::App& command, rw::app::GatewayCommand& gateway) {
  rw::config::GatewayOverrides& flags = gateway.overrides;
  command.add_option("--config", gateway.config_file, "Gateway YAML config file (docs/configuration.md)")
      ->type_name("FILE");
  command.add_option("--users", flags.users_file, "FreeRADIUS-format users file")->type_name("FILE");
  command.add_option("--clients", flags.clients_file, "FreeRADIUS-format clients.conf")->type_name("FILE");
  command.add_option("--policy", flags.policy_file, "Authorization policy file (docs/policy.md)")
      ->type_name("FILE");
  command.add_option("--auth-port", flags.auth_port, "Authentication port (default 1812)")->type_name("PORT");
  command.add_option("--acct-port", flags.acct_port, "Accounting port (default 1813)")->type_name("PORT");
  repeatable(command.add_option("--listen", flags.listen,
                                "Address to listen on; repeatable (default 0.0.0.0 and ::)"),
             "ADDR");
  command.add_option("--dictionary-dir", flags.dictionary_dir, "Folder with a FreeRADIUS `dictionary` file")
      ->type_name("DIR");
  command.add_option("--workers", flags.workers, "Worker threads; 0 = one per CPU")->type_name("N");
  command.add_option("--log-level", flags.log_level, "trace, debug, info, warn, error or off")
      ->type_name("LEVEL");
  repeatable(command.add_option("--member", flags.members,
                                "A member's submission address; repeatable (replaces accounting.members)"),
             "HOST:PORT");
  command.add_flag("--insecure-plaintext-cluster", flags.insecure_plaintext_cluster,
                   "Submit to --member addresses in plaintext (a test cluster on one host only)");
  command.add_option("--admin-socket", flags.admin_socket, "Admin API Unix socket (docs/admin_api.md)")
      ->type_name("PATH");
  rw::app::add_tls_flags(command, flags);
  command.add_option("--audit-log", flags.audit_log, "Hash-chained audit log of decisions (audit.path)")
      ->type_name("FILE");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"radiusward: a RADIUS server that never loses accounting", "radiusward"};
  app.set_version_flag("--version", std::string("radiusward ") + RW_VERSION);
  app.require_subcommand(1);

  rw::app::GatewayCommand gateway;
  CLI::App* gateway_command =
      app.add_subcommand("gateway", "Run a gateway: RADIUS listeners and authentication");
  add_gateway_flags(*gateway_command, gateway);

  std::string check_config;
  std::string check_member_config;
  CLI::App* check_command =
      app.add_subcommand("check", "Validate a gateway (or member) config and the files it names");
  CLI::Option* check_gateway =
      check_command->add_option("--config", check_config, "Gateway YAML config file")->type_name("FILE");
  CLI::Option* check_member =
      check_command->add_option("--member-config", check_member_config, "Member YAML config file")
          ->type_name("FILE");
  std::string check_policy;
  CLI::Option* check_policy_option =
      check_command->add_option("--policy", check_policy, "Authorization policy file alone (docs/policy.md)")
          ->type_name("FILE");
  check_gateway->excludes(check_member);
  check_policy_option->excludes(check_gateway)->excludes(check_member);
  check_command->require_option(1);

  CLI::App* version_command = app.add_subcommand("version", "Print the version");

  rw::app::MemberCommand member;
  CLI::App* member_command = rw::app::add_member_command(app, member);

  rw::app::CtlCommand ctl;
  CLI::App* ctl_command = rw::app::add_ctl_command(app, ctl);

  rw::app::DevCommand dev;
  CLI::App* dev_command = rw::app::add_dev_command(app, dev);

  rw::app::CertsCommand certs;
  CLI::App* certs_command = rw::app::add_certs_command(app, certs);

  rw::app::BenchCommand bench;
  CLI::App* bench_command = rw::app::add_bench_command(app, bench);

  rw::app::AuditCommand audit;
  CLI::App* audit_command = rw::app::add_audit_command(app, audit);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int status = app.exit(error);
    return status == 0 ? rw::app::kExitOk : rw::app::kExitConfigError;
  }
  if (*gateway_command) return rw::app::run_gateway(gateway);
  if (*member_command) return rw::app::run_member(member);
  if (*check_command) {
    if (!check_policy.empty()) return rw::app::run_check_policy(check_policy);
    return check_member_config.empty() ? rw::app::run_check(check_config)
                                       : rw::app::run_check_member(check_member_config);
  }
  if (*version_command) return rw::app::run_version();
  if (*ctl_command) return rw::app::run_ctl(ctl);
  if (*bench_command) return rw::app::run_bench(bench);
  if (*dev_command) return rw::app::run_dev(dev);
  if (*certs_command) return rw::app::run_certs(certs);
  if (*audit_command) return rw::app::run_audit(audit);
  return rw::app::kExitConfigError;
}
