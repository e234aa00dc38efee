// Cluster tests on libraft's raft_fixture (in-process, virtual time,
// deterministic), with the real accounting ledger as the state machine (and
// the toy DedupLog): elections during submission, a leader lost before
// commit, catch-up by snapshot, member replacement, and seeded randomised
// runs of partitions, kills, revivals, snapshots and disk faults that check
// the invariants after every step, each seed in a forked child.
// RW_SEED=<n> replays one seed in this process; RW_SEED_COUNT=<n> runs more.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/random.h"
#include "consensus/fixture_cluster_for_test.h"
#include "consensus/forked_seed_for_test.h"
#include "consensus/ledger_invariants_for_test.h"

namespace rw::consensus {
namespace {

TEST(AckRule, AcknowledgesOnlySuccessInTheAppendingTermWhileLeader) {
  EXPECT_TRUE(is_acknowledged(true, 3, 3, true));
  EXPECT_FALSE(is_acknowledged(false, 3, 3, true));
  EXPECT_FALSE(is_acknowledged(true, 2, 3, true));
  EXPECT_FALSE(is_acknowledged(true, 3, 3, false));
  EXPECT_FALSE(is_acknowledged(true, 0, 0, true));
}

TEST(ReadyRule, NeedsABarrierOfTheCurrentTerm) {
  EXPECT_TRUE(is_ready_for_work(true, 4, 4));
  EXPECT_FALSE(is_ready_for_work(true, 3, 4));
  EXPECT_FALSE(is_ready_for_work(false, 4, 4));
  EXPECT_FALSE(is_ready_for_work(true, 0, 0));
}

TEST(Envelope, RoundTripsAndPadsToEightBytes) {
  for (std::size_t size : {0, 1, 7, 8, 9, 200}) {
    std::vector<std::uint8_t> payload(size, 0xab);
    std::vector<std::uint8_t> out(envelope_size(size));
    EXPECT_EQ(out.size() % 8, 0U);
    write_envelope(payload, out);
    auto opened = open_envelope(out);
    ASSERT_TRUE(opened.has_value());
    EXPECT_TRUE(std::equal(opened->begin(), opened->end(), payload.begin(), payload.end()));
    // The exact (unpadded) length, as libraft hands it back from memory.
    auto exact = open_envelope(Bytes(out).first(kEnvelopeHeaderSize + size));
    ASSERT_TRUE(exact.has_value());
    EXPECT_EQ(exact->size(), size);
  }
}

// FsmAdapter writes the snapshot in place after a placeholder header: the
// same bytes as write_envelope, whatever the buffer held before.
TEST(Envelope, SealedInPlaceEqualsWritten) {
  std::vector<std::uint8_t> buffer(64, 0xee);
  for (std::size_t size : {0, 1, 7, 8, 9, 200}) {
    std::vector<std::uint8_t> payload(size, 0xab);
    std::vector<std::uint8_t> written(envelope_size(size));
    write_envelope(payload, written);
    buffer.assign(kEnvelopeHeaderSize, 0xee);
    buffer.insert(buffer.end(), payload.begin(), payload.end());
    seal_envelope(buffer);
    EXPECT_EQ(buffer, written) << size;
  }
}

TEST(Envelope, RejectsForeignBytes) {
  std::vector<std::uint8_t> out(envelope_size(3));
  write_envelope(entry_of("abc"), out);
  auto bad_version = out;
  bad_version[7] = 2;
  EXPECT_FALSE(open_envelope(bad_version).has_value());
  auto long_length = out;
  long_length[3] = 200;
  EXPECT_FALSE(open_envelope(long_length).has_value());
  auto dirty_padding = out;
  dirty_padding.back() = 1;
  EXPECT_FALSE(open_envelope(dirty_padding).has_value());
  EXPECT_FALSE(open_envelope(Bytes(out).first(4)).has_value());
}

// The scenarios run on both state machines: the toy DedupLog and the real
// accounting ledger (TestLedger), through the same Proposer and FsmAdapter.
template <class State>
class Scenario : public ::testing::Test {
 protected:
  using Cluster = BasicFixtureCluster<State>;
  static std::vector<std::uint8_t> entry(const std::string& name) { return State::entry(name); }

