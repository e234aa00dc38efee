// Export sinks: see sql_export_sink.h. The protocol (migrations, cursor
// check, batch, cursor move, commit) is written once in SqlSink over three
// primitives each database implements: connect, exec and a one-integer query.
#include "member_shell/sql_export_sink.h"

#include <libpq-fe.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <vector>

namespace rw::member_shell {
namespace {

using Kind = SinkError::Kind;

SinkError unavailable(std::string message) { return SinkError{Kind::kUnavailable, std::move(message)}; }
SinkError rejected(std::string message) { return SinkError{Kind::kRejected, std::move(message)}; }

class SqlSink : public ExportSink {
 public:
  SqlSink(exporter::Dialect dialect, std::shared_ptr<const radius::Dictionary> dictionary)
      : dialect_(dialect), dictionary_(std::move(dictionary)) {}

  Result<void, SinkError> open() override {
    if (migrated_ && connected()) return {};
    if (auto c = connect(); !c) return c;
    if (auto r = exec(exporter::schema_table_sql(dialect_)); !r) return fail_and_close(r.error());
    auto current = query_u64("SELECT coalesce(max(version), 0) FROM " + std::string(exporter::kSchemaTable));
    if (!current) return fail_and_close(current.error());
    for (const exporter::Migration& m : exporter::migrations(dialect_)) {
      if (static_cast<std::uint64_t>(m.version) <= *current) continue;
      const std::string sql = begin_sql() + ";\n" + m.sql + ";\nINSERT INTO " +
                              std::string(exporter::kSchemaTable) + " VALUES (" + std::to_string(m.version) +
                              ", CURRENT_TIMESTAMP);\nCOMMIT";
      if (auto r = exec(sql); !r) return fail_and_close(r.error());
    }
    migrated_ = true;
    return {};
  }

  Result<std::uint64_t, SinkError> exported_through() override {
    if (auto o = open(); !o) return fail(o.error());
    auto cursor = query_u64(exporter::cursor_select_sql(dialect_, false));
    if (!cursor) return fail(fail_and_close(cursor.error()).error());
    return *cursor;
  }

  Result<WriteResult, SinkError> write(std::span<const accounting::HeldRecord> records,
                                       std::uint64_t floor) override {
    return transact(records, floor, false);
  }

  Result<WriteResult, SinkError> write_isolating(std::span<const accounting::HeldRecord> records,
                                                 std::uint64_t floor) override {
    return transact(records, floor, true);
  }

  Result<std::uint64_t, SinkError> prune_log(std::int64_t before_unix_ms, std::size_t rows_max) override {
    if (auto o = open(); !o) return fail(o.error());
    const std::string sql = exporter::prune_log_sql(dialect_, before_unix_ms, rows_max);
    if (dialect_ == exporter::Dialect::kPostgres) {
      auto deleted = query_u64(sql);
      if (!deleted) return fail(fail_and_close(deleted.error()).error());
      return *deleted;
    }
    if (auto r = exec(sql); !r) return fail(fail_and_close(r.error()).error());
    auto deleted = query_u64("SELECT changes()");
    if (!deleted) return fail(fail_and_close(deleted.error()).error());
    return *deleted;
  }

  exporter::Dialect dialect() const override { return dialect_; }

 protected:
  virtual Result<void, SinkError> connect() = 0;
  virtual bool connected() const = 0;
  // Runs one or more statements; the error carries the database's message.
  virtual Result<void, SinkError> exec(const std::string& sql) = 0;
  // The single integer the query returns (0 for NULL); no row is an error.
  virtual Result<std::uint64_t, SinkError> query_u64(const std::string& sql) = 0;

  // The first column of every row (text).
  virtual Result<std::vector<std::string>, SinkError> query_texts(const std::string& sql) = 0;
  // True when radacct's rows may go by COPY into the session's stage table
  // (PostgreSQL, when it could be made).
  virtual bool can_stage_radacct() const { return false; }
  // Runs `copy` (COPY ... FROM STDIN) with `rows` in COPY's text format.
  // PostgreSQL only.
  virtual Result<void, SinkError> copy_in(std::string_view copy, const std::string& rows) {
    (void)copy;
    (void)rows;
    return fail(rejected("COPY is PostgreSQL's"));
  }

