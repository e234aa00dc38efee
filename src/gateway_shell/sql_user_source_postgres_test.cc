// SQL authentication on a real PostgreSQL 15 (started in a temporary folder)
// whose tables FreeRADIUS's own schema.sql created: the user's and the
// groups' rows read through the cache, and reads that go to a read replica
// or, while it is unreachable, to the primary.
#include <gtest/gtest.h>

#include "auth/users_policy.h"
#include "gateway_shell/sql_user_cache.h"
#include "gateway_shell/sql_user_cache_for_test.h"
#include "io/postgres_server_for_test.h"

namespace rw::gateway_shell {
namespace {

constexpr const char* kPostgresSchema = "/etc/freeradius/3.0/mods-config/sql/main/postgresql/schema.sql";

std::string reply_text(const auth::SqlUser& user, std::string_view name, std::string_view attribute) {
  auth::UsersDecision decision;
  auth::RequestAttributeList none(std::span<const auth::RequestAttribute>{});
  EXPECT_TRUE(auth::evaluate_users(user.users, name, none, decision));
  const radius::AttributeDef* def = radius::Dictionary::builtin()->find(attribute);
  const config::UsersItem* item = decision.find_reply(*def);
  if (item == nullptr) item = decision.find_control(*def);
  return item == nullptr ? "<none>" : radius::format_value(*def, item->bytes());
}

class PostgresUsersTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(io::PostgresServerForTest::available()) << io::PostgresServerForTest::bin_dir();
    server_ = new io::PostgresServerForTest();
    ASSERT_EQ(server_->psql({"-f", kPostgresSchema}), 0) << "FreeRADIUS's schema.sql (freeradius-config)";
    ASSERT_EQ(server_->psql({"-c", R"(
      INSERT INTO radcheck (username, attribute, op, value) VALUES ('alice', 'Cleartext-Password', ':=', 'wonderland');
      INSERT INTO radreply (username, attribute, op, value) VALUES ('alice', 'Reply-Message', '=', 'Hello');
      INSERT INTO radusergroup (username, groupname, priority) VALUES ('alice', 'gold', 2);
      INSERT INTO radusergroup (username, groupname, priority) VALUES ('alice', 'silver', 1);
      INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ('silver', 'Session-Timeout', ':=', '60');
      INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ('gold', 'Session-Timeout', ':=', '3600');
    )"}),
              0);
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  static io::PostgresServerForTest* server_;
};
io::PostgresServerForTest* PostgresUsersTest::server_ = nullptr;

TEST_F(PostgresUsersTest, ReadsUserAndGroupRowsInPriorityOrder) {
  auto source = open_postgres_user_source(server_->conninfo());
  ASSERT_TRUE(source) << source.error();
  auto rows = (*source)->fetch("alice");
  ASSERT_TRUE(rows) << rows.error();
  ASSERT_EQ(rows->groups.size(), 2U);
  EXPECT_EQ(rows->groups[0].name, "silver");
  auto user = auth::compile_sql_user("alice", *rows, radius::Dictionary::builtin());
  ASSERT_TRUE(user) << user.error();
  EXPECT_EQ(reply_text(**user, "alice", "Cleartext-Password"), "wonderland");
  EXPECT_EQ(reply_text(**user, "alice", "Reply-Message"), "Hello");
  EXPECT_EQ(reply_text(**user, "alice", "Session-Timeout"),
            "60");  // silver (priority 1) applied, then stopped.
  auto nobody = (*source)->fetch("nobody");
  ASSERT_TRUE(nobody);
  EXPECT_TRUE(nobody->empty());
}

TEST_F(PostgresUsersTest, TheCacheReadsThroughThePool) {
  SqlUserCacheOptions options;
  SqlUserCache cache(
      options, [conninfo = server_->conninfo()] { return open_postgres_user_source(conninfo); },
      radius::Dictionary::builtin(), [] { return Instant{1}; });
  auto found = lookup_and_wait(cache, "alice");
  ASSERT_EQ(found.status, gateway::UserStore::Status::kFound);
  EXPECT_TRUE(found.user->known);
  EXPECT_EQ(cache.find("alice").user, found.user);  // The same compiled user, from memory.
  EXPECT_FALSE(lookup_and_wait(cache, "nobody").user->known);
  EXPECT_EQ(cache.stats().fetches, 2U);
}

TEST_F(PostgresUsersTest, ReadsGoToTheReplicaAndFallBackToThePrimary) {
  // The same server stands for a reachable replica; a closed port for one that is down.
  std::vector<std::string> fallbacks;
  auto on_fallback = [&](const std::string& error) { fallbacks.push_back(error); };
  auto replica = open_postgres_user_source_preferring_replica("host=127.0.0.1 port=1 connect_timeout=5",
                                                              server_->conninfo(), on_fallback);
  ASSERT_TRUE(replica) << replica.error();
  EXPECT_TRUE(fallbacks.empty());
  auto primary = open_postgres_user_source_preferring_replica(
      server_->conninfo(), std::string("host=127.0.0.1 port=1 connect_timeout=5"), on_fallback);
  ASSERT_TRUE(primary) << primary.error();
  EXPECT_EQ(fallbacks.size(), 1U);
  auto rows = (*primary)->fetch("alice");
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->check.size(), 1U);
}

}  // namespace
}  // namespace rw::gateway_shell
