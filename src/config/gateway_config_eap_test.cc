// Tests of the gateway config's eap: section: defaults, every key, errors at
// their positions, the flag-only quick start, and that a change needs a restart;
// eap.forward likewise, and that moving its lines is no change.
#include <gtest/gtest.h>

#include "config/gateway_config.h"
#include "config/gateway_reload.h"

namespace rw::config {
namespace {

constexpr std::string_view kMinimal =
    "users_file: users\n"
    "clients_file: clients.conf\n";

std::vector<std::string> parse_errors(std::string_view text) {
  auto result = parse_gateway_config(text, "etc/gw.yaml");
  EXPECT_FALSE(result.has_value());
  std::vector<std::string> out;
  if (!result) {
    for (const ConfigError& error : result.error()) out.push_back(error.to_string());
  }
  return out;
}

TEST(ParseGatewayConfigEap, Md5IsOffByDefaultInAConfigFile) {
  auto config = parse_gateway_config(kMinimal, "gw.yaml");
  ASSERT_TRUE(config.has_value());
  EXPECT_FALSE(config->eap.md5);
  EXPECT_EQ(config->eap.methods, std::vector<std::string>{"md5"});
  EXPECT_EQ(config->eap.conversations_max, 16'384u);
  EXPECT_EQ(config->eap.idle_timeout, Duration::seconds(30));
  EXPECT_EQ(config->eap.rounds_max, 50u);
  EXPECT_FALSE(config->eap.gateway_id.has_value());
}

TEST(ParseGatewayConfigEap, ReadsEveryKey) {
  auto config = parse_gateway_config(std::string(kMinimal) +
                                         "eap:\n"
                                         "  methods: [md5]\n"
                                         "  md5: true\n"
                                         "  conversations_max: 1000\n"
                                         "  idle_timeout_s: 20\n"
                                         "  rounds_max: 10\n"
                                         "  gateway_id: 4000000000\n",
                                     "gw.yaml");
  ASSERT_TRUE(config.has_value()) << config.error()[0].to_string();
  EXPECT_TRUE(config->eap.md5);
  EXPECT_EQ(config->eap.conversations_max, 1000u);
  EXPECT_EQ(config->eap.idle_timeout, Duration::seconds(20));
  EXPECT_EQ(config->eap.rounds_max, 10u);
  EXPECT_EQ(config->eap.gateway_id, 4'000'000'000u);
  EXPECT_EQ(config->eap.where.line, 3);
}

TEST(ParseGatewayConfigEap, RefusesBadValuesAtTheirPosition) {
  EXPECT_EQ(parse_errors(std::string(kMinimal) + "eap:\n"
                                                 "  methods: [md5, tls-ng, md5]\n"
                                                 "  md5: sometimes\n"
                                                 "  conversations_max: 0\n"
                                                 "  idle_timeout_s: 301\n"
                                                 "  rounds_max: 2\n"
                                                 "  gateway_id: 0\n"
                                                 "  colour: blue\n"),
            (std::vector<std::string>{
                "etc/gw.yaml:4:18: unknown EAP method 'tls-ng' (known: tls, peap, ttls, md5)",
                "etc/gw.yaml:4:26: EAP method 'md5' is listed twice",
                "etc/gw.yaml:5:8: expected true or false, got 'sometimes'",
                "etc/gw.yaml:6:22: expected an integer between 1 and 16777215, got '0'",
                "etc/gw.yaml:7:19: expected an integer between 1 and 300, got '301'",
                "etc/gw.yaml:8:15: expected an integer between 3 and 1000, got '2'",
                "etc/gw.yaml:9:15: expected an integer between 1 and 4294967295, got '0'",
                "etc/gw.yaml:10:3: unknown key 'eap.colour'",
            }));
  EXPECT_EQ(parse_errors(std::string(kMinimal) + "eap:\n  methods: []\n"),
            std::vector<std::string>{"etc/gw.yaml:4:12: eap.methods needs at least one method"});
  EXPECT_EQ(parse_errors(std::string(kMinimal) + "eap:\n  methods: []\n  md5: true\n"),
            (std::vector<std::string>{"etc/gw.yaml:4:12: eap.methods needs at least one method",
                                      "etc/gw.yaml:4:3: eap.md5 is true but eap.methods does not list md5"}));
  EXPECT_EQ(parse_errors(std::string(kMinimal) + "eap: on\n"),
            std::vector<std::string>{"etc/gw.yaml:3:6: expected a mapping with 'md5', 'methods' and bounds"});
}

TEST(ParseGatewayConfigEap, ReadsTheTlsMethodsAndTheirOptions) {
  auto config = parse_gateway_config(std::string(kMinimal) +
                                         "eap:\n"
                                         "  methods: [peap, tls, ttls]\n"
                                         "  tls_fragment_octets: 1400\n"
                                         "  tls_min_version: \"1.3\"\n"
                                         "  tls_max_version: \"1.3\"\n"
                                         "  peap_crypto_binding: required\n"
                                         "  ttls_inner_methods: [mschapv2]\n"
                                         "  pool_threads: 4\n"
                                         "  pool_queue_max: 1000\n"
                                         "tls: {ca: ca.pem, cert: server.pem, key: server.key}\n",
                                     "gw.yaml");
  ASSERT_TRUE(config.has_value()) << config.error()[0].to_string();
  EXPECT_EQ(config->eap.methods, (std::vector<std::string>{"peap", "tls", "ttls"}));
  EXPECT_EQ(config->eap.tls_fragment_octets, 1400u);
  EXPECT_EQ(config->eap.tls_min_version, EapTlsVersion::k1_3);
  EXPECT_EQ(config->eap.tls_max_version, EapTlsVersion::k1_3);
  EXPECT_EQ(config->eap.peap_crypto_binding, EapPeapCryptoBinding::kRequired);
  EXPECT_FALSE(config->eap.ttls_pap);
  EXPECT_TRUE(config->eap.ttls_mschapv2);
  EXPECT_EQ(config->eap.pool_threads, 4u);
  EXPECT_EQ(config->eap.pool_queue_max, 1000u);
  auto defaults = parse_gateway_config(kMinimal, "gw.yaml");
  ASSERT_TRUE(defaults.has_value());
  EXPECT_EQ(defaults->eap.tls_fragment_octets, 1000u);
  EXPECT_EQ(defaults->eap.tls_min_version, EapTlsVersion::k1_2);
  EXPECT_EQ(defaults->eap.tls_max_version, EapTlsVersion::k1_3);
  EXPECT_EQ(defaults->eap.peap_crypto_binding, EapPeapCryptoBinding::kOptional);
  EXPECT_TRUE(defaults->eap.ttls_pap && defaults->eap.ttls_mschapv2);
  EXPECT_EQ(defaults->eap.pool_threads, 2u);
  EXPECT_EQ(defaults->eap.pool_queue_max, 256u);
}

TEST(ParseGatewayConfigEap, TheGatewaysTlsSectionTakesACaFolderTheClustersDoNot) {
  auto config = parse_gateway_config(
      std::string(kMinimal) + "tls: {ca: ca.pem, cert: server.pem, key: server.key, ca_path: cas}\n",
      "gw.yaml");
  ASSERT_TRUE(config.has_value()) << config.error()[0].to_string();
  ASSERT_TRUE(config->tls && config->tls->ca_path);
  EXPECT_TRUE(config->tls->ca_path->path.ends_with("cas")) << config->tls->ca_path->path;
  const auto errors = parse_errors(std::string(kMinimal) +
                                   "accounting:\n"
                                   "  members: [{id: 1, address: \"127.0.0.1:1813\"}]\n"
                                   "  tls: {ca: ca.pem, cert: c.pem, key: c.key, ca_path: cas}\n");
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors[0].find("ca_path"), std::string::npos) << errors[0];
}

TEST(ParseGatewayConfigEap, ReadsResumptionAndOcsp) {
  auto config = parse_gateway_config(std::string(kMinimal) +
                                         "eap:\n"
                                         "  methods: [tls]\n"
                                         "  tls_resumption_sessions: 4096\n"
                                         "  tls_resumption_lifetime_s: 600\n"
                                         "  ocsp:\n"
                                         "    responder: http://ocsp.example.org:8080/\n"
                                         "    required: true\n"
                                         "    timeout_ms: 500\n"
                                         "tls: {ca: ca.pem, cert: server.pem, key: server.key}\n",
                                     "gw.yaml");
  ASSERT_TRUE(config.has_value()) << config.error()[0].to_string();
  EXPECT_EQ(config->eap.tls_resumption_sessions, 4096u);
  EXPECT_EQ(config->eap.tls_resumption_lifetime, Duration::seconds(600));
  ASSERT_TRUE(config->eap.ocsp.has_value());
  EXPECT_EQ(config->eap.ocsp->responder, std::optional<std::string>("http://ocsp.example.org:8080/"));
  EXPECT_TRUE(config->eap.ocsp->required);
  EXPECT_EQ(config->eap.ocsp->timeout, Duration::milliseconds(500));
  auto defaults = parse_gateway_config(kMinimal, "gw.yaml");
  ASSERT_TRUE(defaults.has_value());
  EXPECT_EQ(defaults->eap.tls_resumption_sessions, 0u);
  EXPECT_FALSE(defaults->eap.ocsp.has_value());
}

TEST(ParseGatewayConfigEap, RefusesBadResumptionAndOcspAtTheirPosition) {
  EXPECT_EQ(
      parse_errors(std::string(kMinimal) + "eap:\n"
                                           "  tls_resumption_sessions: -1\n"
                                           "  tls_resumption_lifetime_s: 0\n"
                                           "  ocsp:\n"
                                           "    responder: https://ocsp.example.org/\n"
                                           "    required: maybe\n"
                                           "    timeout_ms: 10\n"
                                           "    refresh: 1\n"),
      (std::vector<std::string>{
          "etc/gw.yaml:4:28: expected an integer between 0 and 1000000, got '-1'",
          "etc/gw.yaml:5:30: expected an integer between 1 and 86400, got '0'",
          "etc/gw.yaml:7:16: eap.ocsp.responder 'https://ocsp.example.org/' is not an http:// URL (OCSP "
          "answers are signed; https is not used)",
          "etc/gw.yaml:8:15: expected true or false, got 'maybe'",
          "etc/gw.yaml:9:17: expected an integer between 50 and 30000, got '10'",
          "etc/gw.yaml:10:5: unknown key 'eap.ocsp.refresh'",
      }));
}

TEST(ParseGatewayConfigEap, RefusesBadTlsOptionsAtTheirPosition) {
  EXPECT_EQ(
      parse_errors(std::string(kMinimal) + "eap:\n"
                                           "  methods: [tls]\n"
                                           "  tls_fragment_octets: 63\n"
                                           "  tls_min_version: \"1.3\"\n"
                                           "  tls_max_version: \"1.2\"\n"
                                           "  peap_crypto_binding: maybe\n"
                                           "  ttls_inner_methods: [pap, chap, pap]\n"
                                           "  pool_threads: 0\n"
                                           "  pool_queue_max: 65537\n"),
      (std::vector<std::string>{
          "etc/gw.yaml:5:24: expected an integer between 64 and 3000, got '63'",
          "etc/gw.yaml:8:24: expected off, optional or required, got 'maybe'",
          "etc/gw.yaml:9:29: expected an inner method: pap or mschapv2, got 'chap'",
          "etc/gw.yaml:9:35: inner method 'pap' is listed twice",
          "etc/gw.yaml:10:17: expected an integer between 1 and 64, got '0'",
          "etc/gw.yaml:11:19: expected an integer between 1 and 65536, got '65537'",
          "etc/gw.yaml:7:3: eap.tls_min_version is above eap.tls_max_version",
          "etc/gw.yaml:4:3: eap.methods lists tls but there is no 'tls' section (the server certificate "
          "and key, and the CA of the client certificates)",
      }));
}

TEST(QuickStartGatewayConfig, TheTlsFlagsServeTheTlsMethods) {
  GatewayOverrides flags{.users_file = "users", .clients_file = "clients.conf"};
  auto md5_only = apply_overrides(quick_start_gateway_config(), flags);
  ASSERT_TRUE(md5_only.has_value());
  EXPECT_EQ(md5_only->eap.methods, std::vector<std::string>{"md5"});
  flags.tls_cert = "server.pem";
  flags.tls_key = "server.key";
  flags.tls_ca = "ca.pem";
  auto all = apply_overrides(quick_start_gateway_config(), flags);
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->eap.methods, (std::vector<std::string>{"tls", "peap", "ttls", "md5"}));
  EXPECT_TRUE(all->eap.md5);
  // A config file says for itself what it serves.
  auto file = parse_gateway_config(std::string(kMinimal) + "eap: {md5: true}\n", "gw.yaml");
  ASSERT_TRUE(file.has_value());
  auto flagged = apply_overrides(*file, flags);
  ASSERT_TRUE(flagged.has_value());
  EXPECT_EQ(flagged->eap.methods, std::vector<std::string>{"md5"});
}

TEST(QuickStartGatewayConfig, TurnsEapMd5On) {
  GatewayOverrides flags;
  flags.users_file = "users";
  flags.clients_file = "clients.conf";
  auto config = apply_overrides(quick_start_gateway_config(), flags);
  ASSERT_TRUE(config.has_value());
  EXPECT_TRUE(config->eap.md5);
  EXPECT_FALSE(default_gateway_config().eap.md5);
}

TEST(GatewayRestartChangesEap, TheEapSectionNeedsARestart) {
  auto running = parse_gateway_config(std::string(kMinimal) + "eap:\n  md5: true\n", "gw.yaml");
  auto moved = parse_gateway_config("# moved\n" + std::string(kMinimal) + "eap:\n  md5: true\n", "gw.yaml");
  auto changed = parse_gateway_config(std::string(kMinimal) + "eap:\n  md5: false\n", "gw.yaml");
  ASSERT_TRUE(running && moved && changed);
  EXPECT_TRUE(gateway_restart_changes(*running, *moved).empty());
  const ConfigErrors errors = gateway_restart_changes(*running, *changed);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].to_string(),
            "gw.yaml:3:1: the eap section changed: needs a restart (nothing was reloaded)");
}

