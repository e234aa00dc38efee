// Tests of the PostgreSQL test fixture: a real server starts in a temporary
// folder, answers psql, survives a stop/start on the same port with its data,
// and is removed on destruction.
#include "io/postgres_server_for_test.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace rw::io {
namespace {

TEST(PostgresServerForTest, StartsAnswersRestartsAndCleansUp) {
  ASSERT_TRUE(PostgresServerForTest::available()) << PostgresServerForTest::bin_dir();
  std::string dir;
  {
    PostgresServerForTest server;
    dir = server.dir();
    ASSERT_TRUE(server.running());
    ASSERT_NE(server.port(), 0);
    EXPECT_EQ(server.psql({"-c", "create table t (x int); insert into t values (7);"}), 0);
    const std::uint16_t port = server.port();
    server.stop();
    EXPECT_FALSE(server.running());
    EXPECT_NE(server.psql({"-c", "select 1"}), 0);  // Down: the connection is refused.
    server.start();
    EXPECT_EQ(server.port(), port);
    // The data survived the restart: a failing query would exit 3.
    EXPECT_EQ(server.psql({"-c", "do $$ begin if (select x from t) <> 7 then raise 'lost'; end if; end $$"}),
              0);
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
}

}  // namespace
}  // namespace rw::io