  std::string begin_sql() const {
    return dialect_ == exporter::Dialect::kSqlite ? "BEGIN IMMEDIATE" : "BEGIN";
  }

  // Rolls back (best effort) and drops the connection, so that the next
  // call starts from a clean session; returns `error`.
  SinkError abort(SinkError error) {
    (void)exec("ROLLBACK");
    close();
    return error;
  }
  Result<void, SinkError> fail_and_close(SinkError error) {
    close();
    return fail(std::move(error));
  }

  bool migrated_ = false;

 private:
  // One transaction: lock and check the cursor, skip what it covers and
  // the keys already logged, write (all at once, or each record under a
  // savepoint with refused ones quarantined), move the cursor, commit.
  Result<WriteResult, SinkError> transact(std::span<const accounting::HeldRecord> records,
                                          std::uint64_t floor, bool isolate) {
    if (auto o = open(); !o) return fail(o.error());
    if (auto r = exec(begin_sql()); !r) return fail(fail_and_close(r.error()).error());
    auto cursor = query_u64(exporter::cursor_select_sql(dialect_, true));
    if (!cursor) return fail(abort(cursor.error()));
    if (*cursor < floor) {
      return fail(
          abort(SinkError{Kind::kCursorBehind, "the database's export cursor " + std::to_string(*cursor) +
                                                   " is below the cluster's " + std::to_string(floor)}));
    }
    std::size_t first = 0;
    while (first < records.size() && records[first].index <= *cursor) ++first;
    const auto fresh = records.subspan(first);
    if (fresh.empty()) {
      if (auto r = exec("COMMIT"); !r) return fail(abort(r.error()));
      return WriteResult{*cursor, 0, 0, {}};
    }
    auto logged = query_texts(exporter::known_keys_sql(fresh));
    if (!logged) return fail(abort(logged.error()));
    exporter::KnownKeys known(logged->begin(), logged->end());
    WriteResult result{fresh.back().index, fresh.size(), known.size(), {}};
    if (!isolate) {
      // PostgreSQL takes the rows by COPY (docs/accounting.md "Export
      // throughput"): the log's into its table, radacct's into the stage
      // table when the session could make one. A time COPY cannot carry
      // sends those rows by INSERT.
      std::optional<std::string> log_rows;
      std::optional<exporter::RadacctCopy> radacct;
      if (dialect_ == exporter::Dialect::kPostgres) {
        log_rows = exporter::log_copy_rows(fresh, *dictionary_, known);
        if (log_rows && can_stage_radacct()) radacct = exporter::radacct_copy(fresh, *dictionary_, known);
      }
      if (log_rows) {
        if (auto r = copy_in(exporter::kLogCopySql, *log_rows); !r) return fail(abort(r.error()));
      }
      if (radacct) {
        if (!radacct->rows.empty()) {
          if (auto r = copy_in(exporter::kRadacctStageCopySql, radacct->rows); !r)
            return fail(abort(r.error()));
        }
        if (!radacct->sql.empty()) {
          if (auto r = exec(radacct->sql); !r) return fail(abort(r.error()));
        }
      } else {
        const exporter::LogRows log = log_rows ? exporter::LogRows::kByCopy : exporter::LogRows::kInsert;
        const std::string sql = exporter::batch_sql(dialect_, fresh, *dictionary_, known, 0, log);
        if (!sql.empty()) {
          if (auto r = exec(sql); !r) return fail(abort(r.error()));
        }
      }
    } else {
      const std::vector<std::size_t> positions = exporter::entry_positions(fresh);
      for (std::size_t i = 0; i < fresh.size(); ++i) {
        if (auto r = exec("SAVEPOINT rw_record"); !r) return fail(abort(r.error()));
        auto r = exec(exporter::batch_sql(dialect_, fresh.subspan(i, 1), *dictionary_, known, positions[i]));
        if (r) {
          known.insert(fresh[i].record.key.hex());
        } else if (r.error().kind == Kind::kRecordRefused) {
          if (auto b = exec("ROLLBACK TO SAVEPOINT rw_record"); !b) return fail(abort(b.error()));
          auto q = exec(
              exporter::quarantine_sql(dialect_, fresh[i], positions[i], *dictionary_, r.error().message));
          if (!q) return fail(abort(q.error()));
          result.quarantined.push_back(
              QuarantinedRecord{fresh[i].index, positions[i], fresh[i].record.key.hex(), r.error().message});
        } else {
          return fail(abort(r.error()));
        }
        if (auto e = exec("RELEASE SAVEPOINT rw_record"); !e) return fail(abort(e.error()));
      }
    }
    if (auto r = exec(exporter::cursor_update_sql(result.exported_through) + ";\nCOMMIT"); !r)
      return fail(abort(r.error()));
    return result;
  }

