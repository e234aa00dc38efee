// `radiusward dev`: flags, the deployment folder's files, then the
// supervisor. Config texts and restart decisions live in src/deployment;
// processes, ports and files in src/io.
#include "app/dev_command.h"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "app/commands.h"
#include "app/exit_codes.h"
#include "app/referenced_files.h"
#include "config/clients_file.h"
#include "config/gateway_config.h"
#include "deployment/local_deployment.h"
#include "dev_shell/process_supervisor.h"
#include "io/admin_client.h"
#include "io/free_ports.h"
#include "io/text_file.h"
#include "io/tls_certificates.h"

namespace rw::app {
namespace {

namespace fs = std::filesystem;
using deployment::kMemberCount;

// A failure before anything started: the message and the exit status.
struct Refusal {
  std::string message;
  int status = kExitConfigError;
};

std::string absolute(const std::string& path) { return fs::absolute(path).lexically_normal().string(); }

std::string path_in(const std::string& dir, std::string_view name) { return (fs::path(dir) / name).string(); }

// The demo users and clients: etc/demo under the working directory, else
// under the checkout that holds this binary (build/<preset>/radiusward).
std::optional<std::string> demo_file(const std::string& binary, std::string_view name) {
  const fs::path relative = fs::path("etc") / "demo" / name;
  for (const fs::path& root : {fs::current_path(), fs::path(binary).parent_path() / ".." / ".."}) {
    std::error_code error;
    if (fs::is_regular_file(root / relative, error)) return absolute((root / relative).string());
  }
  return std::nullopt;
}

Result<deployment::MemberTable, Refusal> existing_members(const std::string& dir) {
  deployment::MemberTable table;
  for (int id = 1; id <= kMemberCount; ++id) {
    const std::string path = path_in(dir, deployment::member_config_name(id));
    auto text = io::read_text_file(path);
    if (!text) return fail(Refusal{text.error().to_string(), kExitRuntimeFailure});
    auto summary = deployment::read_member_summary(*text, path);
    if (!summary) return fail(Refusal{summary.error().to_string()});
    if (summary->id != id)
      return fail(Refusal{fmt::format("{}: id is {}, expected {}", path, summary->id, id)});
    table[id - 1] = {.id = id, .raft_port = summary->raft_port, .submission_port = summary->submission_port};
  }
  return table;
}

// The member table: read back when the configs exist (their raft addresses
// are in the raft log and must not change), else generated on free ports.
Result<deployment::MemberTable, Refusal> member_configs(const DevCommand& command, const std::string& dir) {
  int present = 0;
  for (int id = 1; id <= kMemberCount; ++id)
    present += fs::exists(path_in(dir, deployment::member_config_name(id)));
  if (present == kMemberCount) {
    if (command.member_port_base) {
      std::fprintf(stderr,
                   "radiusward dev: --member-port-base ignored: %s already holds the member configs\n",
                   dir.c_str());
    }
    return existing_members(dir);
  }
  if (present != 0) {
    return fail(
        Refusal{fmt::format("{} holds some member configs but not all three: restore them or use "
                            "another --dir",
                            dir)});
  }
  auto ports = io::free_tcp_ports(2 * kMemberCount, command.member_port_base);
  if (!ports) return fail(Refusal{ports.error().to_string(), kExitRuntimeFailure});
  std::array<std::uint16_t, 2 * kMemberCount> chosen{};
  std::copy(ports->begin(), ports->end(), chosen.begin());
  const deployment::MemberTable table = deployment::member_table(chosen);
  for (int id = 1; id <= kMemberCount; ++id) {
    const std::string path = path_in(dir, deployment::member_config_name(id));
    if (auto written = io::replace_text_file(path, deployment::member_config_text(table, id)); !written) {
      return fail(Refusal{written.error().to_string(), kExitRuntimeFailure});
    }
  }
  return table;
}

struct GatewayFile {
  std::string path{};                          // What the gateway runs with.
  std::optional<std::uint16_t> radsec_port{};  // With --radsec-clients.
  deployment::GatewaySettings settings{};
  std::string secret{};
  bool with_accounting = true;
};

// Where radiusward dev writes the EAP test certificates, and their names.
constexpr std::string_view kEapCertificatesDir = "eap-certs";
constexpr std::string_view kEapServerName = "eap-server";
constexpr std::string_view kEapClientName = "eap-client";

// eapol_test configs for the test certificates: EAP-TLS with the client
// certificate, PEAP and EAP-TTLS with alice of the demo users file.
Result<void, io::SystemError> write_eapol_test_configs(const std::string& eap_dir) {
  const io::IdentityFiles client = io::identity_files(eap_dir, io::gateway_common_name(kEapClientName));
  const std::string ca = io::ca_cert_file(eap_dir);
  const std::string tls = fmt::format(
      "network={{\n    key_mgmt=IEEE8021X\n    eap=TLS\n    identity=\"{}\"\n    ca_cert=\"{}\"\n"
      "    client_cert=\"{}\"\n    private_key=\"{}\"\n    eapol_flags=0\n}}\n",
      io::gateway_common_name(kEapClientName), ca, client.cert, client.key);
  const std::string tunnel =
      "network={{\n    key_mgmt=IEEE8021X\n    eap={}\n    identity=\"alice\"\n"
      "    anonymous_identity=\"anonymous\"\n    password=\"wonderland\"\n    ca_cert=\"{}\"\n"
      "    phase2=\"auth={}\"\n    eapol_flags=0\n}}\n";
  for (const auto& [name, text] :
       {std::pair{"eapol-tls.conf", tls},
        std::pair{"eapol-peap.conf", fmt::format(fmt::runtime(tunnel), "PEAP", ca, "MSCHAPV2")},
        std::pair{"eapol-ttls.conf", fmt::format(fmt::runtime(tunnel), "TTLS", ca, "PAP")}}) {
    if (auto written = io::replace_text_file(eap_dir + "/" + name, text); !written)
      return fail(written.error());
  }
  return {};
}

// What the banner says of EAP: the test certificates and eapol_test lines.
std::string eap_banner(const std::string& eap_dir, const GatewayFile& gateway, bool own_certificates) {
  if (own_certificates) return "  EAP-TLS, PEAP and EAP-TTLS with the --tls-* certificates\n";
  const std::string server =
      fmt::format("-a 127.0.0.1 -p {} -s {}", gateway.settings.auth_port, gateway.secret);
  std::string text = fmt::format(
      "\nEAP-TLS, PEAP and EAP-TTLS with test certificates in {0}:\n"
      "  CA ca.pem, server {1}.pem, client {2}.pem and {2}.key, CRL crl.pem\n"
      "  (a gateway.yaml written by an earlier run keeps its own eap: and tls: sections)\n",
      eap_dir, io::gateway_common_name(kEapServerName), io::gateway_common_name(kEapClientName));
  for (const std::string_view conf : {"eapol-tls.conf", "eapol-peap.conf", "eapol-ttls.conf"}) {
    text += fmt::format("  eapol_test -c {}/{} {} -N61:d:15\n", eap_dir, conf, server);
  }
  return text;
}

Result<std::string, Refusal> gateway_text(const DevCommand& command, const std::string& dir,
                                          const std::string& binary, const deployment::MemberTable& members) {
  const deployment::GatewayOverrides overrides{
      .users_file = command.users_file ? std::optional(absolute(*command.users_file)) : std::nullopt,
      .clients_file = command.clients_file ? std::optional(absolute(*command.clients_file)) : std::nullopt,
      .auth_port = command.auth_port,
      .acct_port = command.acct_port,
      .policy_file = command.policy_file ? std::optional(absolute(*command.policy_file)) : std::nullopt};
  const std::string path = path_in(dir, deployment::kGatewayConfigName);
  if (fs::exists(path)) {
    auto text = io::read_text_file(path);
    if (!text) return fail(Refusal{text.error().to_string(), kExitRuntimeFailure});
    return deployment::apply_gateway_overrides(*text, overrides);
  }
  deployment::GatewaySettings settings{.users_file = overrides.users_file.value_or(""),
                                       .clients_file = overrides.clients_file.value_or(""),
                                       .auth_port = overrides.auth_port.value_or(1812),
                                       .acct_port = overrides.acct_port.value_or(1813)};
  // EAP-TLS, PEAP and EAP-TTLS from the test certificates run_dev made
  // (--tls-* flags replace them).
  const std::string eap_dir = path_in(dir, kEapCertificatesDir);
  settings.tls_cert = io::identity_files(eap_dir, io::gateway_common_name(kEapServerName)).cert;
  settings.tls_key = io::identity_files(eap_dir, io::gateway_common_name(kEapServerName)).key;
  settings.tls_ca = io::ca_cert_file(eap_dir);
  settings.tls_crl = io::crl_file(eap_dir);
  for (auto [file, name, flag] : {std::tuple{&settings.users_file, "users", "--users"},
                                  std::tuple{&settings.clients_file, "clients.conf", "--clients"}}) {
    if (!file->empty()) continue;
    std::optional<std::string> demo = demo_file(binary, name);
    if (!demo)
      return fail(
          Refusal{fmt::format("no etc/demo/{} found here or beside {}: give {} FILE", name, binary, flag)});
    *file = *demo;
  }
  return deployment::apply_gateway_overrides(
      deployment::gateway_config_text(settings, members, /*with_accounting=*/true),
      deployment::GatewayOverrides{.policy_file = overrides.policy_file});
}

// Checks gateway.yaml as the gateway will, files included, and writes it.
Result<GatewayFile, Refusal> gateway_config(const DevCommand& command, const std::string& dir,
                                            const std::string& binary,
                                            const deployment::MemberTable& members) {
  auto text = gateway_text(command, dir, binary, members);
  if (!text) return fail(text.error());
  GatewayFile file{.path = path_in(dir, deployment::kGatewayConfigName)};
  auto parsed = config::parse_gateway_config(*text, file.path);
  const auto refuse_all = [](const config::ConfigErrors& errors) {
    std::string message;
    for (const config::ConfigError& error : errors)
      message += (message.empty() ? "" : "\n") + error.to_string();
    return Refusal{message};
  };
  if (!parsed) return fail(refuse_all(parsed.error()));
  // The TLS and RadSec flags, checked as the gateway will apply them.
  auto flagged = config::apply_overrides(*parsed, command.tls_flags);
  if (!flagged) return fail(refuse_all(flagged.error()));
  if (auto files = load_referenced_files(*flagged); !files) return fail(refuse_all(files.error()));
  if (flagged->tls) {
    if (auto tls = gateway_tls_context(*flagged->tls); !tls) return fail(refuse_all({tls.error()}));
  }
  if (flagged->radsec) file.radsec_port = flagged->radsec->port;
  auto settings = deployment::read_gateway_settings(*text, file.path);
  if (!settings) return fail(Refusal{settings.error().to_string()});
  file.settings = *settings;
  file.settings.users_file = parsed->users_file.path;
  file.settings.clients_file = parsed->clients_file.path;
  auto clients = config::load_clients_file(parsed->clients_file.path);
  file.secret = clients ? deployment::loopback_secret(clients->clients).value_or("SECRET") : "SECRET";
  if (auto written = io::replace_text_file(file.path, *text); !written) {
    return fail(Refusal{written.error().to_string(), kExitRuntimeFailure});
  }
  return file;
}

std::string own_binary() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? std::string("/proc/self/exe") : self.string();
}

// Once a member names a leader, every member config still saying
// `bootstrap: true` is rewritten to false (deployment::without_bootstrap).
class BootstrapWatch {
 public:
  explicit BootstrapWatch(std::string dir) : dir_(std::move(dir)) {}

