// Tests of SubmissionSession: each rule of the member's answers, with real
// frames and real records.
#include "member_shell/submission_session.h"

#include <gtest/gtest.h>

#include <variant>

#include "accounting/accounting_request_for_test.h"
#include "member_shell/ledger_state.h"

namespace rw::member_shell {
namespace {

using consensus::Node;
using consensus::Outcome;
using consensus::OutcomeKind;
using consensus::Role;

Outcome outcome_of(OutcomeKind kind, std::uint64_t index = 0, std::uint64_t leader_id = 0) {
  Outcome outcome;
  outcome.kind = kind;
  outcome.index = index;
  outcome.leader_id = leader_id;
  return outcome;
}

const SubmissionAddressBook kBook = {{1, "127.0.0.1:7301"}, {2, "127.0.0.1:7302"}, {3, "127.0.0.1:7303"}};
constexpr MemberView kReadyLeader{.role = Role::kLeader, .ready_for_work = true, .leader_id = 1};

std::vector<std::uint8_t> encoded(const submission::Frame& frame) {
  std::vector<std::uint8_t> out;
  submission::encode_frame(frame, out);
  return out;
}

submission::Frame decoded(const std::vector<std::uint8_t>& bytes) {
  auto frame = submission::decode_frame(bytes);
  EXPECT_TRUE(frame.has_value());
  return frame ? *frame : submission::Frame{};
}

accounting::Record record_named(const std::string& session_id) {
  accounting::testing::RequestSpec spec;
  spec.session_id = session_id;
  return accounting::testing::record_of(spec);
}

// A Submit of the given records, each with its own key unless `keys` says otherwise.
struct SubmitFrame {
  std::vector<std::vector<std::uint8_t>> bodies;
  std::vector<std::uint8_t> bytes;
};

SubmitFrame submit_of(std::uint64_t request_id, const std::vector<accounting::Record>& records,
                      bool corrupt_key = false) {
  SubmitFrame frame;
  for (const auto& record : records) {
    frame.bodies.emplace_back();
    accounting::encode_record(record, frame.bodies.back());
  }
  submission::Submit submit{.request_id = request_id};
  for (std::size_t i = 0; i < records.size(); ++i) {
    submission::RecordKey key = records[i].key.bytes;
    if (corrupt_key) key[0] ^= 1;
    submit.records.push_back({key, Bytes(frame.bodies[i])});
  }
  submission::encode_frame(submit, frame.bytes);
  return frame;
}

SubmissionSession greeted(const MemberView& view = kReadyLeader) {
  SubmissionSession session(1, kBook);
  auto answer = session.on_frame(encoded(submission::Hello{.gateway_id = 42}), view);
  EXPECT_FALSE(answer.close.has_value());
  return session;
}

TEST(SubmissionSession, AnswersHelloWithItselfAsLeader) {
  SubmissionSession session(1, kBook);
  auto answer = session.on_frame(encoded(submission::Hello{.gateway_id = 7}), kReadyLeader);
  auto ack = std::get<submission::HelloAck>(decoded(answer.reply));
  EXPECT_EQ(ack.member_id, 1u);
  EXPECT_TRUE(ack.is_leader);
  EXPECT_EQ(ack.leader, std::optional<std::string_view>("127.0.0.1:7301"));
}

TEST(SubmissionSession, AnswersHelloWithTheLeadersSubmissionAddress) {
  SubmissionSession session(1, kBook);
  auto answer =
      session.on_frame(encoded(submission::Hello{}), MemberView{.role = Role::kFollower, .leader_id = 3});
  auto ack = std::get<submission::HelloAck>(decoded(answer.reply));
  EXPECT_FALSE(ack.is_leader);
  EXPECT_EQ(ack.leader, std::optional<std::string_view>("127.0.0.1:7303"));
  SubmissionSession unknown(1, kBook);
  answer = unknown.on_frame(encoded(submission::Hello{}), MemberView{.role = Role::kCandidate});
  EXPECT_FALSE(std::get<submission::HelloAck>(decoded(answer.reply)).leader.has_value());
}

TEST(SubmissionSession, ClosesOnAnythingBeforeHelloAndOnASecondHello) {
  SubmissionSession session(1, kBook);
  EXPECT_EQ(session.on_frame(encoded(submission::Ping{1}), kReadyLeader).close,
            CloseReason::kUnexpectedFrame);
  SubmissionSession twice = greeted();
  EXPECT_EQ(twice.on_frame(encoded(submission::Hello{}), kReadyLeader).close, CloseReason::kUnexpectedFrame);
}

TEST(SubmissionSession, ClosesOnMalformedAndMemberToGatewayFrames) {
  SubmissionSession session = greeted();
  std::vector<std::uint8_t> bad = encoded(submission::Ping{1});
  bad.push_back(0);  // Trailing byte, length prefix now wrong.
  EXPECT_EQ(session.on_frame(bad, kReadyLeader).close, CloseReason::kMalformedFrame);
  SubmissionSession other = greeted();
  EXPECT_EQ(other.on_frame(encoded(submission::Committed{1, 2}), kReadyLeader).close,
            CloseReason::kUnexpectedFrame);
}

TEST(SubmissionSession, AnswersPingWithPong) {
  SubmissionSession session = greeted();
  auto answer = session.on_frame(encoded(submission::Ping{99}), kReadyLeader);
  EXPECT_EQ(std::get<submission::Pong>(decoded(answer.reply)).nonce, 99u);
}

TEST(SubmissionSession, PacksEveryRecordOfASubmitIntoOneEntry) {
  SubmissionSession session = greeted();
  const std::vector<accounting::Record> records = {record_named("a"), record_named("b"), record_named("c")};
  const SubmitFrame frame = submit_of(5, records);
  MemberView view = kReadyLeader;
  view.now_unix_ms = 1'700'000'000'123;
  auto answer = session.on_frame(frame.bytes, view);
  EXPECT_TRUE(answer.reply.empty());
  EXPECT_FALSE(answer.close.has_value());
  ASSERT_TRUE(answer.entry.has_value());
  EXPECT_EQ(answer.request_id, 5u);
  EXPECT_EQ(answer.records, 3u);
  // The leader's clock rides in the entry (docs/accounting.md "The log clock").
  EXPECT_EQ(*answer.entry, accounting::encode_records_entry(records, view.now_unix_ms));
  EXPECT_TRUE(accounting::validate_entry(*answer.entry).has_value());
  EXPECT_EQ(accounting::decode_entry(*answer.entry)->leader_unix_ms, view.now_unix_ms);
}

TEST(SubmissionSession, RefusesSubmitsWhenNotLeaderNotReadyOrFull) {
  const SubmitFrame frame = submit_of(8, {record_named("a")});
  SubmissionSession session = greeted();
  auto answer = session.on_frame(frame.bytes, MemberView{.role = Role::kFollower, .leader_id = 2});
  EXPECT_EQ(std::get<submission::NotLeader>(decoded(answer.reply)),
            (submission::NotLeader{8, std::string_view("127.0.0.1:7302")}));
  EXPECT_FALSE(answer.entry.has_value());
  answer = session.on_frame(frame.bytes,
                            MemberView{.role = Role::kLeader, .ready_for_work = false, .leader_id = 1});
  EXPECT_EQ(std::get<submission::Busy>(decoded(answer.reply)),
            (submission::Busy{8, submission::BusyReason::kNotReady}));
  answer = session.on_frame(
      frame.bytes,
      MemberView{.role = Role::kLeader, .ready_for_work = true, .leader_id = 1, .ledger_accepting = false});
  EXPECT_EQ(std::get<submission::Busy>(decoded(answer.reply)),
            (submission::Busy{8, submission::BusyReason::kQueueFull}));
}

TEST(SubmissionSession, ClosesOnARecordWhoseKeyIsNotItsOwn) {
  SubmissionSession session = greeted();
  const SubmitFrame frame = submit_of(3, {record_named("a")}, /*corrupt_key=*/true);
  auto answer = session.on_frame(frame.bytes, kReadyLeader);
  EXPECT_EQ(answer.close, CloseReason::kInvalidRecord);
  EXPECT_FALSE(answer.entry.has_value());
}

TEST(SubmissionSession, MapsOutcomesToFrames) {
  SubmissionSession session = greeted();
  EXPECT_EQ(std::get<submission::Committed>(
                decoded(session.on_outcome(4, outcome_of(OutcomeKind::kCommitted, 77)).reply)),
            (submission::Committed{4, 77}));
  EXPECT_EQ(std::get<submission::NotLeader>(
                decoded(session.on_outcome(4, outcome_of(OutcomeKind::kNotLeader, 0, 3)).reply)),
            (submission::NotLeader{4, std::string_view("127.0.0.1:7303")}));
  EXPECT_EQ(
      std::get<submission::Busy>(decoded(session.on_outcome(4, outcome_of(OutcomeKind::kRetryLater)).reply)),
      (submission::Busy{4, submission::BusyReason::kNotReady}));
  auto unknown = session.on_outcome(4, outcome_of(OutcomeKind::kUnknown));
  EXPECT_TRUE(unknown.reply.empty());
  EXPECT_EQ(unknown.close, CloseReason::kUnknownOutcome);
}

TEST(SubmissionSession, MapsRefusedSubmissionsToBusy) {
  SubmissionSession session = greeted();
  EXPECT_EQ(
      std::get<submission::Busy>(decoded(session.on_submit_refused(6, Node::SubmitStatus::kQueueFull).reply)),
      (submission::Busy{6, submission::BusyReason::kQueueFull}));
  EXPECT_EQ(
      std::get<submission::Busy>(decoded(session.on_submit_refused(6, Node::SubmitStatus::kStopped).reply)),
      (submission::Busy{6, submission::BusyReason::kShuttingDown}));
}

// A ledger holding two open sessions of bob and one of alice.
void open_sessions(LedgerState& ledger) {
  accounting::testing::RequestSpec bob;
  bob.session_id = "b1";
  accounting::testing::RequestSpec bob2 = bob;
  bob2.session_id = "b2";
  accounting::testing::RequestSpec alice = bob;
  alice.session_id = "a1";
  alice.user_name = "alice";
  ledger.apply(1, accounting::testing::entry_of({accounting::testing::record_of(bob),
                                                 accounting::testing::record_of(bob2),
                                                 accounting::testing::record_of(alice)}));
}

TEST(SubmissionSession, LeaderAnswersSessionCountFromTheAppliedLedger) {
  LedgerState ledger;
  open_sessions(ledger);
  MemberView view = kReadyLeader;
  view.ledger = &ledger;
  SubmissionSession session = greeted(view);
  auto answer =
      session.on_frame(encoded(submission::SessionCountQuery{.request_id = 5, .user_name = "bob"}), view);
  EXPECT_FALSE(answer.close.has_value());
  EXPECT_FALSE(answer.entry.has_value());  // A read: nothing goes into the log.
  EXPECT_EQ(std::get<submission::SessionCountAnswer>(decoded(answer.reply)),
            (submission::SessionCountAnswer{.request_id = 5, .open_sessions = 2}));
  answer =
      session.on_frame(encoded(submission::SessionCountQuery{.request_id = 6, .user_name = "nobody"}), view);
  EXPECT_EQ(std::get<submission::SessionCountAnswer>(decoded(answer.reply)).open_sessions, 0u);
}

TEST(SubmissionSession, FollowerAnswersSessionCountWithNotLeader) {
  LedgerState ledger;
  open_sessions(ledger);
  const MemberView view{.role = Role::kFollower, .leader_id = 2, .ledger = &ledger};
  SubmissionSession session = greeted(view);
  auto answer =
      session.on_frame(encoded(submission::SessionCountQuery{.request_id = 8, .user_name = "bob"}), view);
  const auto not_leader = std::get<submission::NotLeader>(decoded(answer.reply));
  EXPECT_EQ(not_leader.request_id, 8u);
  EXPECT_EQ(not_leader.leader, std::optional<std::string_view>("127.0.0.1:7302"));
}

TEST(SubmissionSession, LeaderBeforeItsBarrierAnswersSessionCountBusy) {
  LedgerState ledger;
  const MemberView view{.role = Role::kLeader, .ready_for_work = false, .leader_id = 1, .ledger = &ledger};
  SubmissionSession session = greeted(view);
  auto answer =
      session.on_frame(encoded(submission::SessionCountQuery{.request_id = 9, .user_name = "bob"}), view);
  EXPECT_EQ(std::get<submission::Busy>(decoded(answer.reply)),
            (submission::Busy{9, submission::BusyReason::kNotReady}));
}

TEST(SubmissionSession, ClosesOnASessionCountAnswerFromTheGateway) {
  SubmissionSession session = greeted();
  EXPECT_EQ(session.on_frame(encoded(submission::SessionCountAnswer{1, 2}), kReadyLeader).close,
            CloseReason::kUnexpectedFrame);
}

}  // namespace
}  // namespace rw::member_shell