  exporter::Dialect dialect_;
  std::shared_ptr<const radius::Dictionary> dictionary_;
};

// --- PostgreSQL ---------------------------------------------------------

class PostgresSink final : public SqlSink {
 public:
  PostgresSink(std::string conninfo, std::shared_ptr<const radius::Dictionary> dictionary,
               const config::MemberConfig::PostgresTimeouts& timeouts)
      : SqlSink(exporter::Dialect::kPostgres, std::move(dictionary)),
        conninfo_(std::move(conninfo)),
        timeouts_(timeouts) {}
  ~PostgresSink() override { close(); }

  void close() override {
    if (conn_ != nullptr) PQfinish(conn_);
    conn_ = nullptr;
    migrated_ = false;
  }

 protected:
  bool connected() const override { return conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK; }

  Result<void, SinkError> connect() override {
    if (connected()) return {};
    close();
    // Keywords are read in order and the last wins: the bounds first, then
    // the operator's conninfo (expanded from dbname), which may override them.
    const std::string values[] = {std::to_string(timeouts_.connect_timeout_s),
                                  "1",
                                  std::to_string(timeouts_.keepalives_idle_s),
                                  std::to_string(timeouts_.keepalives_interval_s),
                                  std::to_string(timeouts_.keepalives_count),
                                  std::to_string(timeouts_.tcp_user_timeout_ms),
                                  conninfo_};
    const char* keywords[] = {
        "connect_timeout",  "keepalives",       "keepalives_idle", "keepalives_interval",
        "keepalives_count", "tcp_user_timeout", "dbname",          nullptr};
    const char* value_ptrs[std::size(values) + 1] = {};
    for (std::size_t i = 0; i < std::size(values); ++i) value_ptrs[i] = values[i].c_str();
    conn_ = PQconnectdbParams(keywords, value_ptrs, 1);
    if (conn_ == nullptr) return fail(unavailable("PQconnectdb: out of memory"));
    if (PQstatus(conn_) != CONNECTION_OK) {
      SinkError error = unavailable(std::string("connect: ") + PQerrorMessage(conn_));
      close();
      return fail(std::move(error));
    }
    // Server notices ("relation already exists, skipping" from the
    // idempotent schema statements) are expected and not worth a line.
    PQsetNoticeProcessor(
        conn_, [](void*, const char*) {}, nullptr);
    // Timestamps are written with to_timestamp (UTC instants); a fixed
    // session zone keeps any text rendering the same on every member.
    // The session bounds: a lock held by an old leader (the cursor row), a
    // statement or an open transaction that stops moving fail the call
    // (retried with backoff) instead of stopping the export.
    auto set = exec("SET TIME ZONE 'UTC'; SET lock_timeout = " + std::to_string(timeouts_.lock_timeout_ms) +
                    "; SET statement_timeout = " + std::to_string(timeouts_.statement_timeout_ms) +
                    "; SET idle_in_transaction_session_timeout = " +
                    std::to_string(timeouts_.idle_in_transaction_session_timeout_ms));
    if (!set) return set;
    // radacct's rows are staged in a temporary table of this session
    // (exporter::radacct_copy). A role without the TEMPORARY privilege on
    // the database cannot make one: radacct then goes by INSERT, slower
    // but the same rows, and the log says so once per connection.
    auto staged = exec(exporter::radacct_stage_sql());
    radacct_stage_ = staged.has_value();
    if (!staged) {
      std::string why = staged.error().message;
      while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
      std::replace(why.begin(), why.end(), '\n', ' ');
      spdlog::warn("export: no temporary table for radacct's rows ({}); radacct is written by INSERT", why);
    }
    return {};
  }

