// `radiusward certs` (certs_command.h): flags in, io::write_cluster_certificates out.
#include "app/certs_command.h"

#include <cstdio>

#include "app/exit_codes.h"
#include "config/member_config.h"
#include "io/tls_certificates.h"

namespace rw::app {

CLI::App* add_certs_command(CLI::App& app, CertsCommand& command) {
  CLI::App* certs = app.add_subcommand(
      "certs", "Create the cluster CA and member/gateway certificates (kept when they exist)");
  certs->add_option("--dir", command.dir, "Folder of the certificates (created 0700)")
      ->type_name("DIR")
      ->required();
  certs->add_option("--members", command.members, "Certificates member-1 .. member-N")->type_name("N");
  certs->add_option("--gateways", command.gateways, "Gateway names: certificates gateway-NAME")
      ->type_name("NAME,...")
      ->delimiter(',');
  certs->add_option("--revoke", command.revoke, "Common names to revoke in crl.pem (e.g. gateway-old)")
      ->type_name("CN,...")
      ->delimiter(',');
  return certs;
}

int run_certs(const CertsCommand& command) {
  if (command.members < 0 || static_cast<std::uint64_t>(command.members) > config::kMemberIdMax) {
    std::fprintf(stderr, "radiusward certs: --members must be between 0 and %llu\n",
                 static_cast<unsigned long long>(config::kMemberIdMax));
    return kExitConfigError;
  }
  io::ClusterCertificatesRequest request{
      .dir = command.dir, .gateways = command.gateways, .revoke = command.revoke};
  for (int id = 1; id <= command.members; ++id) request.members.push_back(static_cast<std::uint64_t>(id));
  for (const std::string& name : command.gateways) {
    if (!io::valid_gateway_name(name)) {
      std::fprintf(stderr, "radiusward certs: gateway name '%s' is not 1 to 64 of a-z, 0-9 and -\n",
                   name.c_str());
      return kExitConfigError;
    }
  }
  auto written = io::write_cluster_certificates(request);
  if (!written) {
    std::fprintf(stderr, "radiusward certs: %s\n", written.error().to_string().c_str());
    return kExitRuntimeFailure;
  }
  for (const std::string& path : *written) std::printf("wrote %s\n", path.c_str());
  std::printf("%s: CA ca.pem, crl.pem; keys *.key are 0600: copy each to its host only\n",
              command.dir.c_str());
  return kExitOk;
}

}  // namespace rw::app
