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
                "etc/gw.yaml:4:18: unknown EAP method 'tls-ng' (known: md5)",
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
