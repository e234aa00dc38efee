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

#include "accounting/ledger.h"
#include "base/result.h"
#include "exporter/radacct.h"
#include "radius/dictionary.h"

namespace rw::member_shell {

// Why a sink call failed. kUnavailable (connection refused or lost, server
// shutting down, database locked) is worth retrying as is; kRejected (the
// database refused the SQL or the schema) needs an operator, but the
// exporter retries it too, with backoff, since nothing may be dropped.
struct SinkError {
  enum class Kind : std::uint8_t { kUnavailable, kRejected };
  Kind kind = Kind::kUnavailable;
  std::string message;

  [[nodiscard]] std::string to_string() const;
};

// What write() did with a batch.
struct WriteResult {
  std::uint64_t exported_through = 0;  // the cursor after the transaction
  std::size_t records_written = 0;     // records above the cursor it found
};

class ExportSink {
 public:
  virtual ~ExportSink() = default;

  // Connects if not connected and brings the schema to the latest version
  // (each migration in its own transaction with its version row).
  [[nodiscard]] virtual Result<void, SinkError> open() = 0;
  // The cursor row: the highest log index already in the database.
  [[nodiscard]] virtual Result<std::uint64_t, SinkError> exported_through() = 0;
  // Exports the records (ascending log indices) above the cursor, and moves
  // the cursor to the last one, in one transaction. On failure nothing of
  // the batch is in the database and the connection is dropped (the next
  // call reconnects).
  [[nodiscard]] virtual Result<WriteResult, SinkError> write(
      std::span<const accounting::HeldRecord> records) = 0;
  // Drops the connection (leadership lost; the next call reconnects).
  virtual void close() = 0;
  [[nodiscard]] virtual exporter::Dialect dialect() const = 0;
};

// A PostgreSQL sink on a libpq connection string (keywords such as host,
// port, dbname, user, sslmode, sslrootcert, sslcert, sslkey, connect_timeout).
[[nodiscard]] std::unique_ptr<ExportSink> make_postgres_sink(
    std::string conninfo, std::shared_ptr<const radius::Dictionary> dictionary);
// An SQLite sink on a database file (created if absent), in WAL mode.
[[nodiscard]] std::unique_ptr<ExportSink> make_sqlite_sink(
    std::string path, std::shared_ptr<const radius::Dictionary> dictionary);

}  // namespace rw::member_shell
