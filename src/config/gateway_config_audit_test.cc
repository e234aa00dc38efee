// The gateway's `audit:` section and --audit-log (docs/configuration.md "Keys").
#include <gtest/gtest.h>

#include "config/gateway_config.h"
#include "config/gateway_reload.h"

namespace rw::config {
namespace {

constexpr std::string_view kFiles =
    "users_file: users\n"
    "clients_file: clients.conf\n";

std::string first_error(const Result<GatewayConfig, ConfigErrors>& result) {
  return result ? std::string() : result.error().front().to_string();
}

TEST(GatewayConfigAudit, ReadsEveryKeyWithPathsBesideTheConfig) {
  const std::string text = std::string(kFiles) +
                           "audit:\n"
                           "  path: audit.log\n"
                           "  rotate_bytes: 1048576\n"
                           "  keep: 3\n"
                           "  fsync_interval_ms: 250\n"
                           "  key_file: audit.key\n"
                           "  queue_lines_max: 1024\n";
  auto result = parse_gateway_config(text, "/etc/rw/gateway.yaml");
  ASSERT_TRUE(result) << first_error(result);
  ASSERT_TRUE(result->audit);
  const AuditConfig& audit = *result->audit;
  EXPECT_EQ(audit.path.path, "/etc/rw/audit.log");
  EXPECT_EQ(audit.rotate_bytes, 1048576u);
  EXPECT_EQ(audit.keep, 3u);
  EXPECT_EQ(audit.fsync_interval, Duration::milliseconds(250));
  ASSERT_TRUE(audit.key_file);
  EXPECT_EQ(audit.key_file->path, "/etc/rw/audit.key");
  EXPECT_EQ(audit.queue_lines_max, 1024u);
}

TEST(GatewayConfigAudit, DefaultsAndNoSectionMeansNoLog) {
  auto none = parse_gateway_config(kFiles, "gw.yaml");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->audit);
  auto result =
      parse_gateway_config(std::string(kFiles) + "audit:\n  path: /var/log/rw/audit.log\n", "gw.yaml");
  ASSERT_TRUE(result) << first_error(result);
  EXPECT_EQ(result->audit->rotate_bytes, 64u * 1024 * 1024);
  EXPECT_EQ(result->audit->keep, 10u);
  EXPECT_EQ(result->audit->fsync_interval, Duration::seconds(1));
  EXPECT_FALSE(result->audit->key_file);
  EXPECT_EQ(result->audit->queue_lines_max, 65536u);
}

TEST(GatewayConfigAudit, ErrorsPointAtTheKey) {
  auto result = parse_gateway_config(std::string(kFiles) +
                                         "audit:\n"
                                         "  rotate_bytes: 10\n"
                                         "  colour: red\n",
                                     "gw.yaml");
  ASSERT_FALSE(result);
  std::vector<std::string> errors;
  for (const ConfigError& error : result.error()) errors.push_back(error.to_string());
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0], "gw.yaml:4:17: expected an integer between 65536 and 1099511627776, got '10'");
  EXPECT_EQ(errors[1].rfind("gw.yaml:5:3: ", 0), 0u) << errors[1];
  EXPECT_NE(errors[1].find("colour"), std::string::npos) << errors[1];
  EXPECT_NE(errors[2].find("path"), std::string::npos) << errors[2];
}

TEST(GatewayConfigAudit, FlagTurnsTheLogOnWithDefaults) {
  GatewayOverrides overrides{.users_file = "users", .clients_file = "clients.conf"};
  overrides.audit_log = "audit.log";
  auto result = apply_overrides(default_gateway_config(), overrides);
  ASSERT_TRUE(result) << first_error(result);
  ASSERT_TRUE(result->audit);
  EXPECT_EQ(result->audit->path.path, "audit.log");
  EXPECT_EQ(result->audit->keep, 10u);
}

TEST(GatewayConfigAudit, ChangingTheSectionNeedsARestart) {
  auto running = parse_gateway_config(std::string(kFiles) + "audit:\n  path: a.log\n", "gw.yaml");
  auto next = parse_gateway_config(std::string(kFiles) + "audit:\n  path: b.log\n", "gw.yaml");
  ASSERT_TRUE(running && next);
  const ConfigErrors errors = gateway_restart_changes(*running, *next);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("audit"), std::string::npos);
  EXPECT_TRUE(gateway_restart_changes(*running, *running).empty());
}

}  // namespace
}  // namespace rw::config
