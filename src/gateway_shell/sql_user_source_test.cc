// Tests of SQL authentication's reading and semantics on real SQLite files
// made by FreeRADIUS's own schema (Debian freeradius-config), evaluated with
// rlm_sql's check/reply, group-priority and Fall-Through rules.
#include "gateway_shell/sql_user_source.h"

#include <gtest/gtest.h>

#include <optional>

#include <filesystem>

#include "auth/users_policy.h"
#include "config/temp_dir_for_test.h"
#include "gateway_shell/sqlite_users_for_test.h"

namespace rw::gateway_shell {
namespace {

const radius::AttributeDef& attr(std::string_view name) {
  const radius::AttributeDef* def = radius::Dictionary::builtin()->find(name);
  EXPECT_NE(def, nullptr) << name;
  return *def;
}

std::string text_of(const config::UsersItem* item) {
  return item == nullptr ? "<none>" : radius::format_value(*item->def, item->bytes());
}

class SqlUsersTest : public config::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    path_ = (dir_ / "users.sqlite").string();
    db_.emplace(path_, freeradius_sqlite_schema());
  }
  void TearDown() override {
    db_.reset();
    TempDirTest::TearDown();
  }
  void exec(const std::string& sql) { db_->exec(sql); }

  // Fetches `user` through a fresh read-only source, compiles it and applies
  // it to a request carrying `request`.
  void decide(std::string_view user, std::span<const auth::RequestAttribute> request = {}) {
    auto source = open_sqlite_user_source(path_);
    ASSERT_TRUE(source) << source.error();
    auto rows = (*source)->fetch(user);
    ASSERT_TRUE(rows) << rows.error();
    auto compiled = auth::compile_sql_user(user, *rows, radius::Dictionary::builtin());
    ASSERT_TRUE(compiled) << compiled.error();
    file_ = *compiled;
    auth::RequestAttributeList attributes(request);
    ASSERT_TRUE(auth::evaluate_users(file_->users, user, attributes, decision_));
  }

  std::string path_;
  std::optional<SqliteUsersForTest> db_;
  std::shared_ptr<const auth::SqlUser> file_;
  auth::UsersDecision decision_;
};

TEST_F(SqlUsersTest, UserCheckSetsTheKnownGoodPasswordAndReplyApplies) {
  exec(
      R"(INSERT INTO radcheck (username, attribute, op, value) VALUES ('bob', 'Cleartext-Password', ':=', 'hello');
          INSERT INTO radreply (username, attribute, op, value) VALUES ('bob', 'Reply-Message', '=', 'Hi "bob" \o/');
          INSERT INTO radreply (username, attribute, op, value) VALUES ('bob', 'Framed-IP-Address', ':=', '10.0.0.7');)");
  decide("bob");
  EXPECT_TRUE(decision_.matched());
  EXPECT_EQ(text_of(decision_.find_control(attr("Cleartext-Password"))), "hello");
  EXPECT_EQ(text_of(decision_.find_reply(attr("Reply-Message"))), "Hi \"bob\" \\o/");
  EXPECT_EQ(text_of(decision_.find_reply(attr("Framed-IP-Address"))), "10.0.0.7");
}

TEST_F(SqlUsersTest, UnknownUserMatchesNothing) {
  decide("nobody");
  EXPECT_FALSE(decision_.matched());
}

TEST_F(SqlUsersTest, GroupsApplyInPriorityOrderAndStopWithoutFallThrough) {
  exec(
      R"(INSERT INTO radcheck (username, attribute, op, value) VALUES ('ann', 'Cleartext-Password', ':=', 'pw');
          INSERT INTO radusergroup (username, groupname, priority) VALUES ('ann', 'late', 5);
          INSERT INTO radusergroup (username, groupname, priority) VALUES ('ann', 'early', 1);
          INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ('early', 'Session-Timeout', ':=', '600');
          INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ('late', 'Session-Timeout', ':=', '60');
          INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ('late', 'Idle-Timeout', ':=', '30');)");
  decide("ann");
  EXPECT_EQ(text_of(decision_.find_reply(attr("Session-Timeout"))), "600");
  // rlm_sql_process_groups stops after the first applied group.
  EXPECT_EQ(decision_.find_reply(attr("Idle-Timeout")), nullptr);
  EXPECT_EQ(decision_.applied_count(), 2U);
}

