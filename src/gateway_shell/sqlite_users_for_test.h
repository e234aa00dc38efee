// A SQLite database file for the SQL-user tests: created with a schema
// (FreeRADIUS's own, as Debian's freeradius-config ships it, by default)
// and filled with plain SQL. Header-only; tests link SQLite through rw_io.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <sstream>
#include <string>

namespace rw::gateway_shell {

inline constexpr const char* kFreeradiusSqliteSchema =
    "/etc/freeradius/3.0/mods-config/sql/main/sqlite/schema.sql";

// FreeRADIUS's SQLite schema.sql, or "" (with a test failure) when missing.
inline std::string freeradius_sqlite_schema() {
  std::ifstream file(kFreeradiusSqliteSchema);
  EXPECT_TRUE(file) << "install freeradius-config (scripts/install-deps)";
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

class SqliteUsersForTest {
 public:
  SqliteUsersForTest(const std::string& path, const std::string& schema) {
    EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK) << path;
    exec(schema);
  }
  ~SqliteUsersForTest() { sqlite3_close(db_); }
  SqliteUsersForTest(const SqliteUsersForTest&) = delete;
  SqliteUsersForTest& operator=(const SqliteUsersForTest&) = delete;

  void exec(const std::string& sql) {
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
    sqlite3_free(error);
  }

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace rw::gateway_shell
