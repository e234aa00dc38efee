// The exporter's thread (docs/design.md invariant 3): while this member is the
// ready leader it follows the ledger's held records in log order, writes
// them in batches through an ExportSink (each batch with its cursor in one
// transaction), then submits an export-cursor entry so that the cluster
// drops what the database now holds. It moves with leadership: a member that
// is not the ready leader closes its connection and waits. On a database
// failure it retries with exponential backoff and never drops a record;
// meanwhile the ledger keeps accepting until its held bounds are reached.
// Every decision is exporter::ExportCore's; this shell makes the ledger,
// database and consensus calls, reads the clock and logs.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "consensus/node.h"
#include "exporter/export_core.h"
#include "member_shell/ledger_state.h"
#include "member_shell/sql_export_sink.h"

namespace rw::member_shell {

struct ExportLoopOptions {
  std::string database;  // what /status shows: "sqlite:PATH" or "postgresql" (never the conninfo)
  std::size_t batch_records_max = 2000;
  unsigned poll_interval_ms = 20;
  unsigned batch_delay_ms = 100;
  unsigned retry_initial_ms = 100;
  unsigned retry_max_ms = 10'000;
  unsigned log_retention_days = 0;  // 0: every log row is kept
};

// What /status shows under "export".
struct ExportStatus {
  std::string database;
  bool active = false;                 // this member is exporting (ready leader)
  bool connected = false;              // the last database call succeeded
  std::uint64_t exported_through = 0;  // the database's cursor as last read or written
  std::uint64_t lag_records = 0;       // held records above that cursor (as of the last look)
  double lag_seconds = 0;              // age of the oldest of them (gateway receive time)
  std::uint64_t records_exported = 0;  // by this process
  std::uint64_t batches = 0;
  std::uint64_t failures = 0;             // failed database calls
  std::string last_error;                 // empty after a success
  std::uint64_t records_quarantined = 0;  // refused by the database, kept in radiusward_quarantine
  std::uint64_t records_resent = 0;       // keys already in the log table: skipped
  std::uint64_t log_rows_pruned = 0;      // log rows deleted by retention, by this process
  std::uint64_t prune_failures = 0;       // failed retention rounds (never holding the export back)
  // The database's cursor is below the cluster's: the export stopped
  // (docs/operations.md "Export cursor alarm").
  std::optional<exporter::CursorAlarm> cursor_alarm;
};

// The "export" object of a member's /status (docs/operations.md).
[[nodiscard]] nlohmann::json to_json(const ExportStatus& status);

class ExportLoop {
 public:
  ExportLoop(std::unique_ptr<ExportSink> sink, ExportLoopOptions options, member_shell::LedgerState& ledger,
             consensus::Node& node);
  ~ExportLoop();  // stop()
  ExportLoop(const ExportLoop&) = delete;
  ExportLoop& operator=(const ExportLoop&) = delete;

  // Takes over the counts of the stopped loop this one replaces (a reload,
  // docs/operations.md "Reloading a member"), so that the counters of
  // /metrics never go backwards within the process's life. Before start().
  void continue_counts(const ExportStatus& predecessor);
  void start();
  // Idempotent; joins the thread. A batch in flight finishes or fails first
  // (bounded by the database's timeouts).
  void stop();
  [[nodiscard]] ExportStatus status() const;

 private:
  void run();
  // One round; returns how long to wait before the next.
  unsigned step();
  // Submits the cursor entry the core asks for, if any.
  void submit_cursor(std::uint64_t ledger_exported_through);
  // Reads the database's cursor into the core; returns the wait when the
  // round must end here (a failure or the alarm).
  std::optional<unsigned> read_cursor(const member_shell::LedgerFigures& figures);
  void on_written(const WriteResult& written);
  // A log-retention round, when one is due (docs/accounting.md "Keeping the
  // log table bounded"); its failure is logged and counted, nothing more.
  void prune_if_due();
  // Lag for /status: `waiting` are the first records still to export.
  void publish_lag(const member_shell::LedgerFigures& figures,
                   const std::vector<accounting::HeldRecord>& waiting);
  // Records the failure; returns how long to wait before retrying.
  unsigned on_failure(const SinkError& error);
  void wait_ms(unsigned ms);

  std::unique_ptr<ExportSink> sink_;
  ExportLoopOptions options_;
  member_shell::LedgerState& ledger_;
  consensus::Node& node_;

  std::thread thread_;
  std::mutex wake_mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by wake_mutex_

  // Loop thread only: the decisions.
  exporter::ExportCore core_;
  bool prune_failing_ = false;  // the last retention round failed (logged once until one succeeds)

  mutable std::mutex status_mutex_;
  ExportStatus status_;
};

}  // namespace rw::member_shell
