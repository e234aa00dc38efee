// Tests of the exporter's decisions, driven round by round as the shell
// (src/member_shell/export_loop.cc) drives them, against a fake database
// (a cursor, the rows written, records it refuses, an outage switch) and a
// fake ledger (held records, exported_through). The SQL itself runs on real
// databases in src/member_shell/sql_export_sink_test.cc.
#include "exporter/export_core.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

namespace rw::exporter {
namespace {

using accounting::HeldRecord;

// What a real sink does, in memory: one transaction per call.
struct FakeDatabase {
  std::uint64_t cursor = 0;
  std::set<std::uint64_t> refused;  // record ids (HeldRecord::record.status_type) the database refuses
  bool down = false;
  std::vector<std::uint32_t> rows;         // ids written, in order
  std::vector<std::uint32_t> quarantined;  // ids quarantined
  int transactions = 0;

  // write / write_isolating: the failure or the new cursor.
  std::optional<Failure> write(std::span<const HeldRecord> records, std::uint64_t floor, bool isolate) {
    ++transactions;
    if (down) return Failure::kUnavailable;
    if (cursor < floor) return Failure::kCursorBehind;
    std::vector<std::uint32_t> fresh_rows, fresh_quarantine;
    for (const HeldRecord& held : records) {
      if (held.index <= cursor) continue;
      const std::uint32_t id = held.record.status_type;
      if (refused.contains(id)) {
        if (!isolate) return Failure::kRecordRefused;
        fresh_quarantine.push_back(id);
      } else {
        fresh_rows.push_back(id);
      }
    }
    rows.insert(rows.end(), fresh_rows.begin(), fresh_rows.end());
    quarantined.insert(quarantined.end(), fresh_quarantine.begin(), fresh_quarantine.end());
    if (!records.empty()) cursor = std::max(cursor, records.back().index);
    return std::nullopt;
  }
};

// The ledger side: held records and the cluster's cursor. Record ids are
// carried in status_type so the fake database can tell them apart.
struct FakeLedger {
  std::vector<HeldRecord> held;
  std::uint64_t exported_through = 0;

  // `entries` entries of `per_entry` records from log index 1; ids from 1.
  FakeLedger(std::size_t entries, std::size_t per_entry) {
    std::uint32_t id = 0;
    for (std::size_t e = 1; e <= entries; ++e) {
      for (std::size_t r = 0; r < per_entry; ++r) {
        HeldRecord h;
        h.index = e;
        h.record.status_type = ++id;
        held.push_back(h);
      }
    }
  }
  std::vector<HeldRecord> after(std::uint64_t index, std::size_t max) const {
    std::vector<HeldRecord> out;
    for (const HeldRecord& h : held) {
      if (h.index <= index) continue;
      if (out.size() >= max && h.index != out.back().index) break;
      out.push_back(h);
    }
    return out;
  }
  void apply_cursor(std::uint64_t cursor) {
    if (cursor <= exported_through) return;
    exported_through = cursor;
    std::erase_if(held, [&](const HeldRecord& h) { return h.index <= cursor; });
  }
};

// One round of the shell's step(); returns the wait it decided.
unsigned run_round(ExportCore& core, FakeDatabase& db, FakeLedger& ledger, std::int64_t now_ms,
                   bool ready = true) {
  core.on_round(ready);
  if (!core.active()) return core.follower_wait_ms();
  if (core.needs_cursor()) {
    if (db.down) return core.on_failure(Failure::kUnavailable);
    if (!core.on_cursor(db.cursor, ledger.exported_through)) return core.alarm_recheck_ms();
  }
  auto submit = [&] {
    const Instant now = Instant{} + Duration::milliseconds(now_ms);
    if (auto c = core.cursor_to_submit(ledger.exported_through, now)) {
      core.on_submitted(*c, now);
      ledger.apply_cursor(*c);
    }
  };
  submit();
  const Instant now = Instant{} + Duration::milliseconds(now_ms);
  if (const unsigned wait = core.batch_wait_ms(ledger.held.size(), now); wait > 0) return wait;
  const std::vector<HeldRecord> batch = ledger.after(core.cursor(), core.fetch_max());
  const Plan plan = core.plan(batch);
  if (plan.mode == Plan::Mode::kNothing) return 20;
  core.on_write_began(now);
  auto failure = db.write(std::span(batch).first(plan.records), ledger.exported_through,
                          plan.mode == Plan::Mode::kIsolate);
  if (failure) return core.on_failure(*failure);
  core.on_written(db.cursor);
  submit();
  return 0;
}

// Runs rounds until nothing is held or `rounds_max` rounds passed.
void drain(ExportCore& core, FakeDatabase& db, FakeLedger& ledger, int rounds_max = 1000) {
  for (int i = 0; i < rounds_max && !ledger.held.empty(); ++i) run_round(core, db, ledger, i * 1000);
}

std::vector<std::uint32_t> ids(std::uint32_t first, std::uint32_t last,
                               std::set<std::uint32_t> without = {}) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t id = first; id <= last; ++id)
    if (!without.contains(id)) out.push_back(id);
  return out;
}

