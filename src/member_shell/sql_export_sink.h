// Export sinks (docs/design.md invariant 3): the database side of the exporter.
// PostgreSQL through libpq and SQLite through libsqlite3, one schema (made by
// exporter::migrations, applied by the sink itself), one protocol: each
// batch, with the export cursor row moved to its last log index, in one
// transaction that first reads (and on PostgreSQL locks) the cursor row and
// skips records at or below it. So a batch written twice, by a restarted
// exporter, a new leader or an old leader that has not noticed yet, changes
// nothing the second time: exactly once. Blocking calls: run them on the
// exporter's own thread, never on a loop thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accounting/ledger.h"
#include "base/result.h"
#include "config/member_config.h"
#include "exporter/radacct.h"
#include "radius/dictionary.h"

namespace rw::member_shell {

// Why a sink call failed. kUnavailable (connection refused or lost, server
// shutting down, database locked, a lock or statement timeout) is worth
// retrying as is; kRejected (the database refused the SQL or the schema)
// needs an operator, but the exporter retries it too, with backoff, since
// nothing may be dropped. kRecordRefused: a record's values were refused
// (PostgreSQL SQLSTATE classes 22 data exception, 23 integrity constraint,
// 54 program limit; SQLite constraint, too big, mismatch): the exporter
// splits the batch down to it and quarantines it. kCursorBehind: the
// database's cursor is below the floor the write was given.
struct SinkError {
  enum class Kind : std::uint8_t { kUnavailable, kRejected, kRecordRefused, kCursorBehind };
  Kind kind = Kind::kUnavailable;
  std::string message;

  [[nodiscard]] std::string to_string() const;
};

// A record the database refused, now in the quarantine table.
struct QuarantinedRecord {
  std::uint64_t index = 0;
  std::size_t position = 0;
  std::string key;  // hex
  std::string error;
};

// What write() did with a batch.
struct WriteResult {
  std::uint64_t exported_through = 0;  // the cursor after the transaction
  std::size_t records_written = 0;     // records above the cursor it found
  std::size_t records_known = 0;       // of those, keys already logged (re-sent records): skipped
  std::vector<QuarantinedRecord> quarantined;
};

class ExportSink {
 public:
  virtual ~ExportSink() = default;

  // Connects if not connected and brings the schema to the latest version
  // (each migration in its own transaction with its version row).
  [[nodiscard]] virtual Result<void, SinkError> open() = 0;
  // The cursor row: the highest log index already in the database.
  [[nodiscard]] virtual Result<std::uint64_t, SinkError> exported_through() = 0;
  // Exports the records (ascending log indices, whole entries) above the
  // cursor, and moves the cursor to the last one, in one transaction. A
  // cursor below `floor` (the ledger's exported_through) fails with
  // kCursorBehind and writes nothing. On failure nothing of the batch is in
  // the database and the connection is dropped (the next call reconnects).
  [[nodiscard]] virtual Result<WriteResult, SinkError> write(std::span<const accounting::HeldRecord> records,
                                                             std::uint64_t floor = 0) = 0;
  // The same, but each record on its own (a savepoint each): a record the
  // database refuses (kRecordRefused) goes into the quarantine table with
  // the error instead, in the same transaction. Meant for one entry.
  [[nodiscard]] virtual Result<WriteResult, SinkError> write_isolating(
      std::span<const accounting::HeldRecord> records, std::uint64_t floor = 0) = 0;
  // Log retention (docs/accounting.md "Keeping the log table bounded"):
  // deletes, of the first `rows_max` rows of the log table in log order,
  // those received before `before_unix_ms`; returns how many it deleted.
  // One statement, outside any batch's transaction; radacct, the cursor and
  // the quarantine are untouched. On failure the connection is dropped.
  [[nodiscard]] virtual Result<std::uint64_t, SinkError> prune_log(std::int64_t before_unix_ms,
                                                                   std::size_t rows_max) = 0;
  // Drops the connection (leadership lost; the next call reconnects).
  virtual void close() = 0;
  [[nodiscard]] virtual exporter::Dialect dialect() const = 0;
};

// A PostgreSQL sink on a libpq connection string (keywords such as host,
// port, dbname, user, sslmode, sslrootcert, sslcert, sslkey), bounded by
// `timeouts` (TCP ones as connection parameters that conninfo overrides).
[[nodiscard]] std::unique_ptr<ExportSink> make_postgres_sink(
    std::string conninfo, std::shared_ptr<const radius::Dictionary> dictionary,
    const config::MemberConfig::PostgresTimeouts& timeouts = {});
// An SQLite sink on a database file (created if absent), in WAL mode.
[[nodiscard]] std::unique_ptr<ExportSink> make_sqlite_sink(
    std::string path, std::shared_ptr<const radius::Dictionary> dictionary);

}  // namespace rw::member_shell
