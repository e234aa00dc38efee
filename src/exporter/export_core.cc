// The exporter's decisions: see export_core.h. The split keeps one
// invariant: while refused_through_ is set, a record the database refuses
// lies in (cursor_, refused_through_]. A refused write shrinks that range to
// the entries it offered, a committed one moves the cursor past them, and
// each offer is half the entries of the range, so a refused record costs at
// most about 2 log2(entries in a batch) + 1 transactions (docs/limits.md).
#include "exporter/export_core.h"

#include <algorithm>
#include <vector>

namespace rw::exporter {

ExportCore::ExportCore(CoreOptions options) : options_(options), backoff_ms_(options.retry_initial_ms) {}

Edge ExportCore::on_round(bool ready) {
  if (ready == active_) return Edge::kNone;
  active_ = ready;
  if (ready) return Edge::kBecameActive;
  // The next leader's exporter starts from the database's cursor; ours is
  // re-read when we lead again, and so is any alarm or split in progress.
  cursor_known_ = false;
  alarm_.reset();
  refused_through_.reset();
  last_plan_ = {};
  write_began_.reset();
  prune_due_.reset();
  return Edge::kBecameInactive;
}

bool ExportCore::on_cursor(std::uint64_t database_cursor, std::uint64_t ledger_exported_through) {
  if (database_cursor < ledger_exported_through) {
    // Going on would write the records above database_cursor that are
    // still held and leave a hole below: never silently.
    alarm_ = CursorAlarm{database_cursor, ledger_exported_through};
    cursor_known_ = false;
    return false;
  }
  alarm_.reset();
  cursor_ = database_cursor;
  cursor_known_ = true;
  if (refused_through_ && *refused_through_ <= cursor_) refused_through_.reset();
  return true;
}

std::optional<std::uint64_t> ExportCore::cursor_to_submit(std::uint64_t ledger_exported_through,
                                                          Instant now) const {
  if (!cursor_known_ || ledger_exported_through >= cursor_) return std::nullopt;
  if (submitted_at_ && submitted_cursor_ == cursor_ &&
      now - *submitted_at_ < Duration::milliseconds(options_.cursor_resubmit_ms))
    return std::nullopt;
  return cursor_;
}

unsigned ExportCore::batch_wait_ms(std::size_t held, Instant now) const {
  if (!write_began_ || refused_through_ || held >= options_.batch_records_max) return 0;
  const Duration since = now - *write_began_;
  const Duration delay = Duration::milliseconds(options_.batch_delay_ms);
  if (since >= delay) return 0;
  // Round up: waking a fraction of a millisecond early would only wait again.
  return static_cast<unsigned>(((delay - since).ns + 999'999) / 1'000'000);
}

std::optional<std::int64_t> ExportCore::prune_before(Instant now, std::int64_t wall_unix_ms) const {
  if (options_.log_retention_days == 0 || !active_ || (prune_due_ && now < *prune_due_)) return std::nullopt;
  return wall_unix_ms - static_cast<std::int64_t>(options_.log_retention_days) * 86'400'000;
}

void ExportCore::on_pruned(Instant now, std::optional<std::uint64_t> deleted) {
  const bool more = deleted && *deleted >= options_.prune_rows_max;
  prune_due_ = now + Duration::milliseconds(more ? options_.prune_again_ms : options_.prune_interval_ms);
}

void ExportCore::on_submitted(std::uint64_t cursor, Instant now) {
  submitted_cursor_ = cursor;
  submitted_at_ = now;
}

Plan ExportCore::plan(std::span<const accounting::HeldRecord> fetched) {
  last_plan_ = {};
  if (fetched.empty()) return last_plan_;
  // Entry boundaries: ends[k] is the number of records in the first k+1 entries.
  std::vector<std::size_t> ends;
  for (std::size_t i = 0; i < fetched.size(); ++i) {
    if (i + 1 == fetched.size() || fetched[i + 1].index != fetched[i].index) ends.push_back(i + 1);
  }
  std::size_t entries = ends.size();
  if (refused_through_) {
    std::size_t suspects = 0;
    while (suspects < ends.size() && fetched[ends[suspects] - 1].index <= *refused_through_) ++suspects;
    if (suspects == 0) {
      refused_through_.reset();  // someone else exported the range
    } else {
      entries = suspects;
    }
  }
  if (!refused_through_) {
    last_plan_ = Plan{Plan::Mode::kWrite, fetched.size()};
  } else if (entries == 1) {
    last_plan_ = Plan{Plan::Mode::kIsolate, ends[0]};
  } else {
    last_plan_ = Plan{Plan::Mode::kWrite, ends[entries / 2 - 1]};
  }
  last_plan_through_ = fetched[last_plan_.records - 1].index;
  return last_plan_;
}

bool ExportCore::on_written(std::uint64_t exported_through) {
  cursor_ = std::max(cursor_, exported_through);
  cursor_known_ = true;
  if (refused_through_ && *refused_through_ <= cursor_) refused_through_.reset();
  last_plan_ = {};
  const bool recovered = backoff_ms_ != options_.retry_initial_ms;
  backoff_ms_ = options_.retry_initial_ms;
  return recovered;
}

unsigned ExportCore::on_failure(Failure failure) {
  // The transaction did not commit; the cursor is re-read on the next round.
  cursor_known_ = false;
  const Plan failed = last_plan_;
  last_plan_ = {};
  if (failure == Failure::kRecordRefused && failed.mode == Plan::Mode::kWrite) {
    // Narrow the range at once: each such failure halves it, so no backoff.
    refused_through_ = last_plan_through_;
    return 0;
  }
  if (failure == Failure::kCursorBehind) return 0;  // the re-read raises the alarm
  // Unavailable, rejected, or a refusal the isolating write could not
  // quarantine: wait this long; the next failure waits twice as long.
  const unsigned wait = backoff_ms_;
  backoff_ms_ = std::max(wait, std::min(options_.retry_max_ms, std::max(1u, wait) * 2));
  return wait;
}

}  // namespace rw::exporter