  bool can_stage_radacct() const override { return radacct_stage_; }

  Result<void, SinkError> exec(const std::string& sql) override {
    PGresult* result = PQexec(conn_, sql.c_str());
    const ExecStatusType status = PQresultStatus(result);
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
      PQclear(result);
      return {};
    }
    SinkError error = error_of(result);
    PQclear(result);
    return fail(std::move(error));
  }

  Result<void, SinkError> copy_in(std::string_view copy, const std::string& rows) override {
    PGresult* result = PQexec(conn_, std::string(copy).c_str());
    if (PQresultStatus(result) != PGRES_COPY_IN) {
      SinkError error = error_of(result);
      PQclear(result);
      return fail(std::move(error));
    }
    PQclear(result);
    // Blocking connection: PQputCopyData queues or sends, never returns 0.
    // In pieces, since it takes an int length.
    constexpr std::size_t kPiece = std::size_t{1} << 20;
    bool sent = true;
    for (std::size_t at = 0; sent && at < rows.size(); at += kPiece) {
      const std::size_t length = std::min(kPiece, rows.size() - at);
      sent = PQputCopyData(conn_, rows.data() + at, static_cast<int>(length)) == 1;
    }
    if (!sent || PQputCopyEnd(conn_, nullptr) != 1) {
      return fail(unavailable(std::string("COPY: ") + PQerrorMessage(conn_)));
    }
    // The COPY's outcome, then nothing: drain every result.
    std::optional<SinkError> error;
    while ((result = PQgetResult(conn_)) != nullptr) {
      if (PQresultStatus(result) != PGRES_COMMAND_OK && !error) error = error_of(result);
      PQclear(result);
    }
    if (error) return fail(std::move(*error));
    return {};
  }
  Result<std::vector<std::string>, SinkError> query_texts(const std::string& sql) override {
    PGresult* result = PQexec(conn_, sql.c_str());
    if (PQresultStatus(result) != PGRES_TUPLES_OK) {
      SinkError error = error_of(result);
      PQclear(result);
      return fail(std::move(error));
    }
    std::vector<std::string> out;
    for (int row = 0; row < PQntuples(result); ++row) out.emplace_back(PQgetvalue(result, row, 0));
    PQclear(result);
    return out;
  }

  Result<std::uint64_t, SinkError> query_u64(const std::string& sql) override {
    PGresult* result = PQexec(conn_, sql.c_str());
    if (PQresultStatus(result) != PGRES_TUPLES_OK) {
      SinkError error = error_of(result);
      PQclear(result);
      return fail(std::move(error));
    }
    if (PQntuples(result) != 1) {
      PQclear(result);
      return fail(rejected("query returned no row: " + sql));
    }
    const std::uint64_t value =
        PQgetisnull(result, 0, 0) ? 0 : std::strtoull(PQgetvalue(result, 0, 0), nullptr, 10);
    PQclear(result);
    return value;
  }

 private:
  // Connection-class failures are worth retrying as they are (SQLSTATE
  // classes 08 connection, 53 resources, 57 operator intervention such as
  // a shutdown or a statement timeout, 40 serialisation, 55P03 a lock
  // timeout, 25P03 an idle transaction ended); data exceptions (22),
  // integrity constraints (23) and program limits (54) are a record's
  // values; anything else is the SQL's fault.
  SinkError error_of(const PGresult* result) const {
    std::string message = result ? PQresultErrorMessage(result) : PQerrorMessage(conn_);
    if (PQstatus(conn_) != CONNECTION_OK) return unavailable(message);
    const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
    const std::string code = state ? state : "";
    for (const char* retryable : {"08", "53", "57", "40", "55P03", "25P03"}) {
      if (code.rfind(retryable, 0) == 0) return unavailable(message);
    }
    for (const char* data : {"22", "23", "54"}) {
      if (code.rfind(data, 0) == 0) return SinkError{Kind::kRecordRefused, message};
    }
    return rejected(message);
  }

  std::string conninfo_;
  config::MemberConfig::PostgresTimeouts timeouts_;
  PGconn* conn_ = nullptr;
  bool radacct_stage_ = false;  // The stage table exists in this session.
};

// --- SQLite -------------------------------------------------------------

class SqliteSink final : public SqlSink {
 public:
  SqliteSink(std::string path, std::shared_ptr<const radius::Dictionary> dictionary)
      : SqlSink(exporter::Dialect::kSqlite, std::move(dictionary)), path_(std::move(path)) {}
  ~SqliteSink() override { close(); }

