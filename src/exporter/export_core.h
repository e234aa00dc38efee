// The exporter's decisions (docs/design.md invariant 3), pure: leadership edges,
// which records above the database's cursor to offer, when to submit the
// cursor entry again, backoff, the split that isolates a record the database
// refuses, and the alarm for a database cursor below the cluster's. Events
// in, decisions out; no clock (times are inputs), threads, I/O or logging.
// The shell (src/member_shell/export_loop.h) makes the database and ledger
// calls these decisions ask for (docs/accounting.md "Export to SQL").
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "accounting/ledger.h"
#include "base/time.h"

namespace rw::exporter {

struct CoreOptions {
  std::size_t batch_records_max = 2000;
  unsigned poll_interval_ms = 20;  // idle wait for new records
  // Least time from the start of one write to the start of the next while
  // less than a batch waits (docs/accounting.md "Pacing the exporter"); 0:
  // each round writes what it finds.
  unsigned batch_delay_ms = 100;
  unsigned retry_initial_ms = 100;         // first backoff after a failure
  unsigned retry_max_ms = 10'000;          // backoff ceiling
  unsigned follower_wait_ms = 100;         // wait while not the ready leader
  unsigned alarm_recheck_ms = 5000;        // re-read of a cursor below the cluster's
  std::int64_t cursor_resubmit_ms = 1000;  // a cursor entry not seen applied after this is sent again
  // Log retention (docs/accounting.md "Keeping the log table bounded"):
  // log rows received longer ago than this are deleted; 0 keeps every row.
  unsigned log_retention_days = 0;
  std::size_t prune_rows_max = 10'000;  // rows deleted at most per round
  unsigned prune_again_ms = 1000;       // next round after one that deleted prune_rows_max
  unsigned prune_interval_ms = 60'000;  // next round otherwise, and after a failure
};

// How a database call failed, as far as the decisions go.
enum class Failure : std::uint8_t {
  kUnavailable,    // connection, timeout, shutdown: retry with backoff
  kRejected,       // the database refused the SQL for no one record's sake: retry with backoff
  kRecordRefused,  // a record's values were refused: split the batch down to it
  kCursorBehind,   // the database's cursor is below the cluster's: re-read it (alarm)
};

enum class Edge : std::uint8_t { kNone, kBecameActive, kBecameInactive };

// What to do with the records fetched above the cursor.
struct Plan {
  enum class Mode : std::uint8_t { kNothing, kWrite, kIsolate } mode = Mode::kNothing;
  std::size_t records = 0;  // how many of the fetched records, from the first (whole entries)
};

// A database cursor below the ledger's exported_through: records between
// the two left the cluster but are not in the database (a restored backup,
// an asynchronous replica promoted, another SQLite file).
struct CursorAlarm {
  std::uint64_t database_cursor = 0;
  std::uint64_t ledger_exported_through = 0;
};

class ExportCore {
 public:
  explicit ExportCore(CoreOptions options);

  // Each round starts here: whether this member is the ready leader. On
  // kBecameInactive the shell drops its connection; everything the core
  // knew about the database is forgotten (it is re-read when leading again).
  Edge on_round(bool ready);
  [[nodiscard]] bool active() const { return active_; }
  [[nodiscard]] unsigned follower_wait_ms() const { return options_.follower_wait_ms; }

  // The database's cursor must be read before fetching.
  [[nodiscard]] bool needs_cursor() const { return !cursor_known_; }
  // The cursor as read, against the ledger's exported_through. False: the
  // alarm is raised (alarm()), nothing is exported, and the shell waits
  // alarm_recheck_ms() before reading again. A read at or above the
  // ledger's clears the alarm (the operator restored the database or moved
  // its cursor, docs/operations.md).
  bool on_cursor(std::uint64_t database_cursor, std::uint64_t ledger_exported_through);
  [[nodiscard]] const std::optional<CursorAlarm>& alarm() const { return alarm_; }
  [[nodiscard]] unsigned alarm_recheck_ms() const { return options_.alarm_recheck_ms; }
  [[nodiscard]] std::uint64_t cursor() const { return cursor_; }

  // The cursor entry to submit now, if any: the database is ahead of the
  // ledger and the same entry was not submitted in the last
  // cursor_resubmit_ms (a lost submission is sent again, a stale one is a
  // no-op in the ledger). `now` is monotonic: a wall clock stepped back an
  // hour must not hold a lost cursor entry back for an hour
  // (docs/RELIABILITY.md, clock jumps).
  [[nodiscard]] std::optional<std::uint64_t> cursor_to_submit(std::uint64_t ledger_exported_through,
                                                              Instant now) const;
  void on_submitted(std::uint64_t cursor, Instant now);

  // How long to wait before fetching, so that records the exporter keeps
  // up with go in one batch per batch_delay_ms instead of one per round
  // (each batch costs the database a transaction with its fsync, and the
  // cluster a cursor entry): the rest of batch_delay_ms since the last
  // write began. 0 when `held` records (above the cluster's cursor) would
  // fill a batch, while a refused record is being looked for, and before
  // the first write of a leadership.
  [[nodiscard]] unsigned batch_wait_ms(std::size_t held, Instant now) const;
  // A write is about to be offered to the database.
  void on_write_began(Instant now) { write_began_ = now; }

  // Log retention: the receive time (Unix ms) before which log rows are
  // deleted now, when retention is on and a round is due: at once in a
  // leadership, then prune_again_ms after a round that deleted a full
  // prune_rows_max (more is waiting) and prune_interval_ms after any other
  // round or a failure. A failed round never holds the export back.
  // `now` is monotonic (when), `wall_unix_ms` the wall clock (what).
  [[nodiscard]] std::optional<std::int64_t> prune_before(Instant now, std::int64_t wall_unix_ms) const;
  [[nodiscard]] std::size_t prune_rows_max() const { return options_.prune_rows_max; }
  // The round deleted `deleted` rows; nullopt: it failed.
  void on_pruned(Instant now, std::optional<std::uint64_t> deleted);

  // How many records to fetch after cursor().
  [[nodiscard]] std::size_t fetch_max() const { return options_.batch_records_max; }
  // What to write of `fetched` (records after cursor(), ascending, whole
  // entries). While a refused record is being looked for, a prefix: half of
  // the entries known to contain it, and the one entry left isolated
  // (each record on its own, the refused ones quarantined).
  Plan plan(std::span<const accounting::HeldRecord> fetched);

  // The last planned write committed with the database's cursor at
  // `exported_through`. True when it ended a backoff (the shell logs it).
  bool on_written(std::uint64_t exported_through);
  // The last database call failed; returns how long to wait before the
  // next round.
  unsigned on_failure(Failure failure);

  // While splitting: the highest log index of the smallest batch the
  // database refused (the refused record is above cursor() and at or below it).
  [[nodiscard]] const std::optional<std::uint64_t>& refused_through() const { return refused_through_; }

 private:
  CoreOptions options_;
  bool active_ = false;
  bool cursor_known_ = false;
  std::uint64_t cursor_ = 0;
  std::optional<CursorAlarm> alarm_;
  std::uint64_t submitted_cursor_ = 0;
  std::optional<Instant> submitted_at_;
  unsigned backoff_ms_;
  std::optional<std::uint64_t> refused_through_;
  Plan last_plan_;
  std::uint64_t last_plan_through_ = 0;  // last log index of the last planned write
  std::optional<Instant> write_began_;   // of the last write in this leadership
  std::optional<Instant> prune_due_;     // next log-retention round; unset: at once
};

}  // namespace rw::exporter