// eap.forward (docs/design.md "EAP across several gateways").
constexpr std::string_view kForward =
    "eap:\n"
    "  gateway_id: 1\n"
    "  forward:\n"
    "    listen: 10.0.0.1:1820\n"
    "    key_file: eap-forward.key\n"
    "    timeout_ms: 500\n"
    "    in_flight_max: 64\n"
    "    peers:\n"
    "      - {id: 2, address: 10.0.0.2:1820}\n"
    "      - {id: 3, address: \"[2001:db8::3]:1820\"}\n";

TEST(ParseGatewayConfigEapForward, ReadsEveryKey) {
  auto config = parse_gateway_config(std::string(kMinimal) + std::string(kForward), "etc/gw.yaml");
  ASSERT_TRUE(config.has_value());
  ASSERT_TRUE(config->eap.forward.has_value());
  const EapForwardConfig& forward = *config->eap.forward;
  EXPECT_EQ(forward.listen.text, "10.0.0.1:1820");
  EXPECT_EQ(forward.key_file.path, "etc/eap-forward.key");  // Relative to the config's folder.
  EXPECT_EQ(forward.timeout, Duration::milliseconds(500));
  EXPECT_EQ(forward.in_flight_max, 64u);
  ASSERT_EQ(forward.peers.size(), 2u);
  EXPECT_EQ(forward.peers[0].gateway_id, 2u);
  EXPECT_EQ(forward.peers[0].address.port, 1820);
  EXPECT_TRUE(forward.peers[1].address.is_v6);
  EXPECT_FALSE(default_gateway_config().eap.forward.has_value());
}

