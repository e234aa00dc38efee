// The gateway's `tenants:` list (docs/configuration.md "Tenants").
#include <gtest/gtest.h>

#include <string>

#include "config/gateway_config.h"
#include "config/gateway_reload.h"

namespace rw::config {
namespace {

constexpr std::string_view kFiles =
    "users_file: users\n"
    "clients_file: clients.conf\n";

std::string all_errors(const Result<GatewayConfig, ConfigErrors>& result) {
  std::string text;
  if (result) return text;
  for (const ConfigError& error : result.error()) text += error.to_string() + "\n";
  return text;
}

TEST(GatewayConfigTenants, ReadsEachTenantAndKeepsTheTopLevelAsDefault) {
  const std::string text = std::string(kFiles) +
                           "policy: default-policy.yaml\n"
                           "eap: {md5: true, conversations_max: 100}\n"
                           "tenants:\n"
                           "  - name: acme\n"
                           "    users_file: acme/users\n"
                           "    clients_file: acme/clients.conf\n"
                           "    policy: acme/policy.yaml\n"
                           "    eap: {md5: true, rounds_max: 10}\n"
                           "    tls: {cert: a.pem, key: a.key, ca: a-ca.pem}\n"
                           "    audit: {path: acme.log}\n"
                           "  - name: globex-2\n"
                           "    users_file: globex/users\n"
                           "    clients_file: globex/clients.conf\n";
  auto result = parse_gateway_config(text, "/etc/rw/gateway.yaml");
  ASSERT_TRUE(result) << all_errors(result);
  // The top level is the default tenant, unchanged by the tenants read after it.
  EXPECT_EQ(result->users_file.path, "/etc/rw/users");
  EXPECT_EQ(result->clients_file.path, "/etc/rw/clients.conf");
  ASSERT_TRUE(result->policy_file);
  EXPECT_EQ(result->policy_file->path, "/etc/rw/default-policy.yaml");
  EXPECT_TRUE(result->eap.md5);
  EXPECT_EQ(result->eap.conversations_max, 100u);
  EXPECT_EQ(result->eap.rounds_max, 50u);
  EXPECT_FALSE(result->tls);
  EXPECT_FALSE(result->audit);
  ASSERT_EQ(result->tenants.size(), 2u);
  const TenantConfig& acme = result->tenants[0];
  EXPECT_EQ(acme.name, "acme");
  EXPECT_EQ(acme.users_file.path, "/etc/rw/acme/users");
  EXPECT_EQ(acme.clients_file.path, "/etc/rw/acme/clients.conf");
  ASSERT_TRUE(acme.policy_file);
  EXPECT_EQ(acme.policy_file->path, "/etc/rw/acme/policy.yaml");
  EXPECT_TRUE(acme.eap.md5);
  EXPECT_EQ(acme.eap.rounds_max, 10u);
  ASSERT_TRUE(acme.tls);
  EXPECT_EQ(acme.tls->ca.path, "/etc/rw/a-ca.pem");
  ASSERT_TRUE(acme.audit);
  EXPECT_EQ(acme.audit->path.path, "/etc/rw/acme.log");
  EXPECT_EQ(acme.where.line, 6);
  const TenantConfig& globex = result->tenants[1];
  EXPECT_EQ(globex.name, "globex-2");
  EXPECT_FALSE(globex.policy_file);
  EXPECT_FALSE(globex.eap.md5);
  EXPECT_FALSE(globex.audit);
}

TEST(GatewayConfigTenants, RefusesBadAndRepeatedNamesWithPositions) {
  const std::string text = std::string(kFiles) +
                           "tenants:\n"
                           "  - name: acme\n"
                           "    users_file: u\n"
                           "    clients_file: c\n"
                           "  - name: acme\n"
                           "    users_file: u\n"
                           "    clients_file: c\n"
                           "  - name: Acme_Corp\n"
                           "    users_file: u\n"
                           "    clients_file: c\n"
                           "  - name: default\n"
                           "    users_file: u\n"
                           "    clients_file: c\n"
                           "  - name: " +
                           std::string(33, 'a') +
                           "\n"
                           "    users_file: u\n"
                           "    clients_file: c\n"
                           "  - users_file: u\n";
  const std::string errors = all_errors(parse_gateway_config(text, "gw.yaml"));
  EXPECT_NE(errors.find("gw.yaml:7:11: tenant 'acme' is already named at line 4"), std::string::npos)
      << errors;
  EXPECT_NE(errors.find("gw.yaml:10:11: a tenant name is 1 to 32 of a-z, 0-9 and '-'"), std::string::npos)
      << errors;
  EXPECT_NE(errors.find("gw.yaml:13:11: tenant name 'default' is the top-level keys' tenant"),
            std::string::npos)
      << errors;
  EXPECT_NE(errors.find("gw.yaml:16:11: a tenant name is"), std::string::npos) << errors;
  EXPECT_NE(errors.find("gw.yaml:19:5: missing required key 'tenants.name'"), std::string::npos) << errors;
  EXPECT_NE(errors.find("gw.yaml:19:5: missing required key 'tenants.clients_file'"), std::string::npos)
      << errors;
}

TEST(GatewayConfigTenants, OneWriterPerAuditFile) {
  const std::string text = std::string(kFiles) +
                           "audit: {path: logs/audit.log}\n"
                           "tenants:\n"
                           "  - name: a\n"
                           "    users_file: u\n"
                           "    clients_file: c\n"
                           "    audit: {path: logs/../logs/audit.log}\n"
                           "  - name: b\n"
                           "    users_file: u\n"
                           "    clients_file: c\n"
                           "    audit: {path: b.log}\n"
                           "  - name: c\n"
                           "    users_file: u\n"
                           "    clients_file: c\n"
                           "    audit: {path: b.log}\n";
  const std::string errors = all_errors(parse_gateway_config(text, "gw.yaml"));
  EXPECT_NE(errors.find("gw.yaml:8:13: tenant 'a': audit file 'logs/audit.log' is already the audit "
                        "file at line 3"),
            std::string::npos)
      << errors;
  EXPECT_NE(errors.find("gw.yaml:16:13: tenant 'c': audit file 'b.log' is already the audit file at line 12"),
            std::string::npos)
      << errors;
}

TEST(GatewayConfigTenants, GatewayWideKeysStayAtTheTopLevel) {
  const std::string text = std::string(kFiles) +
                           "tenants:\n"
                           "  - name: a\n"
                           "    users_file: u\n"
                           "    clients_file: c\n"
                           "    eap: {md5: true, gateway_id: 7}\n"
                           "    listen: [127.0.0.1]\n"
                           "    users_stores: [files, sql]\n"
                           "    sql_users: {sqlite: users.db}\n"
                           "    radsec: {clients_file: r.conf, port: 2084}\n";
  const std::string errors = all_errors(parse_gateway_config(text, "gw.yaml"));
  EXPECT_NE(errors.find("gw.yaml:7:22: unknown key 'tenants.eap.gateway_id'"), std::string::npos) << errors;
  EXPECT_NE(errors.find("gw.yaml:8:5: unknown key 'tenants.listen'"), std::string::npos) << errors;
  // A tenant's SQL store is its own.
  EXPECT_EQ(errors.find("sql"), std::string::npos) << errors;
  EXPECT_NE(errors.find("unknown key 'tenants.radsec.port'"), std::string::npos) << errors;
  // A tenant's RadSec clients need the gateway's listener and the tenant's CA.
  EXPECT_NE(errors.find("a tenant's RadSec clients need the gateway's 'radsec' section"), std::string::npos)
      << errors;
  EXPECT_NE(errors.find("a tenant's RadSec clients need the tenant's 'tls' section"), std::string::npos)
      << errors;
}

TEST(GatewayConfigTenants, ATenantHasItsOwnSqlStore) {
  const std::string text = std::string(kFiles) +
                           "tenants:\n"
                           "  - name: a\n"
                           "    users_file: u\n"
                           "    clients_file: c\n"
                           "    users_stores: [sql, files]\n"
                           "    sql_users: {sqlite: a.db, cache_entries_max: 10}\n"
                           "  - name: b\n"
                           "    users_file: u\n"
                           "    clients_file: c\n"
                           "    users_stores: [sql]\n";
  auto result = parse_gateway_config(text, "/etc/rw/gw.yaml");
  ASSERT_FALSE(result);
  EXPECT_EQ(all_errors(result),
            "/etc/rw/gw.yaml:9:5: users_stores lists sql but there is no 'sql_users' section\n");
  auto good = parse_gateway_config(text.substr(0, text.find("  - name: b")), "/etc/rw/gw.yaml");
  ASSERT_TRUE(good) << all_errors(good);
  EXPECT_FALSE(good->sql_users);
  const TenantConfig& a = good->tenants.at(0);
  ASSERT_TRUE(a.sql_users && a.sql_users->sqlite);
  EXPECT_EQ(a.sql_users->sqlite->path, "/etc/rw/a.db");
  EXPECT_EQ(a.sql_users->cache_entries_max, 10u);
  EXPECT_EQ(a.users_stores, (std::vector<UsersStore>{UsersStore::kSql, UsersStore::kFiles}));
}

TEST(GatewayConfigTenants, ReloadNeedsARestartForATenantsAuditOrTls) {
  const std::string base = std::string(kFiles) +
                           "tenants:\n"
                           "  - name: a\n"
                           "    users_file: u\n"
                           "    clients_file: c\n";
  auto running = parse_gateway_config(base + "    audit: {path: a.log}\n", "gw.yaml");
  ASSERT_TRUE(running) << all_errors(running);
  // Its users and clients files reload.
  auto same = parse_gateway_config(base + "    audit: {path: a.log}\n", "gw.yaml");
  ASSERT_TRUE(same);
  same->tenants[0].users_file.path = "other-users";
  EXPECT_TRUE(gateway_restart_changes(*running, *same).empty());
  auto moved = parse_gateway_config(base + "    audit: {path: b.log}\n", "gw.yaml");
  ASSERT_TRUE(moved);
  const ConfigErrors errors = gateway_restart_changes(*running, *moved);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].to_string(),
            "gw.yaml:4:5: the audit section of tenant 'a' changed: needs a restart (nothing was reloaded)");
  auto removed = parse_gateway_config(std::string(kFiles), "gw.yaml");
  ASSERT_TRUE(removed);
  EXPECT_EQ(gateway_restart_changes(*running, *removed).size(), 1u);
}

}  // namespace
}  // namespace rw::config
