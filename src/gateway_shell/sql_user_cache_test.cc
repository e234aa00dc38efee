// Tests of the SQL user cache on a real SQLite file: hits, TTL expiry,
// negative caching, the size bound and a database that cannot be read.
// Time is a fake clock; the pool's threads are real. A miss is fetched and
// answered through the answer sink, as a parked request is; the test waits
// for that answer (lookup_and_wait), a worker never does.
#include "gateway_shell/sql_user_cache.h"
#include "gateway_shell/sql_user_cache_for_test.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <set>

#include <optional>

#include <atomic>

#include "auth/users_policy.h"
#include "config/temp_dir_for_test.h"
#include "gateway_shell/sqlite_users_for_test.h"

namespace rw::gateway_shell {
namespace {

class SqlUserCacheTest : public config::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    path_ = (dir_ / "users.sqlite").string();
    db_.emplace(
        path_,
        "CREATE TABLE radcheck (id INTEGER PRIMARY KEY, username TEXT, attribute TEXT, op TEXT, value TEXT);"
        "CREATE TABLE radreply (id INTEGER PRIMARY KEY, username TEXT, attribute TEXT, op TEXT, value TEXT);"
        "CREATE TABLE radgroupcheck (id INTEGER PRIMARY KEY, groupname TEXT, attribute TEXT, op TEXT, value "
        "TEXT);"
        "CREATE TABLE radgroupreply (id INTEGER PRIMARY KEY, groupname TEXT, attribute TEXT, op TEXT, value "
        "TEXT);"
        "CREATE TABLE radusergroup (id INTEGER PRIMARY KEY, username TEXT, groupname TEXT, priority "
        "INTEGER);");
  }
  void TearDown() override {
    cache_.reset();
    db_.reset();
    TempDirTest::TearDown();
  }
  void exec(const std::string& sql) { db_->exec(sql); }
  void set_password(const std::string& user, const std::string& password) {
    exec("DELETE FROM radcheck WHERE username = '" + user + "';" +
         "INSERT INTO radcheck (username, attribute, op, value) VALUES ('" + user +
         "', 'Cleartext-Password', ':=', '" + password + "');");
  }
  void start(SqlUserCacheOptions options, std::string path = {}) {
    if (path.empty()) path = path_;
    cache_ = std::make_unique<SqlUserCache>(
        options, [path] { return open_sqlite_user_source(path); }, radius::Dictionary::builtin(),
        [this] { return Instant{now_ns_.load()}; }, [this](const std::string&) { ++errors_; });
  }
  // The Cleartext-Password the cache answers for `user`, "<unknown>" when
  // the store has no rows, "<unavailable>" when it could not answer.
  std::string password_of(std::string_view user) {
    gateway::UserStore::Lookup found = lookup_and_wait(*cache_, user);
    if (found.status != gateway::UserStore::Status::kFound || found.user == nullptr) return "<unavailable>";
    if (!found.user->known) return "<unknown>";
    auth::UsersDecision decision;
    auth::RequestAttributeList none(std::span<const auth::RequestAttribute>{});
    EXPECT_TRUE(auth::evaluate_users(found.user->users, user, none, decision));
    const config::UsersItem* item =
        decision.find_control(*radius::Dictionary::builtin()->find("Cleartext-Password"));
    if (item == nullptr) return "<no password>";
    EXPECT_NE(found.user->credentials.find(*item), nullptr);
    return std::string(as_chars(item->bytes()));
  }
  void advance(Duration d) { now_ns_ += d.ns; }

