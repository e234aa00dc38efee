// Tests of the gateway config's eap: section: defaults, every key, errors at
// their positions, the flag-only quick start, and that a change needs a restart.
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

}  // namespace
}  // namespace rw::config