TEST(ExportCore, ExportsEverythingInBatchesOfWholeEntries) {
  ExportCore core(CoreOptions{.batch_records_max = 7});
  FakeDatabase db;
  FakeLedger ledger(10, 3);
  drain(core, db, ledger);
  EXPECT_TRUE(ledger.held.empty());
  EXPECT_EQ(ledger.exported_through, 10u);
  EXPECT_EQ(db.rows, ids(1, 30));
  EXPECT_EQ(db.transactions, 4);  // 9 + 9 + 9 + 3 records: 7 rounded up to whole entries
}

TEST(ExportCore, ARefusedRecordIsIsolatedAndQuarantinedTheRestExported) {
  ExportCore core(CoreOptions{.batch_records_max = 10'000});
  FakeDatabase db;
  FakeLedger ledger(64, 4);
  db.refused = {150};  // entry 38, its second record
  drain(core, db, ledger);
  EXPECT_TRUE(ledger.held.empty());
  EXPECT_EQ(db.quarantined, std::vector<std::uint32_t>{150});
  EXPECT_EQ(db.rows, ids(1, 256, {150}));
  // Bounded work: halving 64 entries down to one, each half written or
  // refused, then the isolating write.
  EXPECT_LE(db.transactions, 2 * 6 + 2);
  EXPECT_FALSE(core.refused_through().has_value());
}

TEST(ExportCore, SeveralRefusedRecordsAreEachQuarantined) {
  ExportCore core(CoreOptions{.batch_records_max = 100});
  FakeDatabase db;
  FakeLedger ledger(50, 2);
  db.refused = {1, 2, 57, 100};  // a whole entry, one in the middle, the very last
  drain(core, db, ledger);
  EXPECT_TRUE(ledger.held.empty());
  EXPECT_EQ(db.quarantined, (std::vector<std::uint32_t>{1, 2, 57, 100}));
  EXPECT_EQ(db.rows, ids(1, 100, {1, 2, 57, 100}));
}

TEST(ExportCore, AnOutageBacksOffDoublingThenResets) {
  ExportCore core(CoreOptions{.retry_initial_ms = 100, .retry_max_ms = 350});
  FakeDatabase db;
  FakeLedger ledger(3, 1);
  db.down = true;
  std::vector<unsigned> waits;
  for (int i = 0; i < 5; ++i) waits.push_back(run_round(core, db, ledger, i));
  EXPECT_EQ(waits, (std::vector<unsigned>{100, 200, 350, 350, 350}));
  EXPECT_EQ(db.transactions, 0);  // the cursor read failed each time
  db.down = false;
  EXPECT_EQ(run_round(core, db, ledger, 10), 0u);
  EXPECT_TRUE(ledger.held.empty());
  db.down = true;
  ledger = FakeLedger(5, 1);
  ledger.apply_cursor(3);
  // Past the pacing delay since the write at 10 ms: the write fails, and
  // its backoff is back to the first wait.
  EXPECT_EQ(run_round(core, db, ledger, 110), 100u);
}

TEST(ExportCore, ACursorBelowTheClustersRaisesTheAlarmAndStops) {
  ExportCore core(CoreOptions{});
  FakeDatabase db;
  FakeLedger ledger(10, 1);
  drain(core, db, ledger);
  ASSERT_EQ(ledger.exported_through, 10u);
  // New records arrive; the database is restored from a backup taken at 4.
  FakeLedger more(14, 1);
  more.apply_cursor(10);
  db.cursor = 4;
  core.on_round(false);  // a leader change: the cursor is re-read
  EXPECT_EQ(run_round(core, db, more, 0), core.alarm_recheck_ms());
  ASSERT_TRUE(core.alarm().has_value());
  EXPECT_EQ(core.alarm()->database_cursor, 4u);
  EXPECT_EQ(core.alarm()->ledger_exported_through, 10u);
  const auto rows = db.rows.size();
  for (int i = 0; i < 5; ++i) run_round(core, db, more, i);
  EXPECT_EQ(db.rows.size(), rows) << "nothing written past a hole";
  EXPECT_EQ(more.held.size(), 4u);
  // The operator accepts the gap (moves the database's cursor to 10).
  db.cursor = 10;
  drain(core, db, more);
  EXPECT_FALSE(core.alarm().has_value());
  EXPECT_TRUE(more.held.empty());
}

TEST(ExportCore, ACursorMovedBackWhileExportingIsCaughtByTheWrite) {
  ExportCore core(CoreOptions{.batch_records_max = 2});
  FakeDatabase db;
  FakeLedger ledger(6, 1);
  run_round(core, db, ledger, 0);
  ASSERT_EQ(ledger.exported_through, 2u);
  db.cursor = 1;                                  // rolled back under the running exporter
  EXPECT_EQ(run_round(core, db, ledger, 2), 0u);  // the write's floor check fails
  EXPECT_EQ(run_round(core, db, ledger, 3), core.alarm_recheck_ms());
  EXPECT_TRUE(core.alarm().has_value());
}

TEST(ExportCore, LeadershipEdgesForgetTheDatabaseState) {
  ExportCore core(CoreOptions{});
  EXPECT_EQ(core.on_round(false), Edge::kNone);
  EXPECT_EQ(core.on_round(true), Edge::kBecameActive);
  EXPECT_EQ(core.on_round(true), Edge::kNone);
  EXPECT_TRUE(core.on_cursor(7, 5));
  EXPECT_FALSE(core.needs_cursor());
  EXPECT_EQ(core.on_round(false), Edge::kBecameInactive);
  EXPECT_TRUE(core.needs_cursor());
}

TEST(ExportCore, TheCursorEntryIsSubmittedAgainOnlyAfterTheResubmitTime) {
  ExportCore core(CoreOptions{.cursor_resubmit_ms = 1000});
  core.on_round(true);
  ASSERT_TRUE(core.on_cursor(9, 5));
  const auto at = [](std::int64_t ms) { return Instant{} + Duration::milliseconds(ms); };
  EXPECT_EQ(core.cursor_to_submit(5, at(0)), std::optional<std::uint64_t>(9));
  core.on_submitted(9, at(0));
  EXPECT_FALSE(core.cursor_to_submit(5, at(999)).has_value());
  EXPECT_EQ(core.cursor_to_submit(5, at(1000)), std::optional<std::uint64_t>(9));
  EXPECT_FALSE(core.cursor_to_submit(9, at(5000)).has_value());  // applied
}

TEST(ExportCore, ARefusalInTheIsolatingWriteBacksOff) {
  // The database refuses even the quarantine (the shell reports it as a
  // failure of the isolating write): retried with backoff, never dropped.
  ExportCore core(CoreOptions{.retry_initial_ms = 50});
  core.on_round(true);
  ASSERT_TRUE(core.on_cursor(0, 0));
  FakeLedger ledger(1, 2);
  EXPECT_EQ(core.plan(ledger.held).mode, Plan::Mode::kWrite);
  EXPECT_EQ(core.on_failure(Failure::kRecordRefused), 0u);
  ASSERT_TRUE(core.on_cursor(0, 0));
  const Plan isolate = core.plan(ledger.held);
  EXPECT_EQ(isolate.mode, Plan::Mode::kIsolate);
  EXPECT_EQ(isolate.records, 2u);
  EXPECT_EQ(core.on_failure(Failure::kRecordRefused), 50u);
  ASSERT_TRUE(core.on_cursor(0, 0));
  EXPECT_EQ(core.plan(ledger.held).mode, Plan::Mode::kIsolate);
}

// docs/accounting.md "Pacing the exporter": records arriving faster than the
// exporter looks for them go in one batch per batch_delay_ms, not one per
// round; a full batch, a split and a new leadership do not wait.
TEST(ExportCore, RecordsItKeepsUpWithGoInOneBatchPerDelay) {
  ExportCore core(CoreOptions{.batch_records_max = 100, .batch_delay_ms = 100});
  FakeDatabase db;
  FakeLedger ledger(0, 0);
  // One 1-record entry every 2 ms for a second, a round whenever the last
  // one's wait is over (a wait of 0 looks again 1 ms later).
  std::uint64_t index = 0;
  std::uint32_t id = 0;
  std::int64_t next_round = 0;
  std::vector<unsigned> waits;
  for (std::int64_t now = 0; now < 1000; ++now) {
    if (now % 2 == 0) {
      HeldRecord held;
      held.index = ++index;
      held.record.status_type = ++id;
      ledger.held.push_back(held);
    }
    if (now < next_round) continue;
    const unsigned wait = run_round(core, db, ledger, now);
    waits.push_back(wait);
    next_round = now + std::max(1u, wait);
  }
  EXPECT_EQ(db.rows, ids(1, db.rows.empty() ? 0 : db.rows.back()));
  EXPECT_GE(db.rows.size(), 450u);
  // Without pacing each round writes the record or two that arrived since
  // the last: about 500 transactions. Paced: one per 100 ms.
  EXPECT_LE(db.transactions, 11);
  EXPECT_GE(db.transactions, 9);
  EXPECT_TRUE(std::ranges::any_of(waits, [](unsigned w) { return w > 50; }));
}

TEST(ExportCore, AFullBatchANewLeadershipAndASplitDoNotWait) {
  ExportCore core(CoreOptions{.batch_records_max = 10, .batch_delay_ms = 100});
  const Instant t0 = Instant{} + Duration::seconds(5);
  core.on_round(true);
  EXPECT_EQ(core.batch_wait_ms(1, t0), 0u);  // nothing written yet in this leadership
  core.on_write_began(t0);
  EXPECT_EQ(core.batch_wait_ms(1, t0 + Duration::milliseconds(30)), 70u);
  EXPECT_EQ(core.batch_wait_ms(1, t0 + Duration::microseconds(30'500)), 70u);  // rounded up
  EXPECT_EQ(core.batch_wait_ms(9, t0 + Duration::milliseconds(99)), 1u);
  EXPECT_EQ(core.batch_wait_ms(10, t0 + Duration::milliseconds(30)), 0u);  // a batch's worth
  EXPECT_EQ(core.batch_wait_ms(1, t0 + Duration::milliseconds(100)), 0u);
  // A new leadership writes at once.
  core.on_round(false);
  core.on_round(true);
  EXPECT_EQ(core.batch_wait_ms(1, t0 + Duration::milliseconds(30)), 0u);
  // Looking for a refused record: the halves go at once.
  ASSERT_TRUE(core.on_cursor(0, 0));
  FakeLedger ledger(4, 1);
  const Plan plan = core.plan(ledger.held);
  ASSERT_EQ(plan.mode, Plan::Mode::kWrite);
  core.on_write_began(t0);
  core.on_failure(Failure::kRecordRefused);
  ASSERT_TRUE(core.refused_through().has_value());
  EXPECT_EQ(core.batch_wait_ms(1, t0 + Duration::milliseconds(30)), 0u);
  // Off.
  ExportCore unpaced(CoreOptions{.batch_records_max = 10, .batch_delay_ms = 0});
  unpaced.on_round(true);
  unpaced.on_write_began(t0);
  EXPECT_EQ(unpaced.batch_wait_ms(1, t0), 0u);
}

// docs/accounting.md "Keeping the log table bounded": a retention round is
// due at once in a leadership, again a second later while each deletes a
// full round's rows, and a minute later after any other round or a failure;
// never when retention is off or this member does not export.
TEST(ExportCore, LogRetentionRoundsComeAtOnceThenAsTheLastOneLeftThem) {
  ExportCore core(CoreOptions{.log_retention_days = 30, .prune_rows_max = 100});
  const Instant t0 = Instant{} + Duration::seconds(5);
  const std::int64_t wall = 1'800'000'000'000;
  const std::int64_t cut = wall - 30LL * 86'400'000;
  EXPECT_FALSE(core.prune_before(t0, wall).has_value());  // not the exporting leader
  core.on_round(true);
  EXPECT_EQ(core.prune_before(t0, wall), cut);
  EXPECT_EQ(core.prune_rows_max(), 100u);
  core.on_pruned(t0, 100);  // a full round: more is waiting
  EXPECT_FALSE(core.prune_before(t0 + Duration::milliseconds(999), wall).has_value());
  EXPECT_EQ(core.prune_before(t0 + Duration::seconds(1), wall + 1000), cut + 1000);
  core.on_pruned(t0 + Duration::seconds(1), 99);  // the rest
  EXPECT_FALSE(core.prune_before(t0 + Duration::seconds(60), wall).has_value());
  EXPECT_TRUE(core.prune_before(t0 + Duration::seconds(61), wall).has_value());
  core.on_pruned(t0 + Duration::seconds(61), std::nullopt);  // failed
  EXPECT_FALSE(core.prune_before(t0 + Duration::seconds(62), wall).has_value());
  EXPECT_TRUE(core.prune_before(t0 + Duration::seconds(121), wall).has_value());
  // Leadership lost and won again: due at once.
  core.on_pruned(t0 + Duration::seconds(121), 0);
  core.on_round(false);
  EXPECT_FALSE(core.prune_before(t0 + Duration::seconds(122), wall).has_value());
  core.on_round(true);
  EXPECT_TRUE(core.prune_before(t0 + Duration::seconds(122), wall).has_value());
  // Off.
  ExportCore keeping(CoreOptions{});
  keeping.on_round(true);
  EXPECT_FALSE(keeping.prune_before(t0, wall).has_value());
}

}  // namespace
}  // namespace rw::exporter