  std::string path_;
  std::optional<SqliteUsersForTest> db_;
  std::atomic<std::int64_t> now_ns_{1'000'000'000};
  std::atomic<int> errors_{0};
  std::unique_ptr<SqlUserCache> cache_;
};

TEST_F(SqlUserCacheTest, ServesFromMemoryUntilTheTtlRunsOut) {
  set_password("bob", "one");
  start({.ttl = Duration::seconds(60)});
  EXPECT_EQ(password_of("bob"), "one");
  set_password("bob", "two");
  advance(Duration::seconds(59));
  EXPECT_EQ(password_of("bob"), "one");  // Cached.
  advance(Duration::seconds(1));
  EXPECT_EQ(password_of("bob"), "two");  // Expired: fetched again.
  SqlUserCacheStats stats = cache_->stats();
  EXPECT_EQ(stats.fetches, 2U);
  EXPECT_EQ(stats.hits, 1U);
  EXPECT_EQ(stats.misses, 2U);
}

TEST_F(SqlUserCacheTest, RemembersUnknownUsersForTheNegativeTtl) {
  start({.ttl = Duration::seconds(60), .negative_ttl = Duration::seconds(5)});
  EXPECT_EQ(password_of("eve"), "<unknown>");
  set_password("eve", "pw");
  advance(Duration::seconds(4));
  EXPECT_EQ(password_of("eve"), "<unknown>");
  advance(Duration::seconds(1));
  EXPECT_EQ(password_of("eve"), "pw");
  EXPECT_EQ(cache_->stats().fetches, 2U);
}

TEST_F(SqlUserCacheTest, HoldsAtMostEntriesMax) {
  for (int i = 0; i < 10; ++i) set_password("u" + std::to_string(i), "p" + std::to_string(i));
  start({.entries_max = 3});
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(password_of("u" + std::to_string(i)), "p" + std::to_string(i));
    EXPECT_LE(cache_->stats().entries, 3U);
  }
  EXPECT_EQ(cache_->stats().entries, 3U);
}

TEST_F(SqlUserCacheTest, AnUnreadableDatabaseIsUnavailableAndNotCached) {
  start({.reconnect_backoff = Duration::milliseconds(1)}, (dir_ / "missing.sqlite").string());
  EXPECT_EQ(password_of("bob"), "<unavailable>");
  EXPECT_EQ(password_of("bob"), "<unavailable>");
  SqlUserCacheStats stats = cache_->stats();
  EXPECT_EQ(stats.entries, 0U);
  EXPECT_EQ(stats.fetch_errors, 2U);
  EXPECT_EQ(errors_.load(), 2);
}

TEST_F(SqlUserCacheTest, RowsThatDoNotCompileAreAnUnknownUser) {
  exec(
      "INSERT INTO radcheck (username, attribute, op, value) VALUES ('bad', 'No-Such-Attribute', ':=', "
      "'x');");
  start({});
  EXPECT_EQ(password_of("bad"), "<unknown>");
  EXPECT_EQ(errors_.load(), 1);
}

TEST_F(SqlUserCacheTest, ManyWorkersAskingAtOnceFetchOnceAndAllHearTheAnswer) {
  set_password("bob", "pw");
  start({.connections = 2});
  std::mutex mutex;
  std::condition_variable answered;
  std::set<gateway::Ticket> tickets;
  cache_->set_answer_sink([&](const gateway::Answer& answer) {
    std::lock_guard lock(mutex);
    if (answer.kind == gateway::AnswerKind::kUserLookup && answer.user && answer.user->known) {
      tickets.insert(answer.ticket);
    }
    answered.notify_all();
  });
  std::vector<std::thread> workers;
  for (std::uint16_t i = 0; i < 8; ++i) {
    workers.emplace_back([&, i] {
      // A worker never waits: a hit decides at once, a miss parks the request.
      const gateway::Ticket ticket = gateway::make_ticket(i, 0, 1);
      if (cache_->find("bob").status == gateway::UserStore::Status::kFound) {
        std::lock_guard lock(mutex);
        tickets.insert(ticket);
        return;
      }
      EXPECT_TRUE(cache_->fetch("bob", ticket));
    });
  }
  for (std::thread& worker : workers) worker.join();
  std::unique_lock lock(mutex);
  ASSERT_TRUE(answered.wait_for(lock, std::chrono::seconds(30), [&] { return tickets.size() == 8; }));
  EXPECT_EQ(cache_->stats().fetches, 1U);
  EXPECT_EQ(cache_->stats().waiting, 0U);
}

TEST_F(SqlUserCacheTest, AFullQueueRefusesTheFetchInsteadOfWaiting) {
  start({.queue_max = 0});
  EXPECT_EQ(cache_->find("bob").status, gateway::UserStore::Status::kMiss);
  EXPECT_FALSE(cache_->fetch("bob", gateway::make_ticket(0, 0, 1)));
  EXPECT_EQ(cache_->stats().unavailable, 1U);
}

}  // namespace
}  // namespace rw::gateway_shell
