// The exporter's thread: see export_loop.h. Exactly once rests on the sink
// (the cursor row checked and moved inside each batch's transaction); this
// loop and its core (exporter::ExportCore) only decide what to offer and
// when, so a wrong guess here can delay an export or offer records twice,
// never write them twice.
#include "member_shell/export_loop.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "accounting/entry.h"
#include "io/clock.h"

namespace rw::member_shell {
namespace {

exporter::Failure failure_of(const SinkError& error) {
  switch (error.kind) {
    case SinkError::Kind::kUnavailable:
      return exporter::Failure::kUnavailable;
    case SinkError::Kind::kRecordRefused:
      return exporter::Failure::kRecordRefused;
    case SinkError::Kind::kCursorBehind:
      return exporter::Failure::kCursorBehind;
    case SinkError::Kind::kRejected:
      break;
  }
  return exporter::Failure::kRejected;
}

}  // namespace

nlohmann::json to_json(const ExportStatus& status) {
  nlohmann::json out{{"database", status.database},
                     {"active", status.active},
                     {"connected", status.connected},
                     {"exported_through", status.exported_through},
                     {"lag_records", status.lag_records},
                     {"lag_seconds", status.lag_seconds},
                     {"records_exported", status.records_exported},
                     {"batches", status.batches},
                     {"failures", status.failures},
                     {"last_error", status.last_error},
                     {"records_quarantined", status.records_quarantined},
                     {"records_resent", status.records_resent},
                     {"log_rows_pruned", status.log_rows_pruned},
                     {"prune_failures", status.prune_failures},
                     {"cursor_alarm", nullptr}};
  if (status.cursor_alarm) {
    out["cursor_alarm"] = {{"database_cursor", status.cursor_alarm->database_cursor},
                           {"ledger_exported_through", status.cursor_alarm->ledger_exported_through}};
  }
  return out;
}

ExportLoop::ExportLoop(std::unique_ptr<ExportSink> sink, ExportLoopOptions options,
                       member_shell::LedgerState& ledger, consensus::Node& node)
    : sink_(std::move(sink)),
      options_(std::move(options)),
      ledger_(ledger),
      node_(node),
      core_(exporter::CoreOptions{.batch_records_max = options_.batch_records_max,
                                  .poll_interval_ms = options_.poll_interval_ms,
                                  .batch_delay_ms = options_.batch_delay_ms,
                                  .retry_initial_ms = options_.retry_initial_ms,
                                  .retry_max_ms = options_.retry_max_ms,
                                  .log_retention_days = options_.log_retention_days}) {
  status_.database = options_.database;
}

ExportLoop::~ExportLoop() { stop(); }

void ExportLoop::continue_counts(const ExportStatus& predecessor) {
  std::lock_guard lock(status_mutex_);
  status_.records_exported = predecessor.records_exported;
  status_.batches = predecessor.batches;
  status_.failures = predecessor.failures;
  status_.records_quarantined = predecessor.records_quarantined;
  status_.records_resent = predecessor.records_resent;
  status_.log_rows_pruned = predecessor.log_rows_pruned;
  status_.prune_failures = predecessor.prune_failures;
}

void ExportLoop::start() {
  thread_ = std::thread([this] { run(); });
}

void ExportLoop::stop() {
  {
    std::lock_guard lock(wake_mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

ExportStatus ExportLoop::status() const {
  std::lock_guard lock(status_mutex_);
  return status_;
}

void ExportLoop::wait_ms(unsigned ms) {
  std::unique_lock lock(wake_mutex_);
  wake_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stopping_; });
}

void ExportLoop::run() {
  pthread_setname_np(pthread_self(), "rw-export");
  for (;;) {
    {
      std::lock_guard lock(wake_mutex_);
      if (stopping_) break;
    }
    wait_ms(step());
  }
  sink_->close();
}

unsigned ExportLoop::step() {
  const exporter::Edge edge = core_.on_round(node_.ready_for_work());
  if (edge == exporter::Edge::kBecameInactive) {
    // Leadership moved: the new leader's exporter takes over from the
    // database's cursor.
    spdlog::info("export: not the ready leader any more; pausing");
    sink_->close();
    std::lock_guard lock(status_mutex_);
    status_.active = false;
    status_.connected = false;
    status_.cursor_alarm.reset();
  } else if (edge == exporter::Edge::kBecameActive) {
    spdlog::info("export: ready leader; exporting to {}", options_.database);
    std::lock_guard lock(status_mutex_);
    status_.active = true;
  }
  if (!core_.active()) return core_.follower_wait_ms();
  const member_shell::LedgerFigures figures = ledger_.figures();
  if (core_.needs_cursor()) {
    if (auto wait = read_cursor(figures)) return *wait;
  }
  // The database is ahead of the ledger (a batch committed but its cursor
  // entry did not, or is still on its way): tell the cluster.
  submit_cursor(figures.exported_through);
  prune_if_due();
  // Less than a batch waits and the last write began under batch_delay_ms
  // ago: let the records gather (docs/accounting.md "Pacing the exporter").
  if (const unsigned wait = core_.batch_wait_ms(figures.records_held, io::monotonic_now()); wait > 0)
    return wait;

  std::vector<accounting::HeldRecord> batch = ledger_.records_after(core_.cursor(), core_.fetch_max());
  publish_lag(figures, batch);
  {
    std::lock_guard lock(status_mutex_);
    status_.exported_through = core_.cursor();
    status_.connected = true;
  }
  const exporter::Plan plan = core_.plan(batch);
  if (plan.mode == exporter::Plan::Mode::kNothing) return options_.poll_interval_ms;
  const auto offered = std::span<const accounting::HeldRecord>(batch).first(plan.records);
  if (plan.mode == exporter::Plan::Mode::kIsolate) {
    spdlog::warn("export: the database refused a record of log index {}; writing its entry record by record",
                 offered.front().index);
  }
  core_.on_write_began(io::monotonic_now());
  auto written = plan.mode == exporter::Plan::Mode::kIsolate
                     ? sink_->write_isolating(offered, figures.exported_through)
                     : sink_->write(offered, figures.exported_through);
  if (!written) return on_failure(written.error());
  on_written(*written);
  submit_cursor(figures.exported_through);
  return 0;  // more may be waiting: look again at once
}

std::optional<unsigned> ExportLoop::read_cursor(const member_shell::LedgerFigures& figures) {
  // The lag from the ledger alone, so that it shows while the database is
  // down too: records above the cluster's cursor and the oldest one's age.
  publish_lag(figures, ledger_.records_after(figures.exported_through, 1));
  auto through = sink_->exported_through();
  if (!through) return on_failure(through.error());
  const bool had_alarm = core_.alarm().has_value();
  if (!core_.on_cursor(*through, figures.exported_through)) {
    const exporter::CursorAlarm alarm = *core_.alarm();
    if (!had_alarm) {
      spdlog::error(
          "export: STOPPED: the database's export cursor ({}) is below the cluster's ({}): the records "
          "between them left the cluster but are not in the database (a restored backup, a promoted "
          "asynchronous replica, another SQLite file?); see docs/operations.md \"Export cursor alarm\"",
          alarm.database_cursor, alarm.ledger_exported_through);
    }
    std::lock_guard lock(status_mutex_);
    status_.cursor_alarm = alarm;
    status_.connected = true;
    status_.exported_through = *through;
    return core_.alarm_recheck_ms();
  }
  if (had_alarm)
    spdlog::warn("export: the database's cursor ({}) is no longer below the cluster's; resuming", *through);
  std::lock_guard lock(status_mutex_);
  status_.cursor_alarm.reset();
  return std::nullopt;
}

void ExportLoop::on_written(const WriteResult& written) {
  if (core_.on_written(written.exported_through)) spdlog::info("export: database reachable again");
  for (const QuarantinedRecord& q : written.quarantined) {
    spdlog::warn("export: quarantined the record at log index {} position {} (key {}) in {}: {}", q.index,
                 q.position, q.key, exporter::kQuarantineTable, q.error);
  }
  if (written.records_known > 0) {
    spdlog::info("export: {} re-sent record(s) already in {} skipped", written.records_known,
                 exporter::kLogTable);
  }
  std::lock_guard lock(status_mutex_);
  status_.exported_through = written.exported_through;
  status_.records_exported += written.records_written - written.records_known - written.quarantined.size();
  status_.records_quarantined += written.quarantined.size();
  status_.records_resent += written.records_known;
  ++status_.batches;
  status_.last_error.clear();
}

void ExportLoop::prune_if_due() {
  const Instant now = io::monotonic_now();
  const std::optional<std::int64_t> before = core_.prune_before(now, io::unix_now_ms());
  if (!before) return;
  auto deleted = sink_->prune_log(*before, core_.prune_rows_max());
  core_.on_pruned(io::monotonic_now(), deleted ? std::optional<std::uint64_t>(*deleted) : std::nullopt);
  if (!deleted) {
    // The export goes on: its next write reconnects if the database is gone.
    if (!prune_failing_) {
      spdlog::warn("export: log retention: {} (retrying every minute; the export goes on)",
                   deleted.error().to_string());
    }
    prune_failing_ = true;
    std::lock_guard lock(status_mutex_);
    ++status_.prune_failures;
    return;
  }
  if (prune_failing_) spdlog::info("export: log retention works again");
  prune_failing_ = false;
  std::lock_guard lock(status_mutex_);
  status_.log_rows_pruned += *deleted;
}

void ExportLoop::publish_lag(const member_shell::LedgerFigures& figures,
                             const std::vector<accounting::HeldRecord>& waiting) {
  std::lock_guard lock(status_mutex_);
  status_.lag_records = waiting.empty() ? 0 : figures.records_held;
  status_.lag_seconds =
      waiting.empty()
          ? 0.0
          : std::max(0.0, static_cast<double>(io::unix_now_ms() - waiting.front().record.received_unix_ms) /
                              1000.0);
}

void ExportLoop::submit_cursor(std::uint64_t ledger_exported_through) {
  // Two clocks: the resubmission is paced by the monotonic one (a wall clock
  // stepped back must not hold a lost cursor entry back), while the entry
  // carries the wall clock as every entry does: the log clock
  // (docs/accounting.md "The log clock").
  const Instant now = io::monotonic_now();
  const std::optional<std::uint64_t> cursor = core_.cursor_to_submit(ledger_exported_through, now);
  if (!cursor) return;
  // Fire and forget: a lost cursor entry is submitted again, and a stale
  // one is a no-op in the ledger (Ledger::apply_cursor).
  const auto outcome = node_.submit(accounting::encode_export_cursor_entry(*cursor, io::unix_now_ms()),
                                    [](const consensus::Outcome&) {});
  if (outcome == consensus::Node::SubmitStatus::kQueued) core_.on_submitted(*cursor, now);
}

unsigned ExportLoop::on_failure(const SinkError& error) {
  const unsigned wait = core_.on_failure(failure_of(error));
  if (error.kind == SinkError::Kind::kRecordRefused) {
    spdlog::warn("export: {} (splitting the batch to find it)", error.to_string());
  } else {
    spdlog::warn("export: {} (retrying in {} ms)", error.to_string(), wait);
  }
  std::lock_guard lock(status_mutex_);
  if (error.kind != SinkError::Kind::kRecordRefused) status_.connected = false;
  ++status_.failures;
  status_.last_error = error.to_string();
  return wait;
}

}  // namespace rw::member_shell
