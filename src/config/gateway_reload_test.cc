// Tests of the restart-only keys: a changed value is one error at the key,
// positions alone and reloadable keys are no change.
#include "config/gateway_reload.h"

#include <gtest/gtest.h>

#include <string>

namespace rw::config {
namespace {

GatewayConfig parse(const std::string& text) {
  auto result = parse_gateway_config(text, "gw.yaml");
  EXPECT_TRUE(result.has_value()) << (result ? "" : result.error()[0].to_string());
  return result ? *result : GatewayConfig{};
}

std::vector<std::string> changes(const std::string& running, const std::string& next) {
  std::vector<std::string> out;
  for (const ConfigError& error : gateway_restart_changes(parse(running), parse(next)))
    out.push_back(error.to_string());
  return out;
}

constexpr std::string_view kBase =
    "listen: [127.0.0.1]\n"
    "workers: 2\n"
    "users_file: users\n"
    "clients_file: clients.conf\n"
    "accounting: {members: [127.0.0.1:7301], insecure_plaintext_cluster: true}\n";

TEST(GatewayRestartChanges, MovedKeysAndReloadableKeysAreNoChange) {
  const std::string moved =
      "# a comment moves every line\n"
      "users_file: other-users\n"
      "clients_file: other-clients.conf\n"
      "mab_default: accept\n"
      "accounting:\n"
      "  insecure_plaintext_cluster: true\n"
      "  members: [127.0.0.1:7301]\n"
      "workers: 2\n"
      "listen: ['127.0.0.1']\n";
  EXPECT_TRUE(changes(std::string(kBase), moved).empty());
}

TEST(GatewayRestartChanges, ChangedKeyIsAnErrorAtItsPosition) {
  std::string next(kBase);
  next.replace(next.find("workers: 2"), 10, "workers: 4");
  EXPECT_EQ(changes(std::string(kBase), next),
            std::vector<std::string>{
                "gw.yaml:2:1: workers changed from 2 to 4: needs a restart (nothing was reloaded)"});
}

TEST(GatewayRestartChanges, EveryChangedKeyIsReported) {
  const std::string next =
      "listen: [127.0.0.2]\n"
      "workers: 2\n"
      "auth_port: 1912\n"
      "users_file: users\n"
      "clients_file: clients.conf\n"
      "accounting: {members: [127.0.0.1:7302], insecure_plaintext_cluster: true}\n"
      "logging: {level: debug}\n";
  const std::vector<std::string> errors = changes(std::string(kBase), next);
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_EQ(
      errors[0],
      "gw.yaml:1:1: listen changed from [127.0.0.1] to [127.0.0.2]: needs a restart (nothing was reloaded)");
  EXPECT_EQ(errors[1],
            "gw.yaml:3:1: auth_port changed from 1812 to 1912: needs a restart (nothing was reloaded)");
  EXPECT_EQ(
      errors[2],
      "gw.yaml:7:1: logging changed from info/text to debug/text: needs a restart (nothing was reloaded)");
  EXPECT_EQ(errors[3], "gw.yaml:6:1: the accounting section changed: needs a restart (nothing was reloaded)");
}

TEST(GatewayRestartChanges, TheAdminApiOverTcpNeedsARestart) {
  const std::string admin =
      "admin_socket: admin.sock\n"
      "admin_token_file: token\n"
      "admin_listen: 127.0.0.1:9100\n";
  std::string moved_port = admin;
  moved_port.replace(moved_port.find("9100"), 4, "9101");
  EXPECT_EQ(
      changes(std::string(kBase) + admin, std::string(kBase) + moved_port),
      std::vector<std::string>{"gw.yaml:8:1: admin_listen changed from 127.0.0.1:9100 to 127.0.0.1:9101: "
                               "needs a restart (nothing was reloaded)"});
  std::string other_token = admin;
  other_token.replace(other_token.find("token\n"), 5, "token2");
  EXPECT_EQ(
      changes(std::string(kBase) + admin, std::string(kBase) + other_token),
      std::vector<std::string>{"gw.yaml:7:1: admin_token_file changed from 'token' to 'token2': needs a "
                               "restart (nothing was reloaded)"});
}

TEST(GatewayRestartChanges, RemovedSectionPointsAtTheFile) {
  const std::string next =
      "listen: [127.0.0.1]\n"
      "workers: 2\n"
      "users_file: users\n"
      "clients_file: clients.conf\n";
  EXPECT_EQ(changes(std::string(kBase), next),
            std::vector<std::string>{
                "gw.yaml: the accounting section changed: needs a restart (nothing was reloaded)"});
}

}  // namespace
}  // namespace rw::config