TEST_F(SqlUsersTest, GroupFallThroughYesContinuesToTheNextGroup) {
  exec(R"(INSERT INTO radusergroup (username, groupname, priority) VALUES ('ann', 'a', 1);
          INSERT INTO radusergroup (username, groupname, priority) VALUES ('ann', 'b', 2);
          INSERT INTO radgroupcheck (groupname, attribute, op, value) VALUES ('a', 'Cleartext-Password', ':=', 'pw');
          INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ('a', 'Session-Timeout', '=', '600');
          INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ('a', 'Fall-Through', '=', 'Yes');
          INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ('b', 'Session-Timeout', '=', '60');
          INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ('b', 'Idle-Timeout', '=', '30');)");
  decide("ann");
  EXPECT_EQ(text_of(decision_.find_control(attr("Cleartext-Password"))), "pw");
  EXPECT_EQ(text_of(decision_.find_reply(attr("Session-Timeout"))), "600");  // `=` keeps the first.
  EXPECT_EQ(text_of(decision_.find_reply(attr("Idle-Timeout"))), "30");
}

TEST_F(SqlUsersTest, GroupWhoseCheckFailsIsSkipped) {
  exec(R"(INSERT INTO radusergroup (username, groupname, priority) VALUES ('ann', 'wifi', 1);
          INSERT INTO radusergroup (username, groupname, priority) VALUES ('ann', 'any', 2);
          INSERT INTO radgroupcheck (groupname, attribute, op, value) VALUES ('wifi', 'NAS-Port-Type', '==', 'Wireless-802.11');
          INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ('wifi', 'Session-Timeout', ':=', '600');
          INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ('any', 'Session-Timeout', ':=', '60');)");
  decide("ann");
  EXPECT_EQ(text_of(decision_.find_reply(attr("Session-Timeout"))), "60");

  auto wire = radius::parse_value(attr("NAS-Port-Type"), "Wireless-802.11");
  ASSERT_TRUE(wire);
  auth::RequestAttribute wireless[] = {{&attr("NAS-Port-Type"), *wire}};
  decide("ann", wireless);
  EXPECT_EQ(text_of(decision_.find_reply(attr("Session-Timeout"))), "600");
}

TEST_F(SqlUsersTest, UserFallThroughNoSkipsTheGroups) {
  exec(R"(INSERT INTO radreply (username, attribute, op, value) VALUES ('ann', 'Fall-Through', '=', 'No');
          INSERT INTO radreply (username, attribute, op, value) VALUES ('ann', 'Idle-Timeout', '=', '5');
          INSERT INTO radusergroup (username, groupname, priority) VALUES ('ann', 'g', 1);
          INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ('g', 'Session-Timeout', ':=', '60');)");
  decide("ann");
  EXPECT_EQ(text_of(decision_.find_reply(attr("Idle-Timeout"))), "5");
  EXPECT_EQ(decision_.find_reply(attr("Session-Timeout")), nullptr);
}

TEST_F(SqlUsersTest, FailingUserCheckSkipsItsReplyButNotTheGroups) {
  // rlm_sql: `=` on a radcheck row compares (paircompare reverts it to ==).
  exec(R"(INSERT INTO radcheck (username, attribute, op, value) VALUES ('ann', 'NAS-Identifier', '=', 'ap1');
          INSERT INTO radreply (username, attribute, op, value) VALUES ('ann', 'Idle-Timeout', '=', '5');
          INSERT INTO radusergroup (username, groupname, priority) VALUES ('ann', 'g', 1);
          INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ('g', 'Session-Timeout', ':=', '60');)");
  decide("ann");
  EXPECT_EQ(decision_.find_reply(attr("Idle-Timeout")), nullptr);
  EXPECT_EQ(text_of(decision_.find_reply(attr("Session-Timeout"))), "60");
}

TEST_F(SqlUsersTest, RejectsUnknownAttributesAndOperators) {
  auth::SqlUserRows rows;
  rows.check.push_back({"No-Such-Attribute", ":=", "x"});
  EXPECT_FALSE(auth::compile_sql_user("u", rows, radius::Dictionary::builtin()));
  rows.check = {{"Cleartext-Password", "<>", "x"}};
  auto bad = auth::compile_sql_user("u", rows, radius::Dictionary::builtin());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("sql:radcheck:1:1"), std::string::npos) << bad.error();
  rows.check = {{"Cleartext-Password\" := \"x", ":=", "x"}};
  EXPECT_FALSE(auth::compile_sql_user("u", rows, radius::Dictionary::builtin()));
}

TEST_F(SqlUsersTest, NamesAndValuesAreQuotedNotInterpreted) {
  exec(
      R"(INSERT INTO radcheck (username, attribute, op, value) VALUES ('a "b"', 'Cleartext-Password', ':=', 'x", Auth-Type := "Accept');)");
  decide("a \"b\"");
  EXPECT_TRUE(decision_.matched());
  EXPECT_EQ(text_of(decision_.find_control(attr("Cleartext-Password"))), "x\", Auth-Type := \"Accept");
  EXPECT_EQ(decision_.find_control(attr("Auth-Type")), nullptr);
}

}  // namespace
}  // namespace rw::gateway_shell