TEST(ParseGatewayConfigEapForward, RefusesBadValuesAtTheirPosition) {
  EXPECT_EQ(parse_errors(std::string(kMinimal) + "eap:\n"
                                                 "  forward:\n"
                                                 "    listen: 10.0.0.1:1820\n"
                                                 "    key_file: k\n"
                                                 "    peers: [{id: 2, address: 10.0.0.2:1820}]\n"),
            std::vector<std::string>{
                "etc/gw.yaml:4:3: eap.forward needs eap.gateway_id, which its peers name it by"});
  EXPECT_EQ(parse_errors(std::string(kMinimal) + "eap:\n"
                                                 "  gateway_id: 1\n"
                                                 "  forward:\n"
                                                 "    listen: 10.0.0.1\n"
                                                 "    timeout_ms: 10\n"
                                                 "    in_flight_max: 0\n"
                                                 "    peers:\n"
                                                 "      - {id: 2, address: 10.0.0.2:1820}\n"
                                                 "      - {id: 2, address: 10.0.0.3:1820}\n"
                                                 "      - {id: 4, address: 10.0.0.2:1820}\n"
                                                 "      - {id: 1, address: 10.0.0.5:1820}\n"
                                                 "      - {id: 6}\n"
                                                 "      - 10.0.0.7:1820\n"
                                                 "    colour: blue\n"),
            (std::vector<std::string>{
                "etc/gw.yaml:6:13: expected IPv4:port or [IPv6]:port, got '10.0.0.1'",
                "etc/gw.yaml:7:17: expected an integer between 50 and 10000, got '10'",
                "etc/gw.yaml:8:20: expected an integer between 1 and 65536, got '0'",
                "etc/gw.yaml:11:9: peer id 2 is listed twice",
                "etc/gw.yaml:12:26: peer address '10.0.0.2:1820' is listed twice",
                "etc/gw.yaml:14:9: a peer entry needs 'id' and 'address'",
                "etc/gw.yaml:15:9: expected a peer gateway {id, address}",
                "etc/gw.yaml:16:5: unknown key 'eap.forward.colour'",
                "etc/gw.yaml:6:5: missing required key 'eap.forward.key_file'",
                "etc/gw.yaml:13:9: peer id 1 is this gateway's own eap.gateway_id",
            }));
  EXPECT_EQ(parse_errors(std::string(kMinimal) + "eap:\n  gateway_id: 1\n  forward:\n    peers: []\n"),
            (std::vector<std::string>{"etc/gw.yaml:6:12: eap.forward.peers needs 1 to 64 peers",
                                      "etc/gw.yaml:6:5: missing required key 'eap.forward.listen'",
                                      "etc/gw.yaml:6:5: missing required key 'eap.forward.key_file'"}));
}

