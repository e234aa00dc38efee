// The exporter's thread: see export_loop.h. Exactly once rests on the sink
// (the cursor row checked and moved inside each batch's transaction); this
// loop only decides what to offer and when, so a wrong guess here can delay
// an export or offer records twice, never write them twice.
#include "member_shell/export_loop.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "accounting/entry.h"
#include "io/clock.h"

namespace rw::member_shell {
namespace {

// A cursor entry that has not shown up in the ledger after this long is
// submitted again (its submission may have failed with leadership moving).
constexpr std::int64_t kCursorResubmitMs = 1000;

}  // namespace

nlohmann::json to_json(const ExportStatus& status) {
  return nlohmann::json{{"database", status.database},
                        {"active", status.active},
                        {"connected", status.connected},
                        {"exported_through", status.exported_through},
                        {"lag_records", status.lag_records},
                        {"lag_seconds", status.lag_seconds},
                        {"records_exported", status.records_exported},
                        {"batches", status.batches},
                        {"failures", status.failures},
                        {"last_error", status.last_error}};
}

ExportLoop::ExportLoop(std::unique_ptr<ExportSink> sink, ExportLoopOptions options,
                       member_shell::LedgerState& ledger, consensus::Node& node)
    : sink_(std::move(sink)), options_(std::move(options)), ledger_(ledger), node_(node) {
  status_.database = options_.database;
  backoff_ms_ = options_.retry_initial_ms;
}

ExportLoop::~ExportLoop() { stop(); }

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
  if (!node_.ready_for_work()) {
    if (was_active_) {
      // Leadership moved: the new leader's exporter takes over from the
      // database's cursor. Forget ours; it is re-read when we lead again.
      spdlog::info("export: not the ready leader any more; pausing");
      sink_->close();
      was_active_ = false;
      cursor_known_ = false;
      std::lock_guard lock(status_mutex_);
      status_.active = false;
      status_.connected = false;
    }
    return 100;
  }
  if (!was_active_) {
    spdlog::info("export: ready leader; exporting to {}", options_.database);
    was_active_ = true;
    std::lock_guard lock(status_mutex_);
    status_.active = true;
  }
  const member_shell::LedgerFigures figures = ledger_.figures();
  if (!cursor_known_) {
    // The lag from the ledger alone, so that it shows while the database is
    // down too: records above the cluster's cursor and the oldest one's age.
    publish_lag(figures, ledger_.records_after(figures.exported_through, 1));
    auto through = sink_->exported_through();
    if (!through) return on_failure(through.error());
    cursor_ = *through;
    cursor_known_ = true;
  }
  // The database is ahead of the ledger (a batch committed but its cursor
  // entry did not, or is still on its way): tell the cluster.
  if (figures.exported_through < cursor_) submit_cursor(cursor_);

  std::vector<accounting::HeldRecord> batch = ledger_.records_after(cursor_, options_.batch_records_max);
  publish_lag(figures, batch);
  {
    std::lock_guard lock(status_mutex_);
    status_.exported_through = cursor_;
    status_.connected = true;
  }
  if (batch.empty()) return options_.poll_interval_ms;

  auto written = sink_->write(batch);
  if (!written) {
    // The transaction did not commit; the cursor is re-read on the retry.
    cursor_known_ = false;
    return on_failure(written.error());
  }
  if (backoff_ms_ != options_.retry_initial_ms) spdlog::info("export: database reachable again");
  backoff_ms_ = options_.retry_initial_ms;
  cursor_ = written->exported_through;
  submit_cursor(cursor_);
  {
    std::lock_guard lock(status_mutex_);
    status_.exported_through = cursor_;
    status_.records_exported += written->records_written;
    ++status_.batches;
    status_.last_error.clear();
  }
  return 0;  // more may be waiting: look again at once
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

void ExportLoop::submit_cursor(std::uint64_t exported_through) {
  const std::int64_t now = io::unix_now_ms();
  if (exported_through == submitted_cursor_ && now - submitted_at_ms_ < kCursorResubmitMs) return;
  // Fire and forget: a lost cursor entry is submitted again (above), and a
  // stale one is a no-op in the ledger (Ledger::apply_cursor).
  const auto outcome = node_.submit(accounting::encode_export_cursor_entry(exported_through, now),
                                    [](const consensus::Outcome&) {});
  if (outcome == consensus::Node::SubmitStatus::kQueued) {
    submitted_cursor_ = exported_through;
    submitted_at_ms_ = now;
  }
}

unsigned ExportLoop::on_failure(const SinkError& error) {
  spdlog::warn("export: {} (retrying in {} ms)", error.to_string(), backoff_ms_);
  {
    std::lock_guard lock(status_mutex_);
    status_.connected = false;
    ++status_.failures;
    status_.last_error = error.to_string();
  }
  // Wait this long; the next failure waits twice as long, up to the ceiling.
  const unsigned wait = backoff_ms_;
  backoff_ms_ = std::max(wait, std::min(options_.retry_max_ms, std::max(1u, wait) * 2));
  return wait;
}

}  // namespace rw::member_shell
