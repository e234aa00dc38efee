// Reading FreeRADIUS's SQL user tables (radcheck, radreply, radusergroup,
// radgroupcheck, radgroupreply) with the queries of rlm_sql's default
// configuration, from SQLite or PostgreSQL. One source is one connection and
// is used by one thread at a time (the SQL user cache's pool owns them).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "auth/sql_users.h"
#include "base/result.h"

namespace rw::gateway_shell {

// A connection that reads one user's rows.
class SqlUserSource {
 public:
  virtual ~SqlUserSource() = default;
  // Reads every row rlm_sql's authorize reads for `user_name` (exact match).
  // The error says what failed; the caller retries on a fresh connection.
  [[nodiscard]] virtual Result<auth::SqlUserRows, std::string> fetch(std::string_view user_name) = 0;
};

// Opens the SQLite database file at `path` read-only.
[[nodiscard]] Result<std::unique_ptr<SqlUserSource>, std::string> open_sqlite_user_source(
    const std::string& path);

// Connects to PostgreSQL with a libpq connection string ("host=... dbname=...").
[[nodiscard]] Result<std::unique_ptr<SqlUserSource>, std::string> open_postgres_user_source(
    const std::string& conninfo);

// Opens a connection to `read_replica` when it is set and reachable, else to
// `primary`; `on_fallback` hears why the replica was skipped.
[[nodiscard]] Result<std::unique_ptr<SqlUserSource>, std::string>
open_postgres_user_source_preferring_replica(const std::string& primary,
                                             const std::optional<std::string>& read_replica,
                                             const std::function<void(const std::string&)>& on_fallback = {});

}  // namespace rw::gateway_shell
