// Tests of LedgerState: the consensus port over the ledger, and the bounded
// copies the admin thread pages through.
#include "member_shell/ledger_state.h"

#include <gtest/gtest.h>

#include "accounting/accounting_request_for_test.h"
#include "accounting/entry.h"
#include "config/member_budget.h"
#include "config/member_config.h"
#include "consensus/node.h"
#include "member_shell/submission_server.h"
#include "submission/frames.h"

namespace rw::member_shell {
namespace {

using accounting::testing::entry_of;
using accounting::testing::record_of;
using accounting::testing::RequestSpec;

accounting::Record start_of(const std::string& session_id) {
  RequestSpec spec;
  spec.session_id = session_id;
  return record_of(spec);
}

TEST(LedgerState, AppliesEntriesAndPublishesFigures) {
  LedgerState state;
  const auto entry = entry_of({start_of("a"), start_of("b")});
  state.apply(3, entry);
  state.apply(5, entry);  // The same records again: duplicates, a no-op.
  const LedgerFigures figures = state.figures();
  EXPECT_EQ(figures.applied_index, 5u);
  EXPECT_EQ(figures.records_held, 2u);
  EXPECT_EQ(figures.sessions, 2u);
  EXPECT_EQ(figures.counters.records_applied, 2u);
  EXPECT_EQ(figures.counters.records_duplicate, 2u);
  EXPECT_TRUE(figures.accepting);
  EXPECT_TRUE(state.accepting());
}

// The simulator's invariant reads it (sim/): keys applied stay known after
// their export, while in the de-duplication window.
TEST(LedgerState, KnowsAppliedKeysBeforeAndAfterExport) {
  LedgerState state;
  state.apply(1, entry_of({start_of("a")}));
  EXPECT_TRUE(state.knows(start_of("a").key));
  EXPECT_FALSE(state.knows(start_of("b").key));
  state.apply(2, accounting::encode_export_cursor_entry(1));
  EXPECT_EQ(state.figures().records_held, 0u);
  EXPECT_TRUE(state.knows(start_of("a").key));
}

TEST(LedgerState, StopsAcceptingAtTheHeldRecordsBound) {
  LedgerState state(accounting::LedgerLimits{.held_records_max = 2});
  state.apply(1, entry_of({start_of("a")}));
  EXPECT_TRUE(state.accepting());
  state.apply(2, entry_of({start_of("b")}));
  EXPECT_FALSE(state.accepting());
  EXPECT_FALSE(state.figures().accepting);
}

TEST(LedgerState, SnapshotThenRestoreGivesTheSameState) {
  LedgerState first;
  first.apply(1, entry_of({start_of("a"), start_of("b")}));
  first.apply(2, entry_of({start_of("c")}));
  LedgerState second(accounting::LedgerLimits{.held_records_max = 3});
  ASSERT_TRUE(second.restore(first.snapshot()));
  EXPECT_EQ(second.snapshot(), first.snapshot());
  EXPECT_EQ(second.figures().records_held, 3u);
  // The restored ledger keeps this member's limits: at its bound now.
  EXPECT_FALSE(second.accepting());
}

// The key index is sized for the bounds before the first apply and again
// after a restore, so that no apply rehashes it (docs/accounting.md "The key
// index, sized once").
TEST(LedgerState, SizesTheKeyIndexForTheBoundsWhenBuiltAndWhenRestored) {
  const accounting::LedgerLimits limits{.held_records_max = 1'000, .exported_keys_max = 3'000};
  LedgerState state(limits);
  EXPECT_GE(state.figures().key_index_buckets, 4'000u);
  LedgerState small_first(accounting::LedgerLimits{.held_records_max = 2, .exported_keys_max = 2});
  small_first.apply(1, entry_of({start_of("a")}));
  ASSERT_LT(small_first.figures().key_index_buckets, 4'000u);
  ASSERT_TRUE(state.restore(small_first.snapshot()));
  EXPECT_GE(state.figures().key_index_buckets, 4'000u);
  EXPECT_EQ(state.figures().records_held, 1u);
}

TEST(LedgerState, RefusesACorruptSnapshotAndKeepsItsState) {
  LedgerState state;
  state.apply(1, entry_of({start_of("a")}));
  const auto before = state.snapshot();
  std::vector<std::uint8_t> corrupt = before;
  corrupt.back() ^= 1;
  EXPECT_FALSE(state.restore(corrupt));
  EXPECT_EQ(state.snapshot(), before);
}

TEST(LedgerState, PagesThroughRecordsInLogOrder) {
  LedgerState state;
  state.apply(4, entry_of({start_of("a"), start_of("b")}));
  state.apply(9, entry_of({start_of("c")}));
  // A page never ends inside an entry: its records share one index.
  auto page = state.records_after(0, 1);
  ASSERT_EQ(page.size(), 2u);
  EXPECT_EQ(page[0].index, 4u);
  EXPECT_EQ(page[1].index, 4u);
  page = state.records_after(4, 10);
  ASSERT_EQ(page.size(), 1u);
  EXPECT_EQ(page[0].index, 9u);
  EXPECT_TRUE(state.records_after(9, 10).empty());
}

TEST(LedgerState, PagesThroughSessionsByKey) {
  LedgerState state;
  state.apply(1, entry_of({start_of("a"), start_of("b"), start_of("c")}));
  auto first = state.sessions_after(nullptr, 2);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_LT(first[0].key, first[1].key);
  auto rest = state.sessions_after(&first[1].key, 2);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_LT(first[1].key, rest[0].key);
}

// docs/configuration.md promises that the member config's defaults are
// those of the node and the ledger.
TEST(MemberConfigDefaults, EqualNodeOptionsAndLedgerLimits) {
  const config::MemberConfig config;
  const consensus::NodeOptions node;
  const accounting::LedgerLimits ledger;
  EXPECT_EQ(config.raft.election_timeout_ms, node.election_timeout_ms);
  EXPECT_EQ(config.raft.heartbeat_timeout_ms, node.heartbeat_timeout_ms);
  EXPECT_EQ(config.raft.snapshot_threshold, node.snapshot_threshold);
  EXPECT_EQ(config.raft.snapshot_trailing, node.snapshot_trailing);
  EXPECT_EQ(config.ledger.held_records_max, ledger.held_records_max);
  EXPECT_EQ(config.ledger.held_bytes_max, ledger.held_bytes_max);
  EXPECT_EQ(config.ledger.sessions_max, ledger.sessions_max);
  EXPECT_EQ(config.ledger.sessions_bytes_max, ledger.sessions_bytes_max);
  EXPECT_EQ(config.ledger.session_expiry_multiple, ledger.session_expiry_multiple);
  EXPECT_EQ(config.ledger.session_default_interim_s, ledger.session_default_interim_s);
}

// The memory budget (docs/limits.md "Member memory budget") counts the
// window and the connections by these constants.
TEST(MemberConfigDefaults, BudgetConstantsEqualTheLedgerAndTheSubmissionServer) {
  EXPECT_EQ(config::kWindowKeysMax, accounting::LedgerLimits{}.exported_keys_max);
  EXPECT_EQ(config::MemberConfig{}.submission_connections_max, SubmissionServerOptions{}.connections_max);
  EXPECT_GE(config::kConnectionBytes, submission::kLengthPrefixBytes + submission::kFrameBodyBytesMax);
}

}  // namespace
}  // namespace rw::member_shell