  void close() override {
    if (db_ != nullptr) sqlite3_close(db_);
    db_ = nullptr;
    migrated_ = false;
  }

 protected:
  bool connected() const override { return db_ != nullptr; }

  Result<void, SinkError> connect() override {
    if (connected()) return {};
    const int rc = sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    if (rc != SQLITE_OK) {
      SinkError error =
          unavailable("open " + path_ + ": " + (db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc)));
      close();
      return fail(std::move(error));
    }
    // Readers (sqlite3 in a shell) must not block the exporter for long;
    // FULL synchronous makes a commit durable before the cursor entry lets
    // the cluster drop the records (docs/design.md invariant 3).
    sqlite3_busy_timeout(db_, 5000);
    return exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL");
  }

  Result<void, SinkError> exec(const std::string& sql) override {
    char* message = nullptr;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
    if (rc == SQLITE_OK) return {};
    std::string text = message ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    return fail(error_of(rc, text));
  }

  Result<std::vector<std::string>, SinkError> query_texts(const std::string& sql) override {
    sqlite3_stmt* statement = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &statement, nullptr);
    if (rc != SQLITE_OK) return fail(error_of(rc, sqlite3_errmsg(db_)));
    std::vector<std::string> out;
    while ((rc = sqlite3_step(statement)) == SQLITE_ROW) {
      const unsigned char* text = sqlite3_column_text(statement, 0);
      out.emplace_back(text ? reinterpret_cast<const char*>(text) : "");
    }
    const std::string message = sqlite3_errmsg(db_);
    sqlite3_finalize(statement);
    if (rc != SQLITE_DONE) return fail(error_of(rc, message));
    return out;
  }

  Result<std::uint64_t, SinkError> query_u64(const std::string& sql) override {
    sqlite3_stmt* statement = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &statement, nullptr);
    if (rc != SQLITE_OK) return fail(error_of(rc, sqlite3_errmsg(db_)));
    rc = sqlite3_step(statement);
    std::optional<std::uint64_t> value;
    if (rc == SQLITE_ROW) value = static_cast<std::uint64_t>(sqlite3_column_int64(statement, 0));
    const std::string message = sqlite3_errmsg(db_);
    sqlite3_finalize(statement);
    if (rc != SQLITE_ROW)
      return fail(rc == SQLITE_DONE ? rejected("query returned no row: " + sql) : error_of(rc, message));
    return *value;
  }

 private:
  static SinkError error_of(int rc, const std::string& message) {
    const int primary = rc & 0xff;
    if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED || primary == SQLITE_IOERR ||
        primary == SQLITE_FULL || primary == SQLITE_CANTOPEN) {
      return unavailable(message);
    }
    if (primary == SQLITE_CONSTRAINT || primary == SQLITE_TOOBIG || primary == SQLITE_MISMATCH) {
      return SinkError{Kind::kRecordRefused, message};
    }
    return rejected(message);
  }

  std::string path_;
  sqlite3* db_ = nullptr;
};

}  // namespace

std::string SinkError::to_string() const {
  switch (kind) {
    case Kind::kUnavailable:
      return "database unavailable: " + message;
    case Kind::kRecordRefused:
      return "database refused a record: " + message;
    case Kind::kCursorBehind:
      return "database cursor behind: " + message;
    case Kind::kRejected:
      break;
  }
  return "database refused: " + message;
}

std::unique_ptr<ExportSink> make_postgres_sink(std::string conninfo,
                                               std::shared_ptr<const radius::Dictionary> dictionary,
                                               const config::MemberConfig::PostgresTimeouts& timeouts) {
  return std::make_unique<PostgresSink>(std::move(conninfo), std::move(dictionary), timeouts);
}

std::unique_ptr<ExportSink> make_sqlite_sink(std::string path,
                                             std::shared_ptr<const radius::Dictionary> dictionary) {
  return std::make_unique<SqliteSink>(std::move(path), std::move(dictionary));
}

}  // namespace rw::member_shell