  void on_tick() {
    if (done_) return;
    std::optional<int> reporter;
    for (int id = 1; id <= kMemberCount && !reporter; ++id) {
      const std::string socket = io::admin_socket_path(dir_, deployment::member_name(id));
      auto reply = io::admin_request(socket, "GET", "/status", {}, Duration::milliseconds(300));
      if (reply && reply->status == 200 && deployment::status_names_leader(reply->body)) reporter = id;
    }
    if (!reporter) return;
    done_ = true;
    for (int id = 1; id <= kMemberCount; ++id) {
      const std::string path = path_in(dir_, deployment::member_config_name(id));
      auto text = io::read_text_file(path);
      if (!text) continue;
      const std::string updated = deployment::without_bootstrap(*text);
      if (updated == *text) continue;
      if (auto written = io::replace_text_file(path, updated); !written) {
        std::fprintf(stderr, "radiusward dev: %s\n", written.error().to_string().c_str());
        done_ = false;
      }
    }
    std::fprintf(stderr,
                 "radiusward dev: the cluster has formed (member-%d names a leader): member configs now say "
                 "bootstrap: false\n",
                 *reporter);
  }

 private:
  std::string dir_;
  bool done_ = false;
};

bool any_bootstrap(const std::string& dir) {
  for (int id = 1; id <= kMemberCount; ++id) {
    auto text = io::read_text_file(path_in(dir, deployment::member_config_name(id)));
    if (!text) continue;
    auto summary = deployment::read_member_summary(*text, "");
    if (summary && summary->bootstrap) return true;
  }
  return false;
}

// The gateway's flags that dev passes on: --tls-*, --radsec-* and
// --audit-log, paths absolute.
std::vector<std::string> gateway_args(const config::GatewayOverrides& flags,
                                      const std::optional<std::string>& audit_log) {
  std::vector<std::string> args;
  if (audit_log) {
    args.push_back("--audit-log");
    args.push_back(absolute(*audit_log));
  }
  for (auto [flag, value] : {std::pair{"--tls-cert", &flags.tls_cert}, std::pair{"--tls-key", &flags.tls_key},
                             std::pair{"--tls-ca", &flags.tls_ca}, std::pair{"--tls-crl", &flags.tls_crl},
                             std::pair{"--radsec-clients", &flags.radsec_clients}}) {
    if (!*value) continue;
    args.push_back(flag);
    args.push_back(absolute(**value));
  }
  if (flags.radsec_port) {
    args.push_back("--radsec-port");
    args.push_back(std::to_string(*flags.radsec_port));
  }
  return args;
}

std::vector<dev_shell::ChildSpec> children(const std::string& dir, const std::string& binary,
                                           const std::string& gateway_path,
                                           const std::vector<std::string>& gateway_args) {
  std::vector<dev_shell::ChildSpec> specs;
  for (int id = 1; id <= kMemberCount; ++id) {
    specs.push_back(dev_shell::ChildSpec{
        .name = deployment::member_name(id),
        .argv = {binary, "member", "--config", path_in(dir, deployment::member_config_name(id))},
        .working_dir = dir});
  }
  std::vector<std::string> argv{binary, "gateway", "--config", gateway_path};
  argv.insert(argv.end(), gateway_args.begin(), gateway_args.end());
  specs.push_back(dev_shell::ChildSpec{.name = "gateway", .argv = std::move(argv), .working_dir = dir});
  return specs;
}

}  // namespace

