// Tests of the gateway config's `users_stores` and `sql_users` keys.
#include <gtest/gtest.h>

#include "config/gateway_config.h"

namespace rw::config {
namespace {

constexpr std::string_view kBase = "users_file: users\nclients_file: clients.conf\n";

std::vector<std::string> errors_of(std::string_view text) {
  auto result = parse_gateway_config(text, "gw.yaml");
  EXPECT_FALSE(result.has_value());
  std::vector<std::string> out;
  if (!result)
    for (const ConfigError& error : result.error()) out.push_back(error.to_string());
  return out;
}

TEST(SqlUsersConfig, DefaultsToTheUsersFileOnly) {
  auto config = parse_gateway_config(kBase, "gw.yaml");
  ASSERT_TRUE(config);
  EXPECT_EQ(config->users_stores, std::vector<UsersStore>{UsersStore::kFiles});
  EXPECT_FALSE(config->sql_users);
}

TEST(SqlUsersConfig, ReadsEveryKey) {
  auto config = parse_gateway_config(std::string(kBase) +
                                         "users_stores: [sql, files]\n"
                                         "sql_users:\n"
                                         "  postgresql: host=db dbname=radius\n"
                                         "  read_replica: host=replica dbname=radius\n"
                                         "  connections: 4\n"
                                         "  cache_ttl_s: 30\n"
                                         "  negative_ttl_s: 5\n"
                                         "  cache_entries_max: 1000\n"
                                         "  miss_wait_ms: 50\n",
                                     "/etc/rw/gw.yaml");
  ASSERT_TRUE(config);
  EXPECT_EQ(config->users_stores, (std::vector<UsersStore>{UsersStore::kSql, UsersStore::kFiles}));
  const SqlUsersConfig& sql = *config->sql_users;
  EXPECT_EQ(sql.postgresql, "host=db dbname=radius");
  EXPECT_EQ(sql.read_replica, "host=replica dbname=radius");
  EXPECT_EQ(sql.connections, 4U);
  EXPECT_EQ(sql.cache_ttl, Duration::seconds(30));
  EXPECT_EQ(sql.negative_ttl, Duration::seconds(5));
  EXPECT_EQ(sql.cache_entries_max, 1000U);
  EXPECT_EQ(sql.miss_wait, Duration::milliseconds(50));
}

TEST(SqlUsersConfig, ResolvesTheSqlitePathAgainstTheConfigFolder) {
  auto config = parse_gateway_config(
      std::string(kBase) + "users_stores: [files, sql]\nsql_users:\n  sqlite: users.sqlite\n",
      "/etc/rw/gw.yaml");
  ASSERT_TRUE(config);
  EXPECT_EQ(config->sql_users->sqlite->path, "/etc/rw/users.sqlite");
}

TEST(SqlUsersConfig, RefusesInconsistentStores) {
  EXPECT_EQ(
      errors_of(std::string(kBase) + "users_stores: [files, sql]\n"),
      std::vector<std::string>{"gw.yaml:1:1: users_stores lists sql but there is no 'sql_users' section"});
  EXPECT_EQ(errors_of(std::string(kBase) + "sql_users:\n  sqlite: x\n"),
            std::vector<std::string>{"gw.yaml:3:1: 'sql_users' is set but users_stores does not list sql"});
  EXPECT_EQ(errors_of(std::string(kBase) + "users_stores: [files, files]\n"),
            std::vector<std::string>{"gw.yaml:3:23: user store 'files' is listed twice"});
  EXPECT_EQ(errors_of(std::string(kBase) + "users_stores: [ldap]\n"),
            std::vector<std::string>{"gw.yaml:3:16: unknown user store 'ldap' (files or sql)"});
}

TEST(SqlUsersConfig, NeedsExactlyOneDatabase) {
  EXPECT_EQ(
      errors_of(std::string(kBase) + "users_stores: [sql]\nsql_users:\n  connections: 2\n"),
      std::vector<std::string>{"gw.yaml:5:3: sql_users needs exactly one of 'sqlite' and 'postgresql'"});
  EXPECT_EQ(
      errors_of(std::string(kBase) + "users_stores: [sql]\nsql_users:\n  sqlite: a\n  read_replica: b\n"),
      std::vector<std::string>{"gw.yaml:5:3: sql_users.read_replica needs 'postgresql'"});
  EXPECT_EQ(
      errors_of(std::string(kBase) + "users_stores: [sql]\nsql_users:\n  sqlite: a\n  miss_wait_ms: 5000\n")
          .size(),
      1U);
}

}  // namespace
}  // namespace rw::config
