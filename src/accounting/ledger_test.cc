// Tests of the accounting state machine: duplicates are no-ops (docs/design.md
// invariant 2), sessions, the export cursor (invariant 3), bounds, and
// canonical snapshots (docs/style.md §6).
#include "accounting/ledger.h"

#include <gtest/gtest.h>
#include <openssl/sha.h>

#include <algorithm>
#include <map>
#include <optional>

#include "accounting/accounting_request_for_test.h"
#include "base/random.h"

namespace rw::accounting {
namespace {

using testing::AccountingRequest;
using testing::entry_of;
using testing::record_of;
using testing::RequestSpec;

RequestSpec start_of(const std::string& session, const std::string& nas_identifier = "") {
  RequestSpec spec;
  spec.status_type = status::kStart;
  spec.session_id = session;
  spec.nas_identifier = nas_identifier;
  return spec;
}

RequestSpec with_status(RequestSpec spec, std::uint32_t status_type, std::uint32_t session_time_s = 0) {
  spec.status_type = status_type;
  spec.session_time_s = session_time_s;
  return spec;
}

TEST(Ledger, AppliesNewRecords) {
  Ledger ledger;
  const Record record = record_of(start_of("s1"));
  const ApplyResult result = ledger.apply(1, entry_of({record}));
  EXPECT_EQ(result.type, EntryType::kRecords);
  EXPECT_EQ(result.new_keys, std::vector<RecordKey>{record.key});
  EXPECT_TRUE(result.duplicate_keys.empty());
  ASSERT_EQ(ledger.records().size(), 1u);
  EXPECT_EQ(ledger.records().front().index, 1u);
  EXPECT_EQ(ledger.records().front().record, record);
  EXPECT_EQ(ledger.last_applied_index(), 1u);
  EXPECT_EQ(ledger.held_bytes(), encoded_size(record));
}

// The three cases of docs/design.md invariant 2, built as real signed packets.
TEST(Ledger, DuplicatesOfInvariantTwoAreNoOps) {
  RequestSpec original = start_of("s1");
  original.identifier = 20;
  original.delay_s = 0;
  original.message_authenticator = true;
  RequestSpec resend = original;  // NAS re-send: new Identifier, larger delay.
  resend.identifier = 21;
  resend.delay_s = 10;

  Ledger ledger;
  const Record first = record_of(original, 1'000);
  ASSERT_EQ(ledger.apply(1, entry_of({first})).new_keys.size(), 1u);
  const std::vector<std::uint8_t> before = ledger.snapshot();

  // A NAS retransmission (same Identifier), received later by a gateway.
  const ApplyResult retransmission = ledger.apply(2, entry_of({record_of(original, 4'000)}));
  // A NAS re-send with a new Identifier and a larger Acct-Delay-Time.
  const ApplyResult resent = ledger.apply(3, entry_of({record_of(resend, 11'000)}));
  // A gateway re-submission of the same record after a leader change.
  const ApplyResult resubmitted = ledger.apply(4, entry_of({first}));

  for (const ApplyResult* result : {&retransmission, &resent, &resubmitted}) {
    EXPECT_TRUE(result->new_keys.empty());
    EXPECT_EQ(result->duplicate_keys, std::vector<RecordKey>{first.key});
  }
  ASSERT_EQ(ledger.records().size(), 1u);
  EXPECT_EQ(ledger.records().front().record, first);
  EXPECT_EQ(ledger.counters().records_duplicate, 3u);
  // Only the applied index and the duplicate counter moved.
  Ledger expected = *Ledger::restore(before);
  EXPECT_EQ(expected.last_applied_index(), 1u);
  EXPECT_EQ(ledger.sessions(), expected.sessions());
}

TEST(Ledger, DuplicateWithinOneEntryIsANoOp) {
  Ledger ledger;
  const Record record = record_of(start_of("s1"));
  const ApplyResult result = ledger.apply(1, entry_of({record, record}));
  EXPECT_EQ(result.new_keys.size(), 1u);
  EXPECT_EQ(result.duplicate_keys.size(), 1u);
  EXPECT_EQ(ledger.records().size(), 1u);
}

TEST(Ledger, StartOpensInterimUpdatesStopCloses) {
  Ledger ledger;
  const RequestSpec start = start_of("s1");
  ledger.apply(1, entry_of({record_of(start, 10'000)}));
  ASSERT_EQ(ledger.sessions().size(), 1u);
  const Session& opened = ledger.sessions().begin()->second;
  EXPECT_EQ(opened.acct_session_id, "s1");
  EXPECT_EQ(opened.user_name, "bob");
  EXPECT_EQ(opened.client, "nas1");
  EXPECT_EQ(opened.started_unix_ms, 10'000);
  EXPECT_EQ(opened.nas_address, (std::vector<std::uint8_t>{10, 0, 0, 1}));
  EXPECT_EQ(opened.key, testing::default_recipe().session_key(AccountingRequest(start).packet()));

  RequestSpec interim = with_status(start, status::kInterimUpdate, 60);
  interim.input_octets = 1234;
  ledger.apply(2, entry_of({record_of(interim, 70'000)}));
  ASSERT_EQ(ledger.sessions().size(), 1u);
  const Session& updated = ledger.sessions().begin()->second;
  EXPECT_EQ(updated.last_status_type, status::kInterimUpdate);
  EXPECT_EQ(updated.session_time_s, 60u);
  EXPECT_EQ(updated.input_octets, 1234u);
  EXPECT_EQ(updated.updated_index, 2u);
  EXPECT_EQ(updated.started_unix_ms, 10'000);

  ledger.apply(3, entry_of({record_of(with_status(start, status::kStop, 90), 100'000)}));
  EXPECT_TRUE(ledger.sessions().empty());
  EXPECT_EQ(ledger.records().size(), 3u);
}

// What a Disconnect-Request names a session by (RFC 5176 §3) is kept from
// the record that opens it, survives a snapshot, and counts in the bytes
// bound; a malformed framed address is not kept.
TEST(Ledger, KeepsCallingStationIdAndFramedAddressesOfTheOpeningRecord) {
  RequestSpec start = start_of("s1");
  start.calling_station_id = "AA-BB-CC-DD-EE-01";
  start.framed_ip = std::array<std::uint8_t, 4>{10, 9, 0, 5};
  start.framed_ipv6_prefix = {0, 64, 0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0};
  RequestSpec bad = start_of("s2");
  bad.framed_ipv6_prefix = {0, 64, 0x20, 0x01};  // shorter than its 64-bit prefix
  Ledger ledger;
  ledger.apply(1, entry_of({record_of(start, 10'000), record_of(bad, 10'000)}));
  ASSERT_EQ(ledger.sessions().size(), 2u);
  const Session* kept = nullptr;
  const Session* other = nullptr;
  for (const auto& [key, session] : ledger.sessions())
    (session.acct_session_id == "s1" ? kept : other) = &session;
  ASSERT_NE(kept, nullptr);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(kept->calling_station_id, "AA-BB-CC-DD-EE-01");
  EXPECT_EQ(kept->framed_ip_address, (std::vector<std::uint8_t>{10, 9, 0, 5}));
  EXPECT_EQ(kept->framed_ipv6_prefix, start.framed_ipv6_prefix);
  EXPECT_TRUE(other->framed_ipv6_prefix.empty());
  EXPECT_EQ(ledger.sessions_bytes(), encoded_size(*kept) + encoded_size(*other));

  // An Interim-Update without them leaves them as the Start gave them.
  ledger.apply(2, entry_of({record_of(with_status(start_of("s1"), status::kInterimUpdate, 60), 70'000)}));
  const std::vector<std::uint8_t> bytes = ledger.snapshot();
  EXPECT_EQ(bytes.at(4), 3);
  auto restored = Ledger::restore(bytes);
  ASSERT_TRUE(restored.has_value()) << to_string(restored.error());
  EXPECT_EQ(restored->sessions(), ledger.sessions());
  EXPECT_EQ(restored->sessions_bytes(), ledger.sessions_bytes());
  EXPECT_EQ(restored->snapshot(), bytes);
}

TEST(Ledger, InterimWithoutStartOpensTheSession) {
  Ledger ledger;
  ledger.apply(1, entry_of({record_of(with_status(start_of("s1"), status::kInterimUpdate, 30), 100'000)}));
  ASSERT_EQ(ledger.sessions().size(), 1u);
  EXPECT_EQ(ledger.sessions().begin()->second.started_unix_ms, 70'000);
}

TEST(Ledger, AccountingOnClosesEverySessionOfThatNasOnly) {
  Ledger ledger;
  std::uint64_t index = 0;
  ledger.apply(++index, entry_of({record_of(start_of("a", "nas-a")), record_of(start_of("b", "nas-a")),
                                  record_of(start_of("c", "nas-b"))}));
  // Same NAS identity under another client shortname.
  ledger.apply(++index, entry_of({record_of(start_of("d", "nas-a"), 0, "nas2")}));
  ASSERT_EQ(ledger.sessions().size(), 4u);

  RequestSpec on = start_of("on-1", "nas-a");
  on.status_type = status::kAccountingOn;
  on.user_name.clear();
  on.nas_port.reset();
  ledger.apply(++index, entry_of({record_of(on)}));
  ASSERT_EQ(ledger.sessions().size(), 2u);
  for (const auto& [key, session] : ledger.sessions()) {
    EXPECT_TRUE(session.acct_session_id == "c" || session.acct_session_id == "d") << session.acct_session_id;
  }
  EXPECT_EQ(ledger.counters().sessions_closed_by_nas, 2u);

  RequestSpec off = start_of("off-1");
  off.status_type = status::kAccountingOff;
  ledger.apply(++index, entry_of({record_of(off, 0, "nas2")}));
  ASSERT_EQ(ledger.sessions().size(), 1u);
  EXPECT_EQ(ledger.sessions().begin()->second.acct_session_id, "c");
}

TEST(Ledger, CountsOpenSessionsPerUserThroughStartInterimStop) {
  Ledger ledger;
  RequestSpec alice = start_of("a1");
  alice.user_name = "alice";
  EXPECT_EQ(ledger.open_sessions_of("alice"), 0u);
  ledger.apply(1, entry_of({record_of(alice), record_of(start_of("b1"))}));
  EXPECT_EQ(ledger.open_sessions_of("alice"), 1u);
  EXPECT_EQ(ledger.open_sessions_of("bob"), 1u);
  // An Interim-Update keeps the session: still one.
  ledger.apply(2, entry_of({record_of(with_status(alice, status::kInterimUpdate, 60))}));
  EXPECT_EQ(ledger.open_sessions_of("alice"), 1u);
  RequestSpec second = alice;
  second.session_id = "a2";
  ledger.apply(3, entry_of({record_of(second)}));
  EXPECT_EQ(ledger.open_sessions_of("alice"), 2u);
  // Names are compared byte for byte.
  EXPECT_EQ(ledger.open_sessions_of("Alice"), 0u);
  ledger.apply(4, entry_of({record_of(with_status(alice, status::kStop, 90))}));
  EXPECT_EQ(ledger.open_sessions_of("alice"), 1u);
  // A Stop of a session the table does not hold changes nothing.
  RequestSpec unknown = alice;
  unknown.session_id = "never-started";
  ledger.apply(5, entry_of({record_of(with_status(unknown, status::kStop, 1))}));
  EXPECT_EQ(ledger.open_sessions_of("alice"), 1u);
  ledger.apply(6, entry_of({record_of(with_status(second, status::kStop, 10))}));
  EXPECT_EQ(ledger.open_sessions_of("alice"), 0u);
  EXPECT_EQ(ledger.users_with_sessions(), 1u);  // bob
}

TEST(Ledger, AccountingOnAndOffCloseTheUsersSessionsOfThatNas) {
  Ledger ledger;
  ledger.apply(1, entry_of({record_of(start_of("a", "nas-a")), record_of(start_of("b", "nas-a")),
                            record_of(start_of("c", "nas-b"))}));
  EXPECT_EQ(ledger.open_sessions_of("bob"), 3u);
  RequestSpec on = start_of("on-1", "nas-a");
  on.status_type = status::kAccountingOn;
  on.user_name.clear();
  ledger.apply(2, entry_of({record_of(on)}));
  EXPECT_EQ(ledger.open_sessions_of("bob"), 1u);
  RequestSpec off = start_of("off-1", "nas-b");
  off.status_type = status::kAccountingOff;
  ledger.apply(3, entry_of({record_of(off)}));
  EXPECT_EQ(ledger.open_sessions_of("bob"), 0u);
  EXPECT_EQ(ledger.users_with_sessions(), 0u);
}

TEST(Ledger, SessionsPastTheBoundAreNotCountedForTheirUser) {
  Ledger ledger(LedgerLimits{.sessions_max = 1});
  ledger.apply(1, entry_of({record_of(start_of("a")), record_of(start_of("b"))}));
  EXPECT_EQ(ledger.open_sessions_of("bob"), 1u);
  // The Stop of the untracked session leaves the tracked one counted.
  ledger.apply(2, entry_of({record_of(with_status(start_of("b"), status::kStop, 5))}));
  EXPECT_EQ(ledger.open_sessions_of("bob"), 1u);
}

TEST(Snapshot, RestoreRebuildsThePerUserIndexWithoutStoringIt) {
  Ledger ledger;
  RequestSpec alice = start_of("a1");
  alice.user_name = "alice";
  ledger.apply(1, entry_of({record_of(alice), record_of(start_of("b1")), record_of(start_of("b2"))}));
  const std::vector<std::uint8_t> bytes = ledger.snapshot();
  auto restored = Ledger::restore(bytes);
  ASSERT_TRUE(restored.has_value());
  EXPECT_EQ(restored->open_sessions_of("alice"), 1u);
  EXPECT_EQ(restored->open_sessions_of("bob"), 2u);
  // Same bytes as before: the index added nothing to the snapshot.
  EXPECT_EQ(restored->snapshot(), bytes);
  restored->apply(2, entry_of({record_of(with_status(start_of("b1"), status::kStop, 5))}));
  EXPECT_EQ(restored->open_sessions_of("bob"), 1u);
}

TEST(Ledger, ExportCursorDropsOnlyExportedRecords) {
  Ledger ledger;
  const Record a = record_of(start_of("a"));
  const Record b = record_of(start_of("b"));
  const Record c = record_of(start_of("c"));
  ledger.apply(1, entry_of({a, b}));
  ledger.apply(2, entry_of({c}));
  const ApplyResult result = ledger.apply(3, encode_export_cursor_entry(1));
  EXPECT_EQ(result.type, EntryType::kExportCursor);
  EXPECT_EQ(result.records_exported, 2u);
  ASSERT_EQ(ledger.records().size(), 1u);
  EXPECT_EQ(ledger.records().front().record, c);
  EXPECT_EQ(ledger.exported_through(), 1u);
  EXPECT_EQ(ledger.held_bytes(), encoded_size(c));
  // Exported keys stay in the window: a late re-send is still a duplicate.
  EXPECT_TRUE(ledger.knows(a.key));
  EXPECT_EQ(ledger.apply(4, entry_of({a})).duplicate_keys.size(), 1u);
  // A stale (lower) cursor changes nothing.
  EXPECT_EQ(ledger.apply(5, encode_export_cursor_entry(0)).records_exported, 0u);
  EXPECT_EQ(ledger.records().size(), 1u);
}

TEST(Ledger, SkipsCursorNotBehindItsEntry) {
  Ledger ledger;
  ledger.apply(1, entry_of({record_of(start_of("a"))}));
  const ApplyResult result = ledger.apply(2, encode_export_cursor_entry(2));
  EXPECT_EQ(result.skipped, EntryError::kCursorNotBehind);
  EXPECT_EQ(ledger.records().size(), 1u);
  EXPECT_EQ(ledger.counters().entries_skipped, 1u);
}

TEST(Ledger, SkipsUndecodableEntryAndCountsIt) {
  Ledger ledger;
  const std::vector<std::uint8_t> garbage = {'R', 'A', 9, 9};
  const ApplyResult result = ledger.apply(1, garbage);
  EXPECT_EQ(result.skipped, EntryError::kUnsupportedVersion);
  EXPECT_FALSE(result.type.has_value());
  EXPECT_EQ(ledger.counters().entries_skipped, 1u);
  EXPECT_EQ(ledger.last_applied_index(), 1u);
  EXPECT_EQ(ledger.apply(2, encode_barrier_entry(3)).type, EntryType::kBarrier);
}

TEST(Ledger, StopsAcceptingAtHeldRecordBoundWithoutDropping) {
  Ledger ledger({.held_records_max = 2});
  EXPECT_TRUE(ledger.accepting());
  EXPECT_EQ(ledger.headroom_records(), 2u);
  ledger.apply(1, entry_of({record_of(start_of("a")), record_of(start_of("b"))}));
  EXPECT_FALSE(ledger.accepting());
  EXPECT_EQ(ledger.headroom_records(), 0u);
  // A committed entry past the bound is still applied: apply never refuses.
  ledger.apply(2, entry_of({record_of(start_of("c"))}));
  EXPECT_EQ(ledger.records().size(), 3u);
  ledger.apply(3, encode_export_cursor_entry(2));
  EXPECT_TRUE(ledger.accepting());
}

TEST(Ledger, StopsAcceptingAtHeldByteBound) {
  const Record record = record_of(start_of("a"));
  Ledger ledger({.held_bytes_max = encoded_size(record) + 1});
  ledger.apply(1, entry_of({record}));
  EXPECT_TRUE(ledger.accepting());
  EXPECT_EQ(ledger.headroom_bytes(), 1u);
  ledger.apply(2, entry_of({record_of(start_of("b"))}));
  EXPECT_FALSE(ledger.accepting());
}

TEST(Ledger, SessionsPastTheBoundAreCountedNotTracked) {
  Ledger ledger({.sessions_max = 1});
  ledger.apply(1, entry_of({record_of(start_of("a")), record_of(start_of("b"))}));
  EXPECT_EQ(ledger.sessions().size(), 1u);
  EXPECT_EQ(ledger.records().size(), 2u);
  EXPECT_EQ(ledger.counters().sessions_untracked, 1u);
}

TEST(Ledger, WindowForgetsExportedKeysPastCountBound) {
  Ledger ledger({.exported_keys_max = 1});
  const Record a = record_of(start_of("a"));
  const Record b = record_of(start_of("b"));
  ledger.apply(1, entry_of({a}));
  ledger.apply(2, entry_of({b}));
  ledger.apply(3, encode_export_cursor_entry(2));
  EXPECT_EQ(ledger.window_keys(), 1u);
  EXPECT_FALSE(ledger.knows(a.key));
  EXPECT_TRUE(ledger.knows(b.key));
}

// Applies Starts of fresh sessions, ten per entry, from `index` on; returns
// the next index.
std::uint64_t apply_starts(Ledger& ledger, std::uint64_t index, std::size_t count,
                           const std::string& prefix) {
  for (std::size_t done = 0; done < count; done += 10) {
    std::vector<Record> records;
    for (std::size_t i = done; i < std::min(count, done + 10); ++i)
      records.push_back(record_of(start_of(prefix + std::to_string(i))));
    ledger.apply(index++, entry_of(records));
  }
  return index;
}

// Held records up to an eighth past their bound (committed after it was
// reached) and a full window: a ledger sized for its bounds never rehashes
// its key index, while one left to grow does (docs/accounting.md "The key
// index, sized once").
TEST(Ledger, AKeyIndexSizedForTheBoundsDoesNotRehashUpToThem) {
  const LedgerLimits limits{.held_records_max = 200, .exported_keys_max = 300};
  Ledger sized(limits);
  sized.reserve_key_index();
  Ledger grown(limits);
  const std::size_t sized_buckets = sized.key_index_buckets();
  const std::size_t grown_buckets = grown.key_index_buckets();
  for (Ledger* ledger : {&sized, &grown}) {
    std::uint64_t index = apply_starts(*ledger, 1, 220, "held-");
    ledger->apply(index, encode_export_cursor_entry(index - 1));
    ++index;
    index = apply_starts(*ledger, index, 300, "window-");
    ledger->apply(index, encode_export_cursor_entry(index - 1));
    ++index;
    apply_starts(*ledger, index, 220, "again-");
    EXPECT_EQ(ledger->window_keys(), 300u);
    EXPECT_EQ(ledger->records().size(), 220u);
  }
  EXPECT_EQ(sized.key_index_buckets(), sized_buckets);
  EXPECT_NE(grown.key_index_buckets(), grown_buckets);
  EXPECT_EQ(sized, grown);
}

constexpr std::int64_t kT = 1'700'000'000'000;

// A ledger whose window ages by time alone (60 s) and holds the exported
// key of record "a", both stamped kT.
Ledger ledger_with_exported(const Record& a) {
  Ledger ledger({.exported_keys_age_ms = 60'000, .exported_keys_min_entries = 0});
  ledger.apply(1, entry_of({a}, kT));
  ledger.apply(2, encode_export_cursor_entry(1, kT));
  return ledger;
}

TEST(Ledger, WindowForgetsExportedKeysPastAgeBound) {
  const std::int64_t t = kT;
  const Record a = record_of(start_of("a"), t);
  Ledger ledger = ledger_with_exported(a);
  EXPECT_TRUE(ledger.knows(a.key));
  // Time advances only with the leaders' stamps, in steps of at most 10 s.
  for (std::uint64_t index = 3; index <= 8; ++index) {
    ledger.apply(index, encode_barrier_entry(1, t + 60'000));
  }
  EXPECT_EQ(ledger.clock_unix_ms(), t + 60'000);
  EXPECT_TRUE(ledger.knows(a.key));
  ledger.apply(9, encode_barrier_entry(1, t + 60'001));
  EXPECT_FALSE(ledger.knows(a.key));
}

TEST(Ledger, GatewayReceiveTimesDoNotAgeTheWindow) {
  const std::int64_t t = kT;
  const Record a = record_of(start_of("a"), t);
  Ledger ledger = ledger_with_exported(a);
  // A gateway whose clock jumped a year (or a forged record) moves nothing.
  ledger.apply(3, entry_of({record_of(start_of("b"), t + 365LL * 24 * 3600 * 1000)}, t + 1));
  EXPECT_EQ(ledger.clock_unix_ms(), t + 1);
  EXPECT_TRUE(ledger.knows(a.key));
}

TEST(Ledger, AJumpedLeaderClockCannotEmptyTheWindow) {
  const LedgerLimits limits{
      .exported_keys_age_ms = 15 * 60 * 1000, .exported_keys_min_entries = 500, .clock_step_max_ms = 10'000};
  Ledger ledger(limits);
  const std::int64_t t = 1'700'000'000'000;
  const std::int64_t jumped = t + 365LL * 24 * 3600 * 1000;
  const Record a = record_of(start_of("a"), t);
  ledger.apply(1, entry_of({a}, t));
  ledger.apply(2, encode_export_cursor_entry(1, t));
  // One absurd stamp moves the clock one step, not a year.
  ledger.apply(3, entry_of({record_of(start_of("b"), t)}, jumped));
  EXPECT_EQ(ledger.clock_unix_ms(), t + 10'000);
  EXPECT_TRUE(ledger.knows(a.key));
  // A leader whose clock stays jumped: 90 steps pass the 15 minutes, but the
  // key stays until 500 entries have followed its own.
  std::uint64_t index = 3;
  while (index < 500) ledger.apply(++index, encode_barrier_entry(1, jumped));
  EXPECT_GT(ledger.clock_unix_ms(), t + limits.exported_keys_age_ms);
  EXPECT_TRUE(ledger.knows(a.key));
  ledger.apply(++index, encode_barrier_entry(1, jumped));
  EXPECT_EQ(index, 501u);
  EXPECT_FALSE(ledger.knows(a.key));
}

TEST(Ledger, TheFirstStampSetsTheClockAndLateStampsDoNotMoveItBack) {
  Ledger ledger;
  const std::int64_t t = 1'700'000'000'000;
  ledger.apply(1, encode_barrier_entry(1, t));
  EXPECT_EQ(ledger.clock_unix_ms(), t);
  ledger.apply(2, encode_barrier_entry(1, t - 5'000));  // a new leader whose clock is late
  EXPECT_EQ(ledger.clock_unix_ms(), t);
  ledger.apply(3, encode_barrier_entry(1));  // version 1: no stamp
  EXPECT_EQ(ledger.clock_unix_ms(), t);
  ledger.apply(4, encode_barrier_entry(1, t + 3'000));
  EXPECT_EQ(ledger.clock_unix_ms(), t + 3'000);
}

RequestSpec with_interval(RequestSpec spec, std::uint32_t interval_s) {
  spec.interim_interval_s = interval_s;
  return spec;
}

// Interim-Updates move only a session's expiry deadline (ledger.cc
// update_sessions); the NAS index, the per-user counts and the byte total
// must stay what a ledger rebuilt from the same table (restore) has.
TEST(Ledger, InterimUpdatesLeaveEveryIndexAsARebuildHasIt) {
  Ledger ledger;
  std::uint64_t index = 0;
  ledger.apply(++index, entry_of({record_of(start_of("a", "nas-a")), record_of(start_of("b", "nas-a")),
                                  record_of(start_of("c", "nas-b"))}));
  for (std::uint32_t t = 1; t <= 3; ++t) {
    ledger.apply(++index,
                 entry_of({record_of(with_interval(
                               with_status(start_of("a", "nas-a"), status::kInterimUpdate, 60 * t), 30 * t)),
                           record_of(with_status(start_of("c", "nas-b"), status::kInterimUpdate, 60 * t))}));
  }
  auto rebuilt = Ledger::restore(ledger.snapshot());
  ASSERT_TRUE(rebuilt.has_value());
  EXPECT_EQ(ledger.sessions_bytes(), rebuilt->sessions_bytes());
  EXPECT_EQ(ledger.open_sessions_of("bob"), 3u);
  EXPECT_EQ(rebuilt->open_sessions_of("bob"), 3u);

  RequestSpec on = start_of("on-1", "nas-a");
  on.status_type = status::kAccountingOn;
  on.user_name.clear();
  on.nas_port.reset();
  for (Ledger* each : {&ledger, &*rebuilt}) {
    each->apply(index + 1, entry_of({record_of(on)}));
    ASSERT_EQ(each->sessions().size(), 1u);
    EXPECT_EQ(each->sessions().begin()->second.acct_session_id, "c");
    EXPECT_EQ(each->open_sessions_of("bob"), 1u);
  }
  EXPECT_EQ(ledger.sessions_bytes(), rebuilt->sessions_bytes());
  EXPECT_EQ(ledger.snapshot(), rebuilt->snapshot());
}

TEST(Ledger, ASessionWithoutRecordsForThreeIntervalsExpires) {
  Ledger ledger({.clock_step_max_ms = 100'000'000});
  const std::int64_t t = 1'700'000'000'000;
  ledger.apply(1, entry_of({record_of(with_interval(start_of("a"), 60), t)}, t));
  ledger.apply(2, entry_of({record_of(start_of("b"), t)}, t));  // no interval: the default, 3600 s
  EXPECT_EQ(ledger.open_sessions_of("bob"), 2u);
  // An Interim-Update at +100 s moves a's deadline to +100 + 180 s.
  ledger.apply(3,
               entry_of({record_of(with_interval(with_status(start_of("a"), status::kInterimUpdate, 100), 60),
                                   t + 100'000)},
                        t + 100'000));
  ledger.apply(4, encode_barrier_entry(1, t + 279'999));
  EXPECT_EQ(ledger.sessions().size(), 2u);
  ledger.apply(5, encode_barrier_entry(1, t + 280'000));
  ASSERT_EQ(ledger.sessions().size(), 1u);
  EXPECT_EQ(ledger.sessions().begin()->second.acct_session_id, "b");
  EXPECT_EQ(ledger.open_sessions_of("bob"), 1u);
  EXPECT_EQ(ledger.counters().sessions_expired, 1u);
  // The expired session's records are still held for export: only the table changed.
  EXPECT_EQ(ledger.records().size(), 3u);
  ledger.apply(6, encode_barrier_entry(1, t + 3 * 3600 * 1000));
  EXPECT_TRUE(ledger.sessions().empty());
  EXPECT_EQ(ledger.counters().sessions_expired, 2u);
  EXPECT_EQ(ledger.sessions_bytes(), 0u);
}

TEST(Ledger, SessionsDoNotExpireWithMultipleZeroOrWithoutStamps) {
  const std::int64_t t = 1'700'000'000'000;
  Ledger never({.clock_step_max_ms = 1'000'000'000, .session_expiry_multiple = 0});
  never.apply(1, entry_of({record_of(with_interval(start_of("a"), 1), t)}, t));
  never.apply(2, encode_barrier_entry(1, t + 100'000'000));
  EXPECT_EQ(never.sessions().size(), 1u);
  // Version 1 entries carry no time: the session ages by nothing.
  Ledger old;
  old.apply(1, entry_of({record_of(with_interval(start_of("a"), 1), t)}));
  old.apply(2, entry_of({record_of(start_of("b"), t + 100'000'000)}));
  EXPECT_EQ(old.sessions().size(), 2u);
}

TEST(Ledger, SessionsPastTheByteBoundAreCountedNotTracked) {
  Ledger probe;
  probe.apply(1, entry_of({record_of(start_of("a"))}));
  const std::size_t one = probe.sessions_bytes();
  EXPECT_EQ(one, encoded_size(probe.sessions().begin()->second));
  Ledger ledger({.sessions_bytes_max = one + one / 2});
  ledger.apply(1, entry_of({record_of(start_of("a")), record_of(start_of("b"))}));
  EXPECT_EQ(ledger.sessions().size(), 1u);
  EXPECT_EQ(ledger.counters().sessions_untracked, 1u);
  // Closing one frees its bytes for the next.
  ledger.apply(2,
               entry_of({record_of(with_status(start_of("a"), status::kStop, 5)), record_of(start_of("c"))}));
  ASSERT_EQ(ledger.sessions().size(), 1u);
  EXPECT_EQ(ledger.sessions().begin()->second.acct_session_id, "c");
}

TEST(Ledger, AccountingOnMatchesTheNasByAddressAndIdentifier) {
  Ledger ledger;
  auto start_at = [](std::string session, std::uint8_t last_octet, std::string identifier) {
    RequestSpec spec = start_of(session, identifier);
    spec.nas_ip = std::array<std::uint8_t, 4>{10, 0, 0, last_octet};
    return record_of(spec);
  };
  ledger.apply(1, entry_of({start_at("a", 1, "x"), start_at("b", 1, "y"), start_at("c", 2, "x"),
                            start_at("d", 2, ""), start_at("e", 3, "")}));
  ASSERT_EQ(ledger.sessions().size(), 5u);
  auto on = [](std::optional<std::uint8_t> last_octet, std::string identifier) {
    RequestSpec spec = start_of("on", identifier);
    spec.status_type = status::kAccountingOn;
    spec.nas_ip.reset();
    if (last_octet) spec.nas_ip = std::array<std::uint8_t, 4>{10, 0, 0, *last_octet};
    return record_of(spec);
  };
  auto open = [&] {
    std::string ids;
    for (const auto& [key, session] : ledger.sessions()) ids += session.acct_session_id;
    std::sort(ids.begin(), ids.end());
    return ids;
  };
  ledger.apply(2, entry_of({on(1, "y")}));  // address and identifier
  EXPECT_EQ(open(), "acde");
  ledger.apply(3, entry_of({on(std::nullopt, "x")}));  // identifier only: both addresses
  EXPECT_EQ(open(), "de");
  ledger.apply(4, entry_of({on(2, "")}));  // address only
  EXPECT_EQ(open(), "e");
  EXPECT_EQ(ledger.counters().sessions_closed_by_nas, 4u);
  // After a restore the NAS index is rebuilt: the On/Off still finds its sessions.
  auto restored = Ledger::restore(ledger.snapshot());
  ASSERT_TRUE(restored.has_value());
  std::optional<Ledger> original(std::move(*restored));
  // A copy (the admin API reads copies) has its own index, not the original's.
  Ledger copy = *original;
  original->apply(5, entry_of({on(std::nullopt, "")}));
  EXPECT_TRUE(original->sessions().empty());
  original.reset();
  copy.apply(5, entry_of({on(2, "")}));
  ASSERT_EQ(copy.sessions().size(), 1u);
  copy.apply(6, entry_of({on(3, "")}));
  EXPECT_TRUE(copy.sessions().empty());
}

// The session indexes (by key, by NAS, by deadline) are derived state kept
// incrementally, and an expiry entry moves only when its deadline comes
// early (ledger.cc expire_sessions). A ledger restored from a snapshot
// builds them afresh. Under any mix of Starts, Interim-Updates that
// lengthen or shorten the interval, Stops, Accounting-On/Off and a clock
// that jumps, the two must close the same sessions at the same entries,
// and so must a copy, which rebuilds its own, and a ledger seeded anew.
TEST(Ledger, SessionIndexesKeptAsTheyGoActAsRebuiltOnes) {
  LedgerCounters seen;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    SeededRandom random(seed);
    const LedgerLimits limits{.clock_step_max_ms = 100'000'000};
    Ledger kept(limits);
    std::optional<Ledger> copy;
    std::int64_t t = 1'700'000'000'000;
    for (std::uint64_t index = 1; index <= 300; ++index) {
      t += static_cast<std::int64_t>(random.below(200'000));
      std::vector<Record> batch;
      const std::uint64_t records = 1 + random.below(4);
      for (std::uint64_t r = 0; r < records; ++r) {
        RequestSpec spec = start_of("s" + std::to_string(random.below(40)),
                                    random.below(2) == 0 ? "" : "id" + std::to_string(random.below(2)));
        spec.user_name = "user" + std::to_string(random.below(5));
        spec.nas_ip = std::array<std::uint8_t, 4>{10, 0, 0, static_cast<std::uint8_t>(1 + random.below(2))};
        spec.session_time_s = static_cast<std::uint32_t>(random.below(1'000'000));
        const std::uint64_t kind = random.below(20);
        if (kind < 7) {
          spec.interim_interval_s = static_cast<std::uint32_t>(random.below(3) * 60);
        } else if (kind < 14) {
          spec.status_type = status::kInterimUpdate;
          // Shorter and longer intervals than the session had, or none.
          spec.interim_interval_s = static_cast<std::uint32_t>(random.below(4) * 45);
        } else if (kind < 18) {
          spec.status_type = status::kStop;
        } else {
          spec.status_type = kind == 18 ? status::kAccountingOn : status::kAccountingOff;
          spec.user_name.clear();
          if (random.below(2) == 0) spec.nas_ip.reset();
        }
        batch.push_back(record_of(spec, t, random.below(4) == 0 ? "nas2" : "nas1"));
      }
      const auto entry = entry_of(batch, t);
      auto rebuilt = Ledger::restore(kept.snapshot(), limits);
      ASSERT_TRUE(rebuilt.has_value());
      if (index % 50 == 0) copy = kept;
      // A member seeds its indexes (Ledger::seed_indexes): mid-way
      // here, so that the indexes are rebuilt around live sessions.
      if (index == 150) kept.seed_indexes(0x9e3779b97f4a7c15 * seed);
      kept.apply(index, entry);
      rebuilt->apply(index, entry);
      ASSERT_EQ(kept.snapshot(), rebuilt->snapshot()) << "seed " << seed << ", entry " << index;
      ASSERT_EQ(kept.counters(), rebuilt->counters()) << "seed " << seed << ", entry " << index;
      ASSERT_EQ(kept.sessions_bytes(), rebuilt->sessions_bytes());
      ASSERT_EQ(kept.users_with_sessions(), rebuilt->users_with_sessions());
      for (int user = 0; user < 5; ++user) {
        const std::string name = "user" + std::to_string(user);
        ASSERT_EQ(kept.open_sessions_of(name), rebuilt->open_sessions_of(name));
      }
      if (copy) {
        copy->apply(index, entry);
        ASSERT_EQ(kept.snapshot(), copy->snapshot()) << "seed " << seed << ", entry " << index;
      }
    }
    seen.sessions_expired += kept.counters().sessions_expired;
    seen.sessions_closed_by_nas += kept.counters().sessions_closed_by_nas;
    seen.records_applied += kept.counters().records_applied;
  }
  // The mix reached every way a session closes.
  EXPECT_GT(seen.sessions_expired, 50u);
  EXPECT_GT(seen.sessions_closed_by_nas, 50u);
}

// Seeding rebuilds the hashed indexes (Ledger::seed_indexes): every key,
// session and per-user count must survive it.
TEST(Ledger, SeedingTheIndexesKeepsWhatTheyHold) {
  Ledger ledger;
  const std::vector<Record> records = {record_of(start_of("a", "nas-a")), record_of(start_of("b", "nas-a")),
                                       record_of(start_of("c", "nas-b"))};
  ledger.apply(1, entry_of(records));
  const auto before = ledger.snapshot();
  ledger.seed_indexes(0x0123456789abcdef);
  EXPECT_EQ(ledger.snapshot(), before);
  EXPECT_EQ(ledger.open_sessions_of("bob"), 3u);
  for (const Record& record : records) EXPECT_TRUE(ledger.knows(record.key));
  const ApplyResult again = ledger.apply(2, entry_of(records));
  EXPECT_EQ(again.duplicate_keys.size(), 3u);
  EXPECT_TRUE(again.new_keys.empty());
  ledger.apply(3, entry_of({record_of(with_status(start_of("b", "nas-a"), status::kStop, 9))}));
  EXPECT_EQ(ledger.open_sessions_of("bob"), 2u);
  RequestSpec on = start_of("on-1", "nas-a");
  on.status_type = status::kAccountingOn;
  on.user_name.clear();
  ledger.apply(4, entry_of({record_of(on)}));
  ASSERT_EQ(ledger.sessions().size(), 1u);
  EXPECT_EQ(ledger.sessions().begin()->second.acct_session_id, "c");
}

// The member passes its seed to restore() (LedgerState), so that a
// follower's restore builds the indexes once: what it restores must act as
// an unseeded restore does.
TEST(Ledger, ALedgerRestoredWithASeedActsAsAnUnseededOne) {
  Ledger ledger;
  const std::vector<Record> records = {record_of(start_of("a", "nas-a")), record_of(start_of("b", "nas-b"))};
  ledger.apply(1, entry_of(records));
  auto seeded = Ledger::restore(ledger.snapshot(), {}, 0xfeedfacecafebeef);
  ASSERT_TRUE(seeded.has_value());
  EXPECT_EQ(seeded->snapshot(), ledger.snapshot());
  for (Ledger* each : {&ledger, &*seeded}) {
    EXPECT_EQ(each->apply(2, entry_of(records)).duplicate_keys.size(), 2u);
    RequestSpec on = start_of("on-1", "nas-a");
    on.status_type = status::kAccountingOn;
    on.user_name.clear();
    each->apply(3, entry_of({record_of(on)}));
    EXPECT_EQ(each->open_sessions_of("bob"), 1u);
  }
  EXPECT_EQ(seeded->snapshot(), ledger.snapshot());
}

// The session index by key and the per-user counts are sized once for the
// session bounds, as the key index is for the record bounds, so opening
// sessions does not rehash them.
TEST(Ledger, TheSessionIndexIsSizedForTheSessionBounds) {
  Ledger ledger({.sessions_max = 5'000, .sessions_bytes_max = std::size_t{16} << 20});
  ledger.reserve_key_index();
  const std::size_t buckets = ledger.session_index_buckets();
  const std::size_t user_buckets = ledger.user_index_buckets();
  EXPECT_GE(buckets, 5'000u);
  EXPECT_GE(user_buckets, 5'000u);
  std::vector<Record> batch;
  std::uint64_t index = 0;
  for (int n = 0; n < 5'000; ++n) {
    RequestSpec spec = start_of("s" + std::to_string(n));
    spec.user_name = "user" + std::to_string(n);
    batch.push_back(record_of(spec));
    if (batch.size() == 64 || n == 4'999) {
      ledger.apply(++index, entry_of(batch));
      batch.clear();
    }
  }
  EXPECT_EQ(ledger.sessions().size(), 5'000u);
  EXPECT_EQ(ledger.users_with_sessions(), 5'000u);
  EXPECT_EQ(ledger.session_index_buckets(), buckets);
  EXPECT_EQ(ledger.user_index_buckets(), user_buckets);
  // The byte bound caps the sizing when it lets fewer sessions in.
  Ledger small({.sessions_max = 1'000'000, .sessions_bytes_max = 92 * 1'000});
  small.reserve_key_index();
  EXPECT_LT(small.session_index_buckets(), 5'000u);
}

Ledger busy_ledger() {
  Ledger ledger;
  ledger.apply(1, entry_of({record_of(start_of("a", "nas-a")), record_of(start_of("b"))}));
  ledger.apply(2, entry_of({record_of(with_status(start_of("b"), status::kInterimUpdate, 5))}));
  ledger.apply(3, encode_export_cursor_entry(1));
  ledger.apply(4, entry_of({record_of(start_of("c"), 0, "nas2")}));
  return ledger;
}

TEST(Snapshot, RestoreGivesAnEqualLedger) {
  const Ledger ledger = busy_ledger();
  const std::vector<std::uint8_t> bytes = ledger.snapshot();
  auto restored = Ledger::restore(bytes);
  ASSERT_TRUE(restored.has_value()) << to_string(restored.error());
  EXPECT_EQ(restored->snapshot(), bytes);
  EXPECT_TRUE(*restored == ledger);
  EXPECT_EQ(restored->records(), ledger.records());
  EXPECT_EQ(restored->sessions(), ledger.sessions());
  EXPECT_EQ(restored->counters(), ledger.counters());
  EXPECT_EQ(restored->held_bytes(), ledger.held_bytes());
  EXPECT_EQ(restored->last_applied_index(), 4u);
  EXPECT_EQ(restored->exported_through(), 1u);
}

// snapshot_into appends to what the buffer holds (the member's envelope
// header) and checksums only its own bytes; snapshot_size_bound covers it.
TEST(Snapshot, IntoABufferAppendsTheSameBytes) {
  const Ledger ledger = busy_ledger();
  const std::vector<std::uint8_t> bytes = ledger.snapshot();
  std::vector<std::uint8_t> buffer = {1, 2, 3};
  ledger.snapshot_into(buffer);
  ASSERT_EQ(buffer.size(), 3 + bytes.size());
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), buffer.begin() + 3));
  EXPECT_GE(ledger.snapshot_size_bound(), bytes.size());
  EXPECT_GE(Ledger().snapshot_size_bound(), Ledger().snapshot().size());
}

TEST(Snapshot, TwoLedgersFedTheSameEntriesAreIdentical) {
  EXPECT_EQ(busy_ledger().snapshot(), busy_ledger().snapshot());
}

TEST(Snapshot, RefusesCorruption) {
  std::vector<std::uint8_t> bytes = busy_ledger().snapshot();
  auto flipped = bytes;
  flipped[40] ^= 1;
  EXPECT_EQ(Ledger::restore(flipped).error(), SnapshotError::kBadChecksum);
  auto bad_magic = bytes;
  bad_magic[0] = 'X';
  EXPECT_EQ(Ledger::restore(bad_magic).error(), SnapshotError::kBadMagic);
  auto bad_version = bytes;
  bad_version[4] = 4;
  EXPECT_EQ(Ledger::restore(bad_version).error(), SnapshotError::kUnsupportedVersion);
  EXPECT_EQ(Ledger::restore(Bytes(bytes).first(10)).error(), SnapshotError::kTruncated);
}

// A Framed-IP-Address of other than 4 octets is no session apply() keeps:
// refused, even under a valid checksum.
TEST(Snapshot, RefusesAFramedAddressApplyWouldNotKeep) {
  RequestSpec start = start_of("s1");
  start.framed_ip = std::array<std::uint8_t, 4>{10, 9, 0, 5};
  Ledger ledger;
  ledger.apply(1, entry_of({record_of(start)}));
  std::vector<std::uint8_t> bytes = ledger.snapshot();
  const std::vector<std::uint8_t> field = {4, 10, 9, 0, 5};
  auto at = std::search(bytes.begin(), bytes.end(), field.begin(), field.end());
  ASSERT_NE(at, bytes.end());
  *at = 3;
  bytes.erase(at + 4);
  SHA256(bytes.data(), bytes.size() - SHA256_DIGEST_LENGTH,
         bytes.data() + bytes.size() - SHA256_DIGEST_LENGTH);
  EXPECT_EQ(Ledger::restore(bytes).error(), SnapshotError::kBadSession);
}

TEST(SnapshotError, EveryReasonHasAName) {
  for (std::size_t i = 0; i < kSnapshotErrorCount; ++i) {
    EXPECT_NE(to_string(static_cast<SnapshotError>(i)), "unknown") << i;
  }
}

// A seeded random history: batches with repeats (retransmissions), Accounting-
// On/Off, export cursors (some stale, some ahead), barriers and garbage.
class History {
 public:
  explicit History(std::uint64_t seed) : random_(seed) {}

  std::vector<std::uint8_t> next_entry(std::uint64_t index) {
    const std::uint64_t kind = random_.below(10);
    // The leader's stamp: mostly advancing, sometimes late (a new leader),
    // now and then absurdly ahead (a clock jump), sometimes absent (version 1).
    const std::uint64_t clock_roll = random_.below(20);
    leader_ms_ += static_cast<std::int64_t>(random_.below(200'000));
    std::optional<std::int64_t> stamp = leader_ms_;
    if (clock_roll == 0) stamp = leader_ms_ + 365LL * 24 * 3600 * 1000;
    if (clock_roll == 1) stamp = leader_ms_ - 60'000;
    if (clock_roll == 2) stamp.reset();
    if (kind == 0) return encode_barrier_entry(index, stamp);
    if (kind == 1) return encode_export_cursor_entry(random_.below(index + 1), stamp);
    if (kind == 2) {
      std::vector<std::uint8_t> garbage(random_.below(12));
      random_.fill(garbage);
      return garbage;
    }
    std::vector<Record> batch;
    const std::uint64_t size = 1 + random_.below(8);
    for (std::uint64_t i = 0; i < size; ++i) batch.push_back(next_record());
    return encode_records_entry(batch, stamp);
  }

 private:
  Record next_record() {
    if (!sent_.empty() && random_.below(4) == 0) return sent_[random_.below(sent_.size())];
    RequestSpec spec =
        start_of("s" + std::to_string(random_.below(20)), "nas-" + std::to_string(random_.below(3)));
    // A few users, one of them anonymous, so that the per-user index sees
    // several sessions per name and sessions without one.
    const std::uint64_t user = random_.below(4);
    spec.user_name = user == 3 ? std::string() : "user" + std::to_string(user);
    const std::uint64_t roll = random_.below(20);
    spec.status_type = roll < 6     ? status::kStart
                       : roll < 14  ? status::kInterimUpdate
                       : roll < 18  ? status::kStop
                       : roll == 18 ? status::kAccountingOn
                                    : status::kAccountingOff;
    spec.session_time_s = static_cast<std::uint32_t>(random_.below(1000));
    if (random_.below(2) == 0) spec.interim_interval_s = static_cast<std::uint32_t>(60 + random_.below(600));
    clock_ms_ += static_cast<std::int64_t>(random_.below(5000));
    Record record = record_of(spec, clock_ms_, random_.below(5) == 0 ? "nas2" : "nas1");
    sent_.push_back(record);
    return record;
  }

  SeededRandom random_;
  std::vector<Record> sent_;
  std::int64_t clock_ms_ = 1'700'000'000'000;
  std::int64_t leader_ms_ = 1'700'000'000'000;
};

// The per-user index must equal a count of the session table by User-Name.
void expect_index_matches_sessions(const Ledger& ledger, const std::string& context) {
  std::map<std::string, std::uint32_t> counted;
  for (const auto& [key, session] : ledger.sessions()) {
    if (!session.user_name.empty()) ++counted[session.user_name];
  }
  ASSERT_EQ(ledger.users_with_sessions(), counted.size()) << context;
  for (const auto& [user, count] : counted) ASSERT_EQ(ledger.open_sessions_of(user), count) << context;
  EXPECT_EQ(ledger.open_sessions_of(""), 0u) << context;
  std::size_t bytes = 0;
  for (const auto& [key, session] : ledger.sessions()) bytes += encoded_size(session);
  EXPECT_EQ(ledger.sessions_bytes(), bytes) << context;
}

TEST(Snapshot, RandomHistoriesWithRestoreInTheMiddleConverge) {
  const LedgerLimits limits{.sessions_max = 30,
                            .sessions_bytes_max = 2000,
                            .exported_keys_max = 40,
                            .exported_keys_age_ms = 200'000,
                            .exported_keys_min_entries = 10,
                            .clock_step_max_ms = 300'000,
                            .session_default_interim_s = 300};
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    History history(seed);
    Ledger a(limits);
    Ledger b(limits);
    const std::uint64_t steps = 120;
    for (std::uint64_t index = 1; index <= steps; ++index) {
      const std::vector<std::uint8_t> entry = history.next_entry(index);
      const ApplyResult ra = a.apply(index, entry);
      const ApplyResult rb = b.apply(index, entry);
      ASSERT_EQ(ra.new_keys, rb.new_keys) << "seed " << seed << " index " << index;
      ASSERT_EQ(ra.duplicate_keys, rb.duplicate_keys) << "seed " << seed << " index " << index;
      expect_index_matches_sessions(a, "seed " + std::to_string(seed) + " index " + std::to_string(index));
      if (index == steps / 2) {
        auto restored = Ledger::restore(b.snapshot(), limits);
        ASSERT_TRUE(restored.has_value()) << "seed " << seed;
        b = std::move(*restored);
        expect_index_matches_sessions(b, "restored, seed " + std::to_string(seed));
      }
    }
    ASSERT_EQ(a.snapshot(), b.snapshot()) << "seed " << seed;
    EXPECT_EQ(a.records(), b.records()) << "seed " << seed;
    expect_index_matches_sessions(b, "end, seed " + std::to_string(seed));
    EXPECT_LE(a.window_keys(), limits.exported_keys_max);
    EXPECT_LE(a.sessions().size(), limits.sessions_max);
  }
}

}  // namespace
}  // namespace rw::accounting
