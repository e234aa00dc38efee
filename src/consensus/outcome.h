// The outcome of one submission to the replicated log, and the acknowledgement
// rule that production (Node) and the fixture tests share. Pure: no libraft.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace rw::consensus {

enum class OutcomeKind {
  kCommitted,   // Committed on a majority and applied locally at `index`.
  kNotLeader,   // This member is not the leader; `leader_id` (0: unknown) is.
  kRetryLater,  // Leader, but not yet ready (its barrier is not committed) or stopping.
  kUnknown,     // Appended but leadership was lost or an error struck: it may or
                // may not commit. Submit it again (records are idempotent).
};

[[nodiscard]] std::string_view to_string(OutcomeKind kind);

struct Outcome {
  OutcomeKind kind = OutcomeKind::kUnknown;
  std::uint64_t index = 0;      // kCommitted: the entry's log index.
  std::uint64_t leader_id = 0;  // kNotLeader: the known leader, 0 if none.
  std::string leader_address;   // kNotLeader: its raft address, empty if none.
};

// The acknowledgement rule (docs/consensus.md "Mitigations and where they
// live"): an entry counts as committed only when its apply callback reported success, this member is
// still leader, and its term is the one in which it appended the entry.
// libraft 0.15.0 may commit an entry of an earlier term by counting replicas
// (Raft §5.4.2), so anything else is "unknown", never "committed".
[[nodiscard]] constexpr bool is_acknowledged(bool callback_succeeded, std::uint64_t appended_term,
                                             std::uint64_t term_now, bool leader_now) {
  return callback_succeeded && leader_now && appended_term == term_now && appended_term != 0;
}

// The readiness rule: a new leader accepts submissions only once a barrier
// appended in its current term has committed (docs/consensus.md
// "Mitigations and where they live").
[[nodiscard]] constexpr bool is_ready_for_work(bool leader_now, std::uint64_t barrier_committed_term,
                                               std::uint64_t term_now) {
  return leader_now && barrier_committed_term != 0 && barrier_committed_term == term_now;
}

}  // namespace rw::consensus
