// The member's side of the gateway-to-member protocol for one connection
// (docs/wire_formats.md "Gateway-to-member frames"): decoded frames and
// submission outcomes in, frames to send, entries to submit and "close" out.
// Pure: no sockets, no clock; the io shell (io/submission_server.h) carries
// out the answers in order.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "consensus/node.h"
#include "consensus/outcome.h"
#include "submission/frames.h"

namespace rw::member_shell {

class LedgerState;

// Raft id -> the address where that member takes submissions (the
// config's `members`), for NotLeader and HelloAck.
using SubmissionAddressBook = std::map<std::uint64_t, std::string>;

// What the session knows of its member when a frame arrives.
struct MemberView {
  consensus::Role role = consensus::Role::kUnavailable;
  bool ready_for_work = false;  // Leader whose own-term barrier committed.
  std::uint64_t leader_id = 0;  // 0: unknown.
  bool ledger_accepting = true;
  // The applied ledger, for SessionCountQuery; null: queries are answered
  // Busy (not_ready). Borrowed for the call.
  const LedgerState* ledger = nullptr;
  // The member's clock when the frame arrived: a leader stamps it into each
  // entry it proposes, the ledger's only time (docs/accounting.md "The log clock").
  std::int64_t now_unix_ms = 0;
};

// Why a connection is closed.
enum class CloseReason : std::uint8_t {
  kMalformedFrame,   // frames.h refused the bytes.
  kUnexpectedFrame,  // A member-to-gateway frame, or anything before Hello, or a second Hello.
  kInvalidRecord,    // A record that validate_record refuses, or whose key differs from its frame key.
  kUnknownOutcome,   // A Submit's entry may or may not commit: the gateway re-submits elsewhere.
};
inline constexpr std::size_t kCloseReasonCount = 4;
[[nodiscard]] std::string_view to_string(CloseReason reason);

// What to do after one event, in this order: send `reply` (if not empty),
// submit `entry` for `request_id` (if any), then close (if `close`).
struct SessionAnswer {
  std::vector<std::uint8_t> reply{};
  std::optional<std::vector<std::uint8_t>> entry{};
  std::uint64_t request_id = 0;
  std::size_t records = 0;  // Records in `entry`.
  std::optional<CloseReason> close{};
};

// One connection's protocol state. Not thread-safe; owned by the shell's
// connection.
class SubmissionSession {
 public:
  // `member_id` is this member's raft id; `book` must outlive the session.
  SubmissionSession(std::uint64_t member_id, const SubmissionAddressBook& book);

  // One whole frame as FrameReader::next() returned it (length prefix included).
  [[nodiscard]] SessionAnswer on_frame(Bytes frame, const MemberView& view);

  // True once the connection's Hello arrived (the shell's Hello deadline).
  [[nodiscard]] bool hello_received() const { return hello_received_; }

  // The outcome of the entry submitted for `request_id`.
  [[nodiscard]] SessionAnswer on_outcome(std::uint64_t request_id, const consensus::Outcome& outcome) const;

  // Node::submit refused the entry of `request_id` without queueing it.
  [[nodiscard]] SessionAnswer on_submit_refused(std::uint64_t request_id,
                                                consensus::Node::SubmitStatus status) const;

 private:
  [[nodiscard]] SessionAnswer on_submit(const submission::Submit& submit, const MemberView& view) const;
  [[nodiscard]] SessionAnswer on_session_count_query(const submission::SessionCountQuery& query,
                                                     const MemberView& view) const;
  [[nodiscard]] std::optional<std::string_view> submission_address(std::uint64_t id) const;
  [[nodiscard]] static SessionAnswer reply_with(const submission::Frame& frame);
  [[nodiscard]] static SessionAnswer close_with(CloseReason reason);

  std::uint64_t member_id_;
  const SubmissionAddressBook& book_;
  bool hello_received_ = false;
};

}  // namespace rw::member_shell