  // Steps until every member applied `index` and all applied the same; then
  // their snapshots (canonical bytes) must be equal.
  static void expect_identical_snapshots(Cluster& cluster, std::uint64_t index) {
    ASSERT_TRUE(cluster.step_until(
        [&] {
          for (unsigned i = 0; i < cluster.size(); ++i) {
            if (cluster.raft(i)->last_applied < index ||
                cluster.raft(i)->last_applied != cluster.raft(0)->last_applied)
              return false;
          }
          return true;
        },
        20000));
    for (unsigned i = 1; i < cluster.size(); ++i)
      EXPECT_EQ(cluster.state(i).snapshot(), cluster.state(0).snapshot());
  }
};
using StateMachines = ::testing::Types<DedupLog, TestLedger>;
TYPED_TEST_SUITE(Scenario, StateMachines);

TYPED_TEST(Scenario, NewLeaderCommitsBarrierBeforeWork) {
  typename TestFixture::Cluster cluster({});
  ASSERT_TRUE(raft_fixture_step_until_has_leader(cluster.fixture(), 10000));
  const unsigned leader = cluster.fixture()->leader_id - 1;
  // Elected, but its barrier has not committed yet: submissions are refused.
  EXPECT_FALSE(cluster.proposer(leader).ready());
  auto early = cluster.submit(leader, this->entry("early"));
  ASSERT_TRUE(early->outcome.has_value());
  EXPECT_EQ(early->outcome->kind, OutcomeKind::kRetryLater);
  ASSERT_TRUE(cluster.step_until_ready_leader());
  auto later = cluster.submit(leader, this->entry("later"));
  ASSERT_TRUE(cluster.step_until([&] { return later->outcome.has_value(); }, 5000));
  EXPECT_EQ(later->outcome->kind, OutcomeKind::kCommitted);
  // A follower points at the leader.
  const unsigned follower = (leader + 1) % 3;
  ASSERT_TRUE(cluster.step_until(
      [&] { return cluster.raft(follower)->follower_state.current_leader.id != 0; }, 5000));
  auto refused = cluster.submit(follower, this->entry("x"));
  ASSERT_TRUE(refused->outcome.has_value());
  EXPECT_EQ(refused->outcome->kind, OutcomeKind::kNotLeader);
  EXPECT_EQ(refused->outcome->leader_id, leader + 1);
}

TYPED_TEST(Scenario, ElectionDuringSubmissionNeverAcknowledgesLostEntries) {
  typename TestFixture::Cluster cluster({});
  ASSERT_TRUE(cluster.step_until_ready_leader());
  const unsigned leader = *cluster.ready_leader();
  std::vector<std::shared_ptr<Submitted>> submitted;
  for (int i = 0; i < 10; ++i)
    submitted.push_back(cluster.submit(leader, this->entry("e" + std::to_string(i))));
  raft_fixture_depose(cluster.fixture());  // Forces an election with entries in flight.
  ASSERT_TRUE(cluster.step_until_ready_leader());
  cluster.step_for(2000);
  for (const auto& s : submitted) {
    ASSERT_TRUE(s->outcome.has_value());
    EXPECT_NE(s->outcome->kind, OutcomeKind::kNotLeader);
    if (s->outcome->kind == OutcomeKind::kCommitted) {
      for (unsigned i = 0; i < 3; ++i) EXPECT_EQ(cluster.state(i).copies(s->entry), 1U) << "member " << i;
    }
  }
  // Whatever did commit, members hold the same state.
  auto last = cluster.submit(*cluster.ready_leader(), this->entry("after"));
  ASSERT_TRUE(cluster.step_until([&] { return last->outcome.has_value(); }, 5000));
  ASSERT_EQ(last->outcome->kind, OutcomeKind::kCommitted);
  this->expect_identical_snapshots(cluster, last->outcome->index);
}

// Cuts the leader off, submits `entry` to it and steps until another member
// is a ready leader: the lost submission must end Unknown, never Committed.
// Heals the links and returns the new leader.
template <class Cluster>
unsigned lose_submission(Cluster& cluster, const std::vector<std::uint8_t>& entry) {
  const unsigned leader = *cluster.ready_leader();
  for (unsigned i = 0; i < 3; ++i) {
    if (i != leader) {
      raft_fixture_saturate(cluster.fixture(), leader, i);
      raft_fixture_saturate(cluster.fixture(), i, leader);
    }
  }
  auto lost = cluster.submit(leader, entry);
  EXPECT_FALSE(lost->outcome.has_value());
  // The others elect a new leader; the old one steps down.
  EXPECT_TRUE(cluster.step_until(
      [&] {
        auto next = cluster.ready_leader();
        return next && *next != leader && lost->outcome.has_value();
      },
      20000));
  EXPECT_TRUE(lost->outcome.has_value() && lost->outcome->kind == OutcomeKind::kUnknown);
  for (unsigned i = 0; i < 3; ++i) {
    raft_fixture_desaturate(cluster.fixture(), leader, i);
    raft_fixture_desaturate(cluster.fixture(), i, leader);
  }
  return *cluster.ready_leader();
}

// Submits `entry` to `leader` and steps until every member applied it.
template <class Cluster>
void commit_everywhere(Cluster& cluster, unsigned leader, const std::vector<std::uint8_t>& entry) {
  auto again = cluster.submit(leader, entry);
  ASSERT_TRUE(cluster.step_until([&] { return again->outcome.has_value(); }, 5000));
  ASSERT_EQ(again->outcome->kind, OutcomeKind::kCommitted);
  ASSERT_TRUE(cluster.step_until(
      [&] {
        for (unsigned i = 0; i < 3; ++i) {
          if (cluster.raft(i)->last_applied < again->outcome->index) return false;
        }
        return true;
      },
      10000));
}

TYPED_TEST(Scenario, LeaderLostBeforeCommitReportsUnknownAndResubmissionAppliesOnce) {
  typename TestFixture::Cluster cluster({});
  ASSERT_TRUE(cluster.step_until_ready_leader());
  const auto entry = this->entry("record-42");
  const unsigned next = lose_submission(cluster, entry);
  // The submitter re-submits the same (idempotent) entry to the new leader.
  commit_everywhere(cluster, next, entry);
  for (unsigned i = 0; i < 3; ++i) EXPECT_EQ(cluster.state(i).copies(entry), 1U) << "member " << i;
}

// With the ledger the re-submission need not be the same bytes: a gateway
// re-batches its pending records with new ones, and the record key makes
// the records already applied no-ops.
TEST(LedgerCluster, ResubmissionInAnotherBatchAppliesEachRecordOnce) {
  LedgerCluster cluster({});
  ASSERT_TRUE(cluster.step_until_ready_leader());
  const unsigned first = lose_submission(cluster, TestLedger::entry(std::vector<std::string>{"a", "b"}));
  // Suppose "b" did commit after all (docs/consensus.md trap 5) ...
  commit_everywhere(cluster, first, TestLedger::entry("b"));
  // ... then "a" and "b" come again, with a new record "c".
  commit_everywhere(cluster, *cluster.ready_leader(),
                    TestLedger::entry(std::vector<std::string>{"c", "b", "a"}));
  for (unsigned i = 0; i < 3; ++i) {
    const accounting::Ledger& ledger = cluster.state(i).ledger();
    ASSERT_EQ(ledger.records().size(), 3U) << "member " << i;
    EXPECT_EQ(ledger.records()[0].record, TestLedger::record("b"));
    EXPECT_EQ(ledger.records()[1].record, TestLedger::record("c"));
    EXPECT_EQ(ledger.records()[2].record, TestLedger::record("a"));
    EXPECT_EQ(ledger.counters().records_duplicate, 1U);
    EXPECT_EQ(ledger.sessions().size(), 3U);
  }
  EXPECT_EQ(cluster.state(1).snapshot(), cluster.state(0).snapshot());
  EXPECT_EQ(cluster.state(2).snapshot(), cluster.state(0).snapshot());
}

TYPED_TEST(Scenario, FollowerCatchesUpBySnapshot) {
  typename TestFixture::Cluster cluster({.snapshot_threshold = 8, .snapshot_trailing = 2});
  ASSERT_TRUE(cluster.step_until_ready_leader());
  const unsigned leader = *cluster.ready_leader();
  const unsigned behind = (leader + 1) % 3;
  raft_fixture_kill(cluster.fixture(), behind);
  std::shared_ptr<Submitted> last;
  for (int i = 0; i < 60; ++i) {
    last = cluster.submit(leader, this->entry("r" + std::to_string(i)));
    ASSERT_TRUE(cluster.step_until([&] { return last->outcome.has_value(); }, 5000));
    ASSERT_EQ(last->outcome->kind, OutcomeKind::kCommitted);
  }
  raft_fixture_revive(cluster.fixture(), behind);
  this->expect_identical_snapshots(cluster, last->outcome->index);
  EXPECT_GE(cluster.state(behind).restores(), 1U);
  EXPECT_EQ(cluster.adapter(behind).snapshot_figures().restored, cluster.state(behind).restores());
  for (int i = 0; i < 60; ++i)
    EXPECT_EQ(cluster.state(behind).copies(this->entry("r" + std::to_string(i))), 1U);
}

// The n-th entry of a LogBytes test: ~4 KB, distinct per n.
std::vector<std::uint8_t> entry_4k(int n) {
  return DedupLog::entry(std::to_string(n) + std::string(4000, 'x'));
}

// Submits entry_4k(n) to `leader` and steps the cluster until it is
// committed, calling `note` at every step.
void commit_4k_entry(FixtureCluster& cluster, unsigned leader, int n, const std::function<void()>& note) {
  auto submitted = cluster.submit(leader, entry_4k(n));
  ASSERT_TRUE(cluster.step_until(
      [&] {
        note();
        return submitted->outcome.has_value();
      },
      5000));
  ASSERT_EQ(submitted->outcome->kind, OutcomeKind::kCommitted);
}

// The log held in memory is bounded in bytes (FsmAdapter::bound_log_bytes,
// docs/consensus.md "Log held in memory"): entry counts that would never
// snapshot, 4 KiB entries, a 64 KiB bound. Every member snapshots once half
// the bound has been applied since its last snapshot, keeps only the
// trailing entries that fit the other half, and holds at most the bound
// plus what arrives while a snapshot is written or before it is applied (the
// test has one entry in flight at a time: allowed three entries' slack).
TEST(LogBytes, SnapshotsAtHalfTheBoundAndKeepsTheLogUnderIt) {
  constexpr std::size_t kBound = 64 * 1024;
  FixtureCluster cluster(
      {.snapshot_threshold = 1 << 20, .snapshot_trailing = 1 << 19, .log_bytes_max = kBound});
  // A state whose snapshot stays below the bound (LogBytes.ALargerStateRaisesTheBoundToItsSnapshot
  // is the other case).
  for (unsigned m = 0; m < 3; ++m) cluster.state(m).keep_latest = 4;
  ASSERT_TRUE(cluster.step_until_ready_leader());
  const unsigned leader = *cluster.ready_leader();
  std::size_t largest = 0;
  for (int i = 0; i < 100; ++i) {
    ASSERT_NO_FATAL_FAILURE(commit_4k_entry(cluster, leader, i, [&] {
      for (unsigned m = 0; m < 3; ++m) largest = std::max(largest, cluster.log_bytes(m));
    }));
  }
  EXPECT_LE(largest, kBound + 3 * 4100);
  EXPECT_GE(largest, kBound / 2);  // the bound was reached, not idle
  for (unsigned m = 0; m < 3; ++m) {
    const SnapshotFigures& figures = cluster.adapter(m).snapshot_figures();
    // 100 entries of ~4 KiB against 32 KiB per snapshot: about a dozen.
    EXPECT_GE(figures.for_log_bytes, 8U) << "member " << m;
    EXPECT_EQ(figures.for_log_bytes, figures.taken) << "member " << m;
    EXPECT_LE(figures.log_bytes_since, kBound / 2 + 4200) << "member " << m;
  }
}

// A state larger than raft.log_bytes_max (here every entry is kept, 400 KB
// against a 32 KiB bound) raises the bound to its latest snapshot's size:
// otherwise every half bound of log would write the whole state again, and
// the snapshots' bytes would grow with the square of the entries. The log
// stays within max(bound, latest snapshot) and what the snapshots write
// stays within a constant times what the log received (docs/consensus.md
// "Log held in memory").
TEST(LogBytes, ALargerStateRaisesTheBoundToItsSnapshot) {
  constexpr std::size_t kBound = 32 * 1024;
  FixtureCluster cluster(
      {.snapshot_threshold = 1 << 20, .snapshot_trailing = 1 << 19, .log_bytes_max = kBound});
  ASSERT_TRUE(cluster.step_until_ready_leader());
  const unsigned leader = *cluster.ready_leader();
  std::array<std::uint64_t, 3> taken{};
  std::array<std::uint64_t, 3> written{};
  std::array<std::uint64_t, 3> latest{};
  const auto note = [&] {
    for (unsigned m = 0; m < 3; ++m) {
      const SnapshotFigures& figures = cluster.adapter(m).snapshot_figures();
      if (figures.taken != taken[m]) {
        ASSERT_EQ(figures.taken, taken[m] + 1) << "member " << m;
        taken[m] = figures.taken;
        written[m] += figures.last_bytes;
        latest[m] = figures.last_bytes;
      }
      // Three entries past the bound: those appended or applied meanwhile.
      ASSERT_LE(cluster.log_bytes(m), std::max<std::size_t>(kBound, latest[m]) + 3 * 4100) << "member " << m;
    }
  };
  std::uint64_t applied = 0;
  for (int i = 0; i < 100; ++i) {
    applied += entry_4k(i).size();
    ASSERT_NO_FATAL_FAILURE(commit_4k_entry(cluster, leader, i, note));
  }
  for (unsigned m = 0; m < 3; ++m) {
    const SnapshotFigures& figures = cluster.adapter(m).snapshot_figures();
    // 400 KB applied: the bound, then 1.5 times the state at each snapshot
    // (32, 64, 96, 144, 216, 324 KB): six, where the fixed bound took twelve.
    EXPECT_GE(figures.taken, 4U) << "member " << m;
    EXPECT_LE(figures.taken, 7U) << "member " << m;
    EXPECT_GT(latest[m], kBound) << "member " << m;
    EXPECT_EQ(figures.log_bytes_bound, latest[m]) << "member " << m;
    // Each snapshot came after at least half the previous one's size in new
    // log, and the state grew by at most that log: each writes at most three
    // times the log since the one before (twice for a state that stays the
    // same size).
    EXPECT_LE(written[m], 3 * applied + kBound) << "member " << m;
  }
}

// Staggered snapshots (FsmAdapter::stagger_snapshots, docs/consensus.md
// "Staggered snapshots"): with phases 0, 1/3 and 2/3 the three members never
// snapshot at the same index, each keeps the period of half the bound, and
// the log stays within the bound. Without the stagger every member
// snapshots at the same indices (LogBytes above).
TEST(LogBytes, StaggeredMembersNeverSnapshotAtTheSameIndex) {
  constexpr std::size_t kBound = 96 * 1024;
  FixtureCluster cluster(
      {.snapshot_threshold = 1 << 20, .snapshot_trailing = 1 << 19, .log_bytes_max = kBound});
  for (unsigned m = 0; m < 3; ++m) {
    cluster.adapter(m).stagger_snapshots(m / 3.0);
    cluster.state(m).keep_latest = 4;
  }
  ASSERT_TRUE(cluster.step_until_ready_leader());
  const unsigned leader = *cluster.ready_leader();
  std::array<std::set<std::uint64_t>, 3> taken_at;
  std::size_t largest = 0;
  const auto note = [&] {
    for (unsigned m = 0; m < 3; ++m) {
      if (const std::uint64_t at = cluster.raft(m)->log.snapshot.last_index; at != 0) taken_at[m].insert(at);
      largest = std::max(largest, cluster.log_bytes(m));
    }
  };
  for (int i = 0; i < 150; ++i) ASSERT_NO_FATAL_FAILURE(commit_4k_entry(cluster, leader, i, note));
  ASSERT_TRUE(cluster.step_until(
      [&] {
        note();
        return cluster.raft((leader + 1) % 3)->last_applied == cluster.raft(leader)->last_applied &&
               cluster.raft((leader + 2) % 3)->last_applied == cluster.raft(leader)->last_applied;
      },
      5000));
  for (unsigned m = 0; m < 3; ++m) {
    // 150 entries of ~4 KiB, 48 KiB a period: about a dozen each.
    EXPECT_GE(taken_at[m].size(), 10U) << "member " << m;
    EXPECT_EQ(cluster.adapter(m).snapshot_figures().for_log_bytes,
              cluster.adapter(m).snapshot_figures().taken);
    for (unsigned other = m + 1; other < 3; ++other) {
      for (const std::uint64_t at : taken_at[m]) {
        EXPECT_FALSE(taken_at[other].contains(at)) << "members " << m << " and " << other << " at " << at;
      }
    }
  }
  EXPECT_LE(largest, kBound + 3 * 4100);
}

// Commits entry_4k(first) .. entry_4k(first + count - 1) through `leader`,
// one after the other, and waits until every member applied them.
void submit_4k_entries(FixtureCluster& cluster, unsigned leader, int first, int count) {
  for (int i = first; i < first + count; ++i) commit_4k_entry(cluster, leader, i, [] {});
  const std::uint64_t last = raft_last_index(cluster.raft(leader));
  EXPECT_TRUE(cluster.step_until(
      [&] {
        for (unsigned m = 0; m < 3; ++m)
          if (cluster.raft(m)->last_applied < last) return false;
        return true;
      },
      5000));
}

// The quiet-log tests' cluster: entry counts and a 1 MiB byte bound that
// would not snapshot for a long while, so that only a compaction does.
struct QuietLogCluster {
  static constexpr std::size_t kBound = 1 << 20;
  FixtureCluster cluster{
      {.snapshot_threshold = 1 << 20, .snapshot_trailing = 1 << 19, .log_bytes_max = kBound}};
  unsigned leader = 0;