TEST(ParseGatewayConfigEapForward, RefusesAWildcardListener) {
  std::string wildcard(kForward);
  wildcard.replace(wildcard.find("10.0.0.1:1820"), 13, "0.0.0.0:1820");
  EXPECT_EQ(
      parse_errors(std::string(kMinimal) + wildcard),
      std::vector<std::string>{"etc/gw.yaml:6:13: eap.forward.listen '0.0.0.0:1820' must be this gateway's "
                               "own address, which its peers expect forwards from, not a wildcard"});
}

TEST(GatewayRestartChangesEapForward, MovedLinesAreNoChangeAndAnotherPeerNeedsARestart) {
  auto running = parse_gateway_config(std::string(kMinimal) + std::string(kForward), "gw.yaml");
  auto moved = parse_gateway_config("# moved\n\n" + std::string(kMinimal) + std::string(kForward), "gw.yaml");
  std::string other(kForward);
  other.replace(other.find("10.0.0.2"), 8, "10.0.0.9");
  auto changed = parse_gateway_config(std::string(kMinimal) + other, "gw.yaml");
  ASSERT_TRUE(running && moved && changed);
  EXPECT_TRUE(gateway_restart_changes(*running, *moved).empty());
  EXPECT_EQ(gateway_restart_changes(*running, *changed).size(), 1u);
}

}  // namespace
}  // namespace rw::config