CLI::App* add_dev_command(CLI::App& app, DevCommand& command) {
  CLI::App* dev = app.add_subcommand(
      "dev",
      "Run a local deployment on loopback: three members and a gateway, supervised (docs/operations.md)");
  dev->add_option("--dir", command.dir, "Deployment folder: configs, raft data, admin sockets")
      ->type_name("DIR")
      ->capture_default_str();
  dev->add_option("--users", command.users_file, "Users file (default etc/demo/users)")->type_name("FILE");
  dev->add_option("--policy", command.policy_file, "Gateway authorization policy file (docs/policy.md)")
      ->type_name("FILE");
  dev->add_option("--clients", command.clients_file, "clients.conf (default etc/demo/clients.conf)")
      ->type_name("FILE");
  dev->add_option("--auth-port", command.auth_port, "Gateway authentication port (default 1812)")
      ->type_name("PORT");
  dev->add_option("--acct-port", command.acct_port, "Gateway accounting port (default 1813)")
      ->type_name("PORT");
  dev->add_option("--audit-log", command.audit_log,
                  "The gateway's audit log of decisions (docs/operations.md \"Audit log\")")
      ->type_name("FILE");
  dev->add_option("--binary", command.binary, "radiusward binary the processes run (default: this one)")
      ->type_name("PATH");
  dev->add_option("--member-port-base", command.member_port_base,
                  "First TCP port to try for the members' raft and submission ports, when generating "
                  "(default: the kernel's choice)")
      ->type_name("PORT");
  add_tls_flags(*dev, command.tls_flags);
  dev->add_option("--restart-delay-ms", command.restart_delay_ms,
                  "Delay before restarting a process that exited")
      ->type_name("MS")
      ->check(CLI::Range(1, 600'000))
      ->capture_default_str();
  dev->add_option("--stop-timeout-ms", command.stop_timeout_ms, "How long a stop waits before SIGKILL")
      ->type_name("MS")
      ->check(CLI::Range(1, 600'000))
      ->capture_default_str();
  return dev;
}

int run_dev(const DevCommand& command) {
  const std::string dir = absolute(command.dir);
  const std::string binary = command.binary ? absolute(*command.binary) : own_binary();
  // The kernel's sun_path holds 107 bytes and a NUL (unix(7)); a deeper
  // folder would leave every process without its admin socket.
  const std::string longest_socket = io::admin_socket_path(dir, deployment::member_name(kMemberCount));
  if (longest_socket.size() > 107) {
    std::fprintf(stderr,
                 "radiusward dev: --dir %s is too deep: admin sockets such as %s would exceed 107 bytes\n",
                 dir.c_str(), longest_socket.c_str());
    return kExitConfigError;
  }
  std::error_code error;
  fs::create_directories(fs::path(dir) / "admin", error);
  if (error) {
    std::fprintf(stderr, "radiusward dev: cannot create %s/admin: %s\n", dir.c_str(),
                 error.message().c_str());
    return kExitRuntimeFailure;
  }
  const auto refused = [](const Refusal& refusal) {
    std::fprintf(stderr, "radiusward dev: %s\n", refusal.message.c_str());
    return refusal.status;
  };
  // The cluster certificates first: the configs written next name them. Made
  // once, reused on later runs (write_cluster_certificates keeps existing files).
  auto certificates = io::write_cluster_certificates(
      io::ClusterCertificatesRequest{.dir = path_in(dir, deployment::kCertificatesDir),
                                     .members = {1, 2, 3},
                                     .gateways = {std::string(deployment::kGatewayName)}});
  if (!certificates) return refused(Refusal{certificates.error().to_string(), kExitRuntimeFailure});
  // The EAP test certificates: a CA of their own, the server's, a client's
  // (eapol_test's) and a CRL; kept on later runs like the cluster's.
  const std::string eap_dir = path_in(dir, kEapCertificatesDir);
  auto eap_certificates = io::write_cluster_certificates(io::ClusterCertificatesRequest{
      .dir = eap_dir, .gateways = {std::string(kEapServerName), std::string(kEapClientName)}});
  if (!eap_certificates) return refused(Refusal{eap_certificates.error().to_string(), kExitRuntimeFailure});
  if (auto written = write_eapol_test_configs(eap_dir); !written) {
    return refused(Refusal{written.error().to_string(), kExitRuntimeFailure});
  }
  auto members = member_configs(command, dir);
  if (!members) return refused(members.error());
  auto gateway = gateway_config(command, dir, binary, *members);
  if (!gateway) return refused(gateway.error());
  std::fputs(deployment::banner_text(deployment::Banner{.dir = dir,
                                                        .binary = binary,
                                                        .members = *members,
                                                        .gateway = gateway->settings,
                                                        .secret = gateway->secret,
                                                        .with_accounting = gateway->with_accounting})
                 .c_str(),
             stdout);
  if (gateway->radsec_port) {
    std::printf("  RadSec (TLS over TCP) on the gateway's listen addresses, port %u\n",
                *gateway->radsec_port);
  }
  std::fputs(eap_banner(eap_dir, *gateway, command.tls_flags.tls_cert.has_value()).c_str(), stdout);
  std::fflush(stdout);

  const Duration restart_delay = Duration::milliseconds(command.restart_delay_ms);
  auto supervisor = dev_shell::ProcessSupervisor::create(
      dev_shell::SupervisorOptions{.restart = {.delay = restart_delay,
                                               .delay_max = std::max(restart_delay, Duration::seconds(30)),
                                               .stable_after = Duration::seconds(10)},
                                   .stop_timeout = Duration::milliseconds(command.stop_timeout_ms)});
  if (!supervisor) {
    std::fprintf(stderr, "radiusward dev: %s\n", supervisor.error().to_string().c_str());
    return kExitRuntimeFailure;
  }
  BootstrapWatch watch(dir);
  const bool watch_bootstrap = any_bootstrap(dir);
  const std::string reason =
      (*supervisor)
          ->run(
              children(dir, binary, gateway->path, gateway_args(command.tls_flags, command.audit_log)),
              [](const dev_shell::ChildEvent&) {},
              [&] {
                if (watch_bootstrap) watch.on_tick();
              });
  std::fprintf(stderr, "radiusward dev: stopped (%s)\n", reason.c_str());
  return kExitOk;
}

}  // namespace rw::app