  // A ready leader elected; its index in `leader`.
  bool start() {
    if (!cluster.step_until_ready_leader()) return false;
    leader = *cluster.ready_leader();
    return true;
  }
};

// A quiet log is compacted (FsmAdapter::compact_on_next_apply, Node's quiet
// check; docs/limits.md "Member memory budget"): entry counts and a byte
// bound that would not snapshot for a long while, 40 entries of 4 KiB held by
// every member; each member is asked to compact, the leader appends one
// barrier, and every member snapshots after applying it and keeps only it.
// The configured threshold and trailing are back afterwards.
TEST(LogBytes, AQuietLogIsCompactedToTheLeadersBarrier) {
  QuietLogCluster quiet;
  ASSERT_TRUE(quiet.start());
  FixtureCluster& cluster = quiet.cluster;
  const unsigned leader = quiet.leader;
  const auto submit_all = [&](int first, int count) { submit_4k_entries(cluster, leader, first, count); };
  submit_all(0, 40);
  for (unsigned m = 0; m < 3; ++m) {
    EXPECT_EQ(cluster.adapter(m).snapshot_figures().taken, 0U) << "member " << m;
    EXPECT_GE(cluster.log_bytes(m), 40U * 4000) << "member " << m;
    cluster.adapter(m).compact_on_next_apply();
    cluster.adapter(m).compact_on_next_apply();  // twice: still one compaction
  }
  ASSERT_TRUE(cluster.proposer(leader).propose_barrier());
  EXPECT_FALSE(cluster.proposer(leader).propose_barrier());            // one in flight at a time
  EXPECT_FALSE(cluster.proposer((leader + 1) % 3).propose_barrier());  // a follower cannot
  ASSERT_TRUE(cluster.step_until(
      [&] {
        for (unsigned m = 0; m < 3; ++m)
          if (cluster.log_bytes(m) > 64 || cluster.adapter(m).snapshot_figures().taken != 1) return false;
        return true;
      },
      5000))
      << "log bytes " << cluster.log_bytes(0) << " " << cluster.log_bytes(1) << " " << cluster.log_bytes(2);
  EXPECT_TRUE(cluster.proposer(leader).ready());  // the own-term barrier's readiness untouched
  for (unsigned m = 0; m < 3; ++m) {
    const SnapshotFigures& figures = cluster.adapter(m).snapshot_figures();
    EXPECT_EQ(figures.for_quiet_log, 1U) << "member " << m;
    EXPECT_EQ(figures.for_log_bytes, 0U) << "member " << m;
    EXPECT_FALSE(cluster.adapter(m).compaction_due()) << "member " << m;
    EXPECT_EQ(cluster.raft(m)->snapshot.threshold, 1U << 20) << "member " << m;
  }
  // The threshold is the configured one again: 40 more entries, no snapshot.
  submit_all(40, 40);
  for (unsigned m = 0; m < 3; ++m)
    EXPECT_EQ(cluster.adapter(m).snapshot_figures().taken, 1U) << "member " << m;
  // The trailing too: the byte bound's next snapshot keeps what fits half of
  // it (~128 entries of 4 KiB), not the one entry of the compaction.
  submit_all(80, 100);
  for (unsigned m = 0; m < 3; ++m) {
    EXPECT_EQ(cluster.adapter(m).snapshot_figures().for_log_bytes, 1U) << "member " << m;
    EXPECT_GE(cluster.log_bytes(m), QuietLogCluster::kBound / 4) << "member " << m;
  }
  for (unsigned m = 0; m < 3; ++m) {
    for (int i = 0; i < 180; ++i) {
      EXPECT_EQ(cluster.state(m).copies(DedupLog::entry(std::to_string(i) + std::string(4000, 'x'))), 1U);
    }
  }
}

// Load back before the leader's barrier (docs/limits.md "Member memory
// budget", quiet log compaction): the first command applied calls the
// compaction off on every member, so no member snapshots as the load
// resumes; the burst's entries stay until the load's own snapshot, and a
// later barrier takes none.
TEST(LogBytes, LoadBackBeforeTheBarrierCallsTheQuietCompactionOff) {
  QuietLogCluster quiet;
  ASSERT_TRUE(quiet.start());
  FixtureCluster& cluster = quiet.cluster;
  const unsigned leader = quiet.leader;
  const auto submit_all = [&](int first, int count) { submit_4k_entries(cluster, leader, first, count); };
  submit_all(0, 40);
  for (unsigned m = 0; m < 3; ++m) cluster.adapter(m).compact_on_next_apply();
  submit_all(40, 1);  // the load is back
  for (unsigned m = 0; m < 3; ++m) {
    const SnapshotFigures& figures = cluster.adapter(m).snapshot_figures();
    EXPECT_EQ(figures.taken, 0U) << "member " << m;
    EXPECT_EQ(figures.quiet_compactions_skipped, 1U) << "member " << m;
    EXPECT_FALSE(cluster.adapter(m).compaction_due()) << "member " << m;
    EXPECT_EQ(cluster.raft(m)->snapshot.threshold, 1U << 20) << "member " << m;
    EXPECT_GE(cluster.log_bytes(m), 41U * 4000) << "member " << m;
  }
  // A barrier now is only a barrier.
  ASSERT_TRUE(cluster.proposer(leader).propose_barrier());
  submit_all(41, 1);
  for (unsigned m = 0; m < 3; ++m)
    EXPECT_EQ(cluster.adapter(m).snapshot_figures().taken, 0U) << "member " << m;
  // The load's own snapshot (the byte bound's) drops the burst's entries.
  submit_all(42, 140);
  for (unsigned m = 0; m < 3; ++m) {
    EXPECT_EQ(cluster.adapter(m).snapshot_figures().for_log_bytes, 1U) << "member " << m;
    EXPECT_EQ(cluster.adapter(m).snapshot_figures().for_quiet_log, 0U) << "member " << m;
  }
}

TYPED_TEST(Scenario, ReplacesALostMemberWhichCatchesUpEmpty) {
  typename TestFixture::Cluster cluster({.snapshot_threshold = 8, .snapshot_trailing = 2});
  ASSERT_TRUE(cluster.step_until_ready_leader());
  const unsigned leader = *cluster.ready_leader();
  const unsigned lost = (leader + 1) % 3;
  raft_fixture_kill(cluster.fixture(), lost);  // Its disk is gone for good.
  std::shared_ptr<Submitted> last;
  for (int i = 0; i < 30; ++i) {
    last = cluster.submit(leader, this->entry("r" + std::to_string(i)));
    ASSERT_TRUE(cluster.step_until([&] { return last->outcome.has_value(); }, 5000));
  }
  std::optional<int> removed;
  cluster.proposer(leader).remove_member(lost + 1, [&](int status) { removed = status; });
  ASSERT_TRUE(cluster.step_until([&] { return removed.has_value(); }, 10000));
  ASSERT_EQ(*removed, 0);
  const unsigned fresh = cluster.grow();  // Empty member, id 4.
  std::optional<int> added;
  cluster.proposer(leader).add_voter(fresh + 1, std::to_string(fresh + 1),
                                     [&](int status) { added = status; });
  ASSERT_TRUE(cluster.step_until([&] { return added.has_value(); }, 30000));
  ASSERT_EQ(*added, 0);
  ASSERT_TRUE(
      cluster.step_until([&] { return cluster.raft(fresh)->last_applied >= last->outcome->index; }, 20000));
  EXPECT_GE(cluster.state(fresh).restores(), 1U);
  // What the member's /metrics shows as radiusward_member_raft_snapshots_restored.
  EXPECT_EQ(cluster.adapter(fresh).snapshot_figures().restored, cluster.state(fresh).restores());
  EXPECT_EQ(cluster.adapter(leader).snapshot_figures().restored, 0U);
  EXPECT_EQ(cluster.state(fresh).snapshot(), cluster.state(leader).snapshot());
}

// ---- Randomised run ----------------------------------------------------
//
// Seeded runs of the real ledger under kills, revivals, one-way partitions,
// disk and network latency, and optionally low snapshot thresholds and disk
// faults. Each seed runs in a forked child (forked_seed_for_test.h).

// What a randomised run may do besides kills, partitions and latencies.
struct Faults {
  bool snapshots = false;  // Low snapshot thresholds: snapshots and installs.
  bool disk = false;       // raft_fixture_io_fault on one member.
};

// A submission and the records in it, kept to re-submit them when its
// outcome is not Committed.
struct Pending {
  std::shared_ptr<Submitted> submitted;
  std::vector<accounting::Record> records;
};

// The n-th accounting event of a run: sessions of three events each
// (Start, Interim-Update, Stop), of a few users on a few NAS ports, so that
// the ledger's session table opens, updates and closes sessions.
accounting::Record event(std::uint64_t seed, unsigned n) {
  const unsigned session = n / 3;
  accounting::testing::RequestSpec spec;
  spec.identifier = static_cast<std::uint8_t>(n);
  spec.status_type = n % 3 == 0   ? accounting::status::kStart
                     : n % 3 == 1 ? accounting::status::kInterimUpdate
                                  : accounting::status::kStop;
  spec.user_name = "user" + std::to_string(session % 7);
  spec.session_id = std::to_string(seed) + "-" + std::to_string(session);
  spec.nas_port = session % 5;
  if (n % 3 != 0) {
    spec.session_time_s = 60 * (n % 3);
    spec.input_octets = 1000 * n;
  }
  return accounting::testing::record_of(spec, 1'700'000'000'000 + 10 * std::int64_t{n});
}

// One seeded run; returns the first violation, or an empty string.
std::string run_seed(std::uint64_t seed, unsigned rounds, Faults faults) {
  SeededRandom random(seed);
  auto below = [&](std::uint32_t bound) { return static_cast<unsigned>(random.below(bound)); };
  // Without snapshots the threshold stays beyond the run's log length.
  LedgerCluster cluster(
      {.snapshot_threshold = faults.snapshots ? 16 + below(32) : 1000000, .snapshot_trailing = 4 + below(8)});
  raft_fixture* f = cluster.fixture();
  InvariantChecker checker(cluster);
  std::vector<Pending> outstanding;
  // Records of submissions that ended other than Committed: re-submitted
  // later, batched anew with other records (their keys make that safe).
  std::vector<accounting::Record> to_resubmit;
  unsigned next_event = 0;
  const unsigned faulty_member = below(3);

  for (unsigned round = 0; round < rounds; ++round) {
    switch (below(10)) {
      case 0:
      case 1:
      case 2:
      case 3: {  // Submit a few entries of re-submitted and new records.
        if (auto leader = cluster.ready_leader()) {
          for (unsigned k = below(6); k > 0; --k) {
            Pending pending;
            for (unsigned r = below(3); r > 0 && !to_resubmit.empty(); --r) {
              pending.records.push_back(std::move(to_resubmit.back()));
              to_resubmit.pop_back();
            }
            for (unsigned r = (pending.records.empty() ? 1 : 0) + below(3); r > 0; --r)
              pending.records.push_back(event(seed, next_event++));
            pending.submitted = cluster.submit(*leader, accounting::encode_records_entry(pending.records));
            outstanding.push_back(std::move(pending));
          }
        }
        break;
      }
      case 4: {  // Kill one member, keeping at least two up most of the time.
        unsigned dead = 0;
        for (unsigned i = 0; i < 3; ++i) dead += !cluster.alive(i);
        const unsigned victim = below(3);
        if (cluster.alive(victim) && (dead == 0 || below(4) == 0)) raft_fixture_kill(f, victim);
        break;
      }
      case 5: {
        const unsigned i = below(3);
        if (!cluster.alive(i)) raft_fixture_revive(f, i);
        break;
      }
      case 6: {  // Partition one direction of one link, or heal it.
        const unsigned i = below(3);
        const unsigned j = (i + 1 + below(2)) % 3;
        if (raft_fixture_saturated(f, i, j)) {
          raft_fixture_desaturate(f, i, j);
        } else {
          raft_fixture_saturate(f, i, j);
        }
        break;
      }
      case 7:
        raft_fixture_set_disk_latency(f, below(3), 1 + below(60));
        break;
      case 8:
        raft_fixture_set_network_latency(f, below(3), 1 + below(40));
        break;
      case 9:
        // A disk fault turns a member RAFT_UNAVAILABLE for good in libraft
        // 0.15.0 (production restarts the process; the fixture cannot), so
        // faults strike one member per seed and the other two stay usable.
        if (faults.disk && below(3) == 0)
          raft_fixture_io_fault(f, faulty_member, static_cast<int>(below(5)), 1);
        break;
    }
    const unsigned steps = 5 + below(40);
    for (unsigned s = 0; s < steps; ++s) {
      cluster.step();
      for (auto it = outstanding.begin(); it != outstanding.end();) {
        if (!it->submitted->outcome) {
          ++it;
          continue;
        }
        const Outcome& outcome = *it->submitted->outcome;
        if (outcome.kind == OutcomeKind::kCommitted) {
          Acknowledged ack{outcome.index, it->submitted->entry, {}};
          for (const auto& record : it->records) ack.keys.push_back(record.key);
          checker.acknowledge(std::move(ack));
        } else {
          for (auto& record : it->records) to_resubmit.push_back(std::move(record));
        }
        it = outstanding.erase(it);
      }
      if (std::string violation = checker.check(); !violation.empty()) {
        return "round " + std::to_string(round) + ": " + violation;
      }
    }
  }

  // Heal everything; every acknowledged record must reach every member.
  for (unsigned i = 0; i < 3; ++i) {
    if (!cluster.alive(i)) raft_fixture_revive(f, i);
    raft_fixture_set_disk_latency(f, i, 10);
    raft_fixture_set_network_latency(f, i, 15);
    for (unsigned j = 0; j < 3; ++j) {
      if (i != j && raft_fixture_saturated(f, i, j)) raft_fixture_desaturate(f, i, j);
    }
  }
  // libraft 0.15.0 turns a member RAFT_UNAVAILABLE after a disk fault and
  // after some other fault sequences; production restarts such a process
  // (docs/consensus.md). Liveness is checked on the others; safety on all,
  // above.
  auto usable = [&](unsigned i) { return raft_state(cluster.raft(i)) != RAFT_UNAVAILABLE; };
  std::uint64_t target = 0;
  for (int attempt = 0; attempt < 10 && target == 0; ++attempt) {
    if (!cluster.step_until_ready_leader(60000)) return "no leader after healing";
    auto final_entry = cluster.submit(*cluster.ready_leader(),
                                      accounting::encode_records_entry(std::vector{event(seed, next_event)}));
    if (!cluster.step_until([&] { return final_entry->outcome.has_value(); }, 20000))
      return "final entry hangs";
    if (final_entry->outcome->kind == OutcomeKind::kCommitted) target = final_entry->outcome->index;
    if (target == 0) cluster.step_for(500);  // As a submitter backs off before retrying.
  }
  if (target == 0) return "no final entry committed after healing:" + describe(cluster);
  if (!cluster.step_until(
          [&] {
            for (unsigned i = 0; i < 3; ++i) {
              if (usable(i) && cluster.raft(i)->last_applied < target) return false;
            }
            return true;
          },
          60000)) {
    return "members do not catch up after healing to " + std::to_string(target) + ":" + describe(cluster);
  }
  // Every acknowledged record is held exactly once by every usable member.
  for (const auto& ack : checker.acknowledged()) {
    for (unsigned i = 0; i < 3; ++i) {
      if (usable(i) && cluster.state(i).copies(ack.entry) != 1)
        return "acknowledged record at index " + std::to_string(ack.index) + " held " +
               std::to_string(cluster.state(i).copies(ack.entry)) + " times on member " + std::to_string(i);
    }
  }
  return checker.check();
}

// Fewer seeds under sanitizers, which run the same code some ten times slower.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RW_CONSENSUS_SANITIZED 1
#endif
#if __has_feature(thread_sanitizer)
#define RW_CONSENSUS_TSAN 1
#endif
#endif
#ifdef RW_CONSENSUS_SANITIZED
constexpr unsigned kSeedDivisor = 3;
constexpr unsigned kSeedTimeoutS = 300;
#else
constexpr unsigned kSeedDivisor = 1;
constexpr unsigned kSeedTimeoutS = 60;
#endif
constexpr unsigned kRounds = 150;

// Whether a crash report fits a crash inside libraft: no radiusward
// assertion, and under ASan the faulting frame's caller is in libraft. The
// allocator radiusward installs for libraft (raft_heap.cc, installed for
// the whole process by the first Node this binary starts) only passes
// malloc and free through, so its frames are skipped.
bool inside_library(const SeedReport& report) {
  if (report.output.find("radiusward: assertion failed") != std::string::npos) return false;
  const std::size_t asan = report.output.find("ERROR: AddressSanitizer");
  if (asan == std::string::npos) return true;
  for (int frame = 1; frame < 8; ++frame) {
    const std::size_t at = report.output.find("    #" + std::to_string(frame) + " ", asan);
    if (at == std::string::npos) return false;
    const std::string line = report.output.substr(at, report.output.find('\n', at) - at);
    if (line.find("raft_heap.cc") != std::string::npos) continue;
    return line.find("libraft.so") != std::string::npos;
  }
  return false;
}

// Runs seeds 1..`seeds` (divided under sanitizers; RW_SEED_COUNT=n
// overrides), each in a forked child. A seed in `library_crashes` may crash
// (see there); every other crash, and any violation, fails the test with
// the seed and the command that replays it in this process (RW_SEED=n).
void run_seeds(unsigned seeds, Faults faults, const std::map<std::uint64_t, const char*>& library_crashes) {
#ifdef RW_CONSENSUS_TSAN
  // raft_fixture runs the three members on this one thread: TSan has no
  // second thread to check. And TSan, unlike ASan, does not stop at
  // libraft's double free (kDoubleFree): the seed runs on over a corrupted
  // heap and fails later in this file's code, so the triage of
  // library_crashes cannot tell it from a radiusward fault. Release and ASan
  // run these seeds; the threaded Node tests of this binary run under TSan.
  GTEST_SKIP() << "single-threaded raft_fixture seeds: run in the release and asan presets";
#endif
  const std::string filter = ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() +
                             std::string(".") +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name();
  if (const char* replay = std::getenv("RW_SEED")) {
    const std::uint64_t seed = std::strtoull(replay, nullptr, 10);
    EXPECT_EQ(run_seed(seed, kRounds, faults), "") << "seed " << seed;
    return;
  }
  std::uint64_t last = seeds / kSeedDivisor;
  if (const char* count = std::getenv("RW_SEED_COUNT")) last = std::strtoull(count, nullptr, 10);
  unsigned crashed_as_known = 0;
  for (std::uint64_t seed = 1; seed <= last; ++seed) {
    const SeedReport report = run_forked([&] { return run_seed(seed, kRounds, faults); }, kSeedTimeoutS);
    const std::string replay =
        "replay with: RW_SEED=" + std::to_string(seed) + " consensus_test --gtest_filter=" + filter;
    if (report.end == SeedEnd::kViolated) {
      ADD_FAILURE() << "seed " << seed << " violated an invariant: " << report.text << "\n" << replay;
    } else if (report.end == SeedEnd::kCrashed && library_crashes.count(seed) != 0 &&
               inside_library(report)) {
      ++crashed_as_known;
      std::printf("seed %llu: known libraft crash (%s): %s\n", static_cast<unsigned long long>(seed),
                  report.text.c_str(), library_crashes.at(seed));
    } else if (report.end == SeedEnd::kCrashed) {
      // The head of a sanitizer report names the fault and its stack.
      ADD_FAILURE() << "seed " << seed << " crashed: " << report.text << "\n"
                    << replay << "\n--- its stderr (head) ---\n"
                    << report.output.substr(0, 6000);
    }
  }
  ::testing::Test::RecordProperty("seeds", static_cast<int>(last));
  ::testing::Test::RecordProperty("known_library_crashes", static_cast<int>(crashed_as_known));
}

TEST(RunForked, TellsPassViolationAndCrashApart) {
  EXPECT_EQ(run_forked([] { return std::string(); }, 60).end, SeedEnd::kPassed);
  const SeedReport violated = run_forked([] { return std::string("lost index 7"); }, 60);
  EXPECT_EQ(violated.end, SeedEnd::kViolated);
  EXPECT_EQ(violated.text, "lost index 7");
  const SeedReport crashed = run_forked(
      []() -> std::string {
        std::fputs("dying\n", stderr);
        std::abort();
      },
      60);
  EXPECT_EQ(crashed.end, SeedEnd::kCrashed);
  EXPECT_NE(crashed.text.find("signal 6"), std::string::npos) << crashed.text;
  EXPECT_EQ(crashed.output, "dying\n");
  EXPECT_FALSE(
      inside_library(SeedReport{SeedEnd::kCrashed, "", "radiusward: assertion failed at x.cc:1: y\n"}));
  // The allocator's pass-through frame is skipped: the caller that counts is
  // the next one.
  const std::string through_heap =
      "==1==ERROR: AddressSanitizer: attempting double-free\n    #0 0x1 in free\n"
      "    #1 0x2 in heap_free(void*, void*) src/consensus/raft_heap.cc:33:45\n";
  EXPECT_TRUE(inside_library(SeedReport{
      SeedEnd::kCrashed, "", through_heap + "    #2 0x3  (/lib/x86_64-linux-gnu/libraft.so.2+0x8c3b)\n"}));
  EXPECT_FALSE(inside_library(SeedReport{
      SeedEnd::kCrashed, "", through_heap + "    #2 0x3 in rw::consensus::Node::x() node.cc:1\n"}));
}

// Kills, revivals, one-way partitions, disk and network latency.
TEST(LedgerCluster, RandomisedFaultsKeepAcknowledgedRecordsAndNeverDiverge) { run_seeds(150, Faults{}, {}); }

// Seeds that die inside libraft 0.15.0 itself, triaged one by one under gdb
// (release) and ASan with fast_unwind_on_malloc=0 (docs/consensus.md "Known
// library problems seen in tests"): the faulting access, and the allocation
// and first free it concerns, all happen in libraft code called from one
// raft_fixture_step or raft_fixture_close, with no radiusward frame between.
// Such a seed still runs in its own child, and a violation found before the
// crash still fails the test; only the crash is tolerated. Offsets are into
// Debian 12's /lib/x86_64-linux-gnu/libraft.so.2 (0.15.0-1).
constexpr const char* kDoubleFree =
    "raft_fixture_io_fault fails the stub io's send: recvAppendEntries (recv_append_entries.c) frees the "
    "received batch (+0xbdc2, from +0xb8dc), its reply fails, and recvCb (recv.c) frees it again through "
    "entryBatchesDestroy (+0x8c3b, from +0xb8f3); allocated by entryBatchCopy (+0x8d18) for the stub's "
    "transmit (+0x11ba8); release: glibc aborts with 'double free detected' or 'double free or corruption'";
constexpr const char* kSnapshotOverflow =
    "low snapshot thresholds: the stub io's truncate (fixture.c) keeps index-1 entries of an array that an "
    "installed snapshot emptied: memcpy at +0x115ca (from +0xf01f, replication.c's truncation of a "
    "conflicting "
    "suffix) reads past the array ioFlushAppend reallocated (+0x119c7); release: SIGSEGV or 'double free or "
    "corruption (out)' when raft_fixture_close frees the copied garbage (+0x12189)";

// Crashes seen in seeds 1..300 of each variant in release (`make test` runs
// 1..150) and under ASan (which runs 1..50); the two builds do not always
// take the same path through a seed, so a seed may crash in one only.
// Beyond 150: triaged under gdb in release (the doubly freed batch, or the
// over-reading truncate on a member whose stub log an installed snapshot had
// emptied) and by ASan's report (150, 198, 213 with disk faults; 150, 261
// with both; 154, 223, 241, 244, 282, 297 with snapshots, whose over-read
// release survives).
const std::map<std::uint64_t, const char*> kSnapshotLibraryCrashes = {
    {60, kSnapshotOverflow},  {154, kSnapshotOverflow}, {207, kSnapshotOverflow}, {223, kSnapshotOverflow},
    {241, kSnapshotOverflow}, {244, kSnapshotOverflow}, {271, kSnapshotOverflow}, {281, kSnapshotOverflow},
    {282, kSnapshotOverflow}, {297, kSnapshotOverflow}};
const std::map<std::uint64_t, const char*> kDiskFaultLibraryCrashes = {
    {8, kDoubleFree},   {25, kDoubleFree},  {41, kDoubleFree},  {52, kDoubleFree},  {55, kDoubleFree},
    {62, kDoubleFree},  {104, kDoubleFree}, {126, kDoubleFree}, {150, kDoubleFree}, {164, kDoubleFree},
    {178, kDoubleFree}, {182, kDoubleFree}, {198, kDoubleFree}, {213, kDoubleFree}, {220, kDoubleFree},
};
const std::map<std::uint64_t, const char*> kSnapshotAndDiskFaultLibraryCrashes = {
    {43, kDoubleFree},  {52, kDoubleFree},  {68, kDoubleFree},  {79, kDoubleFree},
    {88, kDoubleFree},  {126, kDoubleFree}, {150, kDoubleFree}, {152, kDoubleFree},
    {184, kDoubleFree}, {220, kDoubleFree}, {257, kDoubleFree}, {261, kDoubleFree},
};

TEST(LedgerCluster, RandomisedFaultsWithSnapshots) {
  run_seeds(150, Faults{.snapshots = true}, kSnapshotLibraryCrashes);
}

TEST(LedgerCluster, RandomisedFaultsWithDiskFaults) {
  run_seeds(150, Faults{.disk = true}, kDiskFaultLibraryCrashes);
}

TEST(LedgerCluster, RandomisedFaultsWithSnapshotsAndDiskFaults) {
  run_seeds(150, Faults{.snapshots = true, .disk = true}, kSnapshotAndDiskFaultLibraryCrashes);
}

}  // namespace
}  // namespace rw::consensus
