// SubmissionSession (submission_session.h): the member's answers to
// gateway frames, following the rules of docs/wire_formats.md and the
// mitigations of docs/consensus.md (no work before the own-term barrier; Committed
// only on an acknowledged outcome; Unknown closes the connection).
#include "member_shell/submission_session.h"

#include <utility>
#include <variant>

#include "accounting/entry.h"
#include "member_shell/ledger_state.h"

namespace rw::member_shell {

std::string_view to_string(CloseReason reason) {
  switch (reason) {
    case CloseReason::kMalformedFrame:
      return "malformed_frame";
    case CloseReason::kUnexpectedFrame:
      return "unexpected_frame";
    case CloseReason::kInvalidRecord:
      return "invalid_record";
    case CloseReason::kUnknownOutcome:
      return "unknown_outcome";
  }
  return "unknown";
}

SubmissionSession::SubmissionSession(std::uint64_t member_id, const SubmissionAddressBook& book)
    : member_id_(member_id), book_(book) {}

SessionAnswer SubmissionSession::reply_with(const submission::Frame& frame) {
  SessionAnswer answer;
  submission::encode_frame(frame, answer.reply);
  return answer;
}

SessionAnswer SubmissionSession::close_with(CloseReason reason) {
  SessionAnswer answer;
  answer.close = reason;
  return answer;
}

std::optional<std::string_view> SubmissionSession::submission_address(std::uint64_t id) const {
  if (id == 0) return std::nullopt;
  auto found = book_.find(id);
  // A member added at run time is not in the book: the gateway then tries
  // the members it knows in turn.
  if (found == book_.end() || found->second.size() > submission::kAddressBytesMax) return std::nullopt;
  return std::string_view(found->second);
}

SessionAnswer SubmissionSession::on_frame(Bytes frame, const MemberView& view) {
  auto decoded = submission::decode_frame(frame);
  if (!decoded) return close_with(CloseReason::kMalformedFrame);
  if (std::holds_alternative<submission::Hello>(*decoded)) {
    if (hello_received_) return close_with(CloseReason::kUnexpectedFrame);
    hello_received_ = true;
    const bool leader = view.role == consensus::Role::kLeader;
    return reply_with(
        submission::HelloAck{.member_id = member_id_,
                             .is_leader = leader,
                             .leader = submission_address(leader ? member_id_ : view.leader_id)});
  }
  // Every connection begins with Hello (docs/wire_formats.md).
  if (!hello_received_) return close_with(CloseReason::kUnexpectedFrame);
  if (auto* ping = std::get_if<submission::Ping>(&*decoded)) return reply_with(submission::Pong{ping->nonce});
  if (auto* submit = std::get_if<submission::Submit>(&*decoded)) return on_submit(*submit, view);
  if (auto* query = std::get_if<submission::SessionCountQuery>(&*decoded)) {
    return on_session_count_query(*query, view);
  }
  return close_with(CloseReason::kUnexpectedFrame);
}

SessionAnswer SubmissionSession::on_submit(const submission::Submit& submit, const MemberView& view) const {
  const std::uint64_t id = submit.request_id;
  if (view.role != consensus::Role::kLeader) {
    return reply_with(submission::NotLeader{.request_id = id, .leader = submission_address(view.leader_id)});
  }
  // docs/consensus.md: a new leader takes no work before its own-term barrier commits.
  if (!view.ready_for_work) return reply_with(submission::Busy{id, submission::BusyReason::kNotReady});
  // The ledger never drops a held record; at its bound the member stops taking them.
  if (!view.ledger_accepting) return reply_with(submission::Busy{id, submission::BusyReason::kQueueFull});

  // Validated before submission: an entry that passes is applied on every
  // member without a skip (docs/consensus.md trap 7). One Submit is one entry
  // (trap 4): kSubmitRecordsMax equals kEntryRecordsMax and 1 MiB frames fit
  // the 4 MiB entry bound.
  accounting::EntryBuilder builder;
  for (const submission::SubmitRecord& record : submit.records) {
    auto valid = accounting::validate_record(record.record);
    if (!valid || valid->key.bytes != record.key) return close_with(CloseReason::kInvalidRecord);
    if (!builder.add_encoded(record.record)) return close_with(CloseReason::kInvalidRecord);
  }
  SessionAnswer answer;
  answer.entry = builder.finish();
  answer.request_id = id;
  answer.records = submit.records.size();
  return answer;
}

SessionAnswer SubmissionSession::on_session_count_query(const submission::SessionCountQuery& query,
                                                        const MemberView& view) const {
  const std::uint64_t id = query.request_id;
  // Only the leader's applied state holds every session whose Start was
  // acknowledged (docs/design.md invariant 1: acknowledged after applied there).
  if (view.role != consensus::Role::kLeader) {
    return reply_with(submission::NotLeader{.request_id = id, .leader = submission_address(view.leader_id)});
  }
  // A new leader may not have applied its predecessors' entries before its
  // own-term barrier commits (docs/consensus.md): its count could be short.
  if (!view.ready_for_work || view.ledger == nullptr) {
    return reply_with(submission::Busy{id, submission::BusyReason::kNotReady});
  }
  return reply_with(submission::SessionCountAnswer{
      .request_id = id, .open_sessions = view.ledger->open_sessions_of(query.user_name)});
}

SessionAnswer SubmissionSession::on_outcome(std::uint64_t request_id,
                                            const consensus::Outcome& outcome) const {
  switch (outcome.kind) {
    case consensus::OutcomeKind::kCommitted:
      // docs/design.md invariant 1: the only path to Committed.
      return reply_with(submission::Committed{.request_id = request_id, .log_index = outcome.index});
    case consensus::OutcomeKind::kNotLeader:
      return reply_with(
          submission::NotLeader{.request_id = request_id, .leader = submission_address(outcome.leader_id)});
    case consensus::OutcomeKind::kRetryLater:
      return reply_with(submission::Busy{request_id, submission::BusyReason::kNotReady});
    case consensus::OutcomeKind::kUnknown:
      break;
  }
  // It may still commit (docs/consensus.md trap 5): no answer would be true. Closing
  // makes the gateway re-submit on another connection; the key de-duplicates.
  return close_with(CloseReason::kUnknownOutcome);
}

SessionAnswer SubmissionSession::on_submit_refused(std::uint64_t request_id,
                                                   consensus::Node::SubmitStatus status) const {
  const submission::BusyReason reason = status == consensus::Node::SubmitStatus::kStopped
                                            ? submission::BusyReason::kShuttingDown
                                            : submission::BusyReason::kQueueFull;
  return reply_with(submission::Busy{request_id, reason});
}

}  // namespace rw::member_shell
