// SQLite and PostgreSQL readers of the SQL user tables; see sql_user_source.h.
#include "gateway_shell/sql_user_source.h"

#include <libpq-fe.h>
#include <sqlite3.h>

#include <fmt/format.h>

namespace rw::gateway_shell {

namespace {

// rlm_sql's default queries (mods-config/sql/main/*/queries.conf), with the
// user or group name bound as a parameter instead of escaped into the text.
constexpr const char* kCheckQuery =
    "SELECT attribute, op, value FROM radcheck WHERE username = $1 ORDER BY id";
constexpr const char* kReplyQuery =
    "SELECT attribute, op, value FROM radreply WHERE username = $1 ORDER BY id";
constexpr const char* kGroupsQuery =
    "SELECT groupname FROM radusergroup WHERE username = $1 ORDER BY priority";
constexpr const char* kGroupCheckQuery =
    "SELECT attribute, op, value FROM radgroupcheck WHERE groupname = $1 ORDER BY id";
constexpr const char* kGroupReplyQuery =
    "SELECT attribute, op, value FROM radgroupreply WHERE groupname = $1 ORDER BY id";

// Runs the five queries through `items` (three text columns) and `names`
// (one text column), which each connection type implements.
template <class Items, class Names>
Result<auth::SqlUserRows, std::string> read_user(std::string_view user_name, Items items, Names names) {
  auth::SqlUserRows rows;
  if (auto r = items(kCheckQuery, user_name, rows.check); !r) return fail(r.error());
  if (auto r = items(kReplyQuery, user_name, rows.reply); !r) return fail(r.error());
  std::vector<std::string> groups;
  if (auto r = names(kGroupsQuery, user_name, groups); !r) return fail(r.error());
  for (std::string& name : groups) {
    auth::SqlGroupRows group;
    if (auto r = items(kGroupCheckQuery, name, group.check); !r) return fail(r.error());
    if (auto r = items(kGroupReplyQuery, name, group.reply); !r) return fail(r.error());
    group.name = std::move(name);
    rows.groups.push_back(std::move(group));
  }
  return rows;
}

class SqliteUserSource final : public SqlUserSource {
 public:
  explicit SqliteUserSource(sqlite3* db) : db_(db) {}
  ~SqliteUserSource() override { sqlite3_close(db_); }
  SqliteUserSource(const SqliteUserSource&) = delete;
  SqliteUserSource& operator=(const SqliteUserSource&) = delete;

  Result<auth::SqlUserRows, std::string> fetch(std::string_view user_name) override {
    auto items = [&](const char* sql, std::string_view key, std::vector<auth::SqlItemRow>& out) {
      return run(sql, key, [&](sqlite3_stmt* statement) {
        out.push_back({text(statement, 0), text(statement, 1), text(statement, 2)});
      });
    };
    auto names = [&](const char* sql, std::string_view key, std::vector<std::string>& out) {
      return run(sql, key, [&](sqlite3_stmt* statement) { out.push_back(text(statement, 0)); });
    };
    return read_user(user_name, items, names);
  }

 private:
  static std::string text(sqlite3_stmt* statement, int column) {
    const unsigned char* value = sqlite3_column_text(statement, column);
    if (value == nullptr) return {};
    return {reinterpret_cast<const char*>(value),
            static_cast<std::size_t>(sqlite3_column_bytes(statement, column))};
  }

  template <class OnRow>
  Result<void, std::string> run(const char* sql, std::string_view key, OnRow on_row) {
    sqlite3_stmt* statement = nullptr;
    // SQLite takes $1 as a named parameter; it is parameter 1.
    if (sqlite3_prepare_v2(db_, sql, -1, &statement, nullptr) != SQLITE_OK) {
      return fail(fmt::format("sqlite: {}", sqlite3_errmsg(db_)));
    }
    sqlite3_bind_text(statement, 1, key.data(), static_cast<int>(key.size()), SQLITE_TRANSIENT);
    int step = SQLITE_ROW;
    while ((step = sqlite3_step(statement)) == SQLITE_ROW) on_row(statement);
    sqlite3_finalize(statement);
    if (step != SQLITE_DONE) return fail(fmt::format("sqlite: {}", sqlite3_errmsg(db_)));
    return {};
  }

  sqlite3* db_;
};

class PostgresUserSource final : public SqlUserSource {
 public:
  explicit PostgresUserSource(PGconn* connection) : connection_(connection) {}
  ~PostgresUserSource() override { PQfinish(connection_); }
  PostgresUserSource(const PostgresUserSource&) = delete;
  PostgresUserSource& operator=(const PostgresUserSource&) = delete;

  Result<auth::SqlUserRows, std::string> fetch(std::string_view user_name) override {
    auto items = [&](const char* sql, std::string_view key, std::vector<auth::SqlItemRow>& out) {
      return run(sql, key, [&](PGresult* result, int row) {
        out.push_back({text(result, row, 0), text(result, row, 1), text(result, row, 2)});
      });
    };
    auto names = [&](const char* sql, std::string_view key, std::vector<std::string>& out) {
      return run(sql, key, [&](PGresult* result, int row) { out.push_back(text(result, row, 0)); });
    };
    return read_user(user_name, items, names);
  }

 private:
  static std::string text(PGresult* result, int row, int column) {
    return {PQgetvalue(result, row, column), static_cast<std::size_t>(PQgetlength(result, row, column))};
  }

  template <class OnRow>
  Result<void, std::string> run(const char* sql, std::string_view key, OnRow on_row) {
    std::string value(key);
    const char* values[1] = {value.c_str()};
    PGresult* result = PQexecParams(connection_, sql, 1, nullptr, values, nullptr, nullptr, 0);
    if (PQresultStatus(result) != PGRES_TUPLES_OK) {
      std::string error = fmt::format("postgresql: {}", PQerrorMessage(connection_));
      PQclear(result);
      return fail(error);
    }
    for (int row = 0; row < PQntuples(result); ++row) on_row(result, row);
    PQclear(result);
    return {};
  }

  PGconn* connection_;
};

}  // namespace

Result<std::unique_ptr<SqlUserSource>, std::string> open_sqlite_user_source(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    std::string error = fmt::format("sqlite: {}: {}", path, db ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_close(db);
    return fail(error);
  }
  // A writer (the operator's provisioning) may hold the lock briefly.
  sqlite3_busy_timeout(db, 100);
  return std::unique_ptr<SqlUserSource>(new SqliteUserSource(db));
}

Result<std::unique_ptr<SqlUserSource>, std::string> open_postgres_user_source(const std::string& conninfo) {
  PGconn* connection = PQconnectdb(conninfo.c_str());
  if (PQstatus(connection) != CONNECTION_OK) {
    std::string error = fmt::format("postgresql: {}", PQerrorMessage(connection));
    PQfinish(connection);
    return fail(error);
  }
  return std::unique_ptr<SqlUserSource>(new PostgresUserSource(connection));
}

Result<std::unique_ptr<SqlUserSource>, std::string> open_postgres_user_source_preferring_replica(
    const std::string& primary, const std::optional<std::string>& read_replica,
    const std::function<void(const std::string&)>& on_fallback) {
  if (read_replica) {
    auto opened = open_postgres_user_source(*read_replica);
    if (opened) return opened;
    if (on_fallback) on_fallback(opened.error());
  }
  return open_postgres_user_source(primary);
}

}  // namespace rw::gateway_shell
