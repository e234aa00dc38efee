// The leader side of submission on one raft instance: the barrier a new
// leader commits before it accepts work, raft_apply with a bounded number in
// flight, the acknowledgement rule, and membership changes. Shared by Node
// (raft_uv) and the raft_fixture tests, so both acknowledge by the same rule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "consensus/outcome.h"
#include "consensus/raft_c.h"

namespace rw::consensus {

// Runs on the loop thread of its raft instance only (docs/consensus.md trap 1).
class Proposer {
 public:
  // Called with the outcome of a submission, on the loop thread and possibly
  // inside a libraft callback: it must not call into libraft (trap 6).
  using Done = std::function<void(const Outcome&)>;
  // Called with 0 or a RAFT_* error code when a membership change ends.
  using ChangeDone = std::function<void(int status)>;

  struct Options {
    std::size_t max_in_flight = 16;  // raft_apply requests awaiting their callback.
  };

  // Borrows `raft`, which must outlive the Proposer and its callbacks. `wake`
  // is called (possibly inside a libraft callback) when room frees up or a
  // deferred step is due; it must only schedule a later on_turn().
  Proposer(struct raft* raft, Options options, std::function<void()> wake);
  Proposer(const Proposer&) = delete;
  Proposer& operator=(const Proposer&) = delete;

  // Issues the barrier of a new leader's term and deferred membership steps.
  // Requires: called outside libraft callbacks (trap 6), regularly (there is
  // no state-change callback in libraft, trap 9).
  void on_turn();

  [[nodiscard]] bool is_leader() const;
  // True once a barrier of the current term has committed on this leader.
  [[nodiscard]] bool ready() const;
  [[nodiscard]] bool has_room() const { return in_flight_ < options_.max_in_flight; }
  [[nodiscard]] std::size_t in_flight() const { return in_flight_; }

  // Appends `entry` as one log entry (trap 4: one buffer per raft_apply).
  // Reports NotLeader or RetryLater at once when this member cannot take it.
  // Requires: outside libraft callbacks (trap 6) and has_room().
  void propose(std::vector<std::uint8_t> entry, Done done);

  // Appends a barrier (an entry with no command) that every member applies,
  // for what must happen on every member after the entries before it: a
  // quiet log's compaction (FsmAdapter::compact_on_next_apply). Leaves the
  // own-term barrier and readiness alone. Returns false when this member is
  // not the leader, one such barrier is still in flight, or libraft refused.
  // Requires: outside libraft callbacks (trap 6).
  bool propose_barrier();

  // The outcome for a submission this member cannot take now.
  [[nodiscard]] Outcome refusal() const;

  // Membership (Raft §4.1, one server at a time). add: raft_add then, once
  // that commits, raft_assign as voter (the library catches the new member
  // up first, by snapshot if it is far behind). remove: raft_remove.
  // Requires: outside libraft callbacks.
  void add_voter(std::uint64_t id, std::string address, ChangeDone done);
  void remove_member(std::uint64_t id, ChangeDone done);

  // The voting follower with the highest match index, or 0 if none: the
  // target of a leadership transfer. Requires: is_leader().
  [[nodiscard]] std::uint64_t most_up_to_date_follower() const;

 private:
  struct ApplyRequest;
  struct BarrierRequest;
  struct ChangeRequest;
  static void on_applied(struct raft_apply* req, int status, void* result);
  static void on_barrier(struct raft_barrier* req, int status);
  static void on_changed(struct raft_change* req, int status);
  void start_assign(std::uint64_t id, ChangeDone done);
  // raft_barrier with a request on_barrier frees; false (nothing in flight)
  // when libraft refused it.
  bool start_barrier(bool own_term);

  struct raft* raft_;
  Options options_;
  std::function<void()> wake_;
  std::size_t in_flight_ = 0;
  std::uint64_t barrier_issued_term_ = 0;     // Term of the barrier in flight or committed.
  std::uint64_t barrier_committed_term_ = 0;  // Term whose barrier committed.
  bool barrier_in_flight_ = false;
  bool plain_barrier_in_flight_ = false;  // propose_barrier's
  struct PendingAssign {
    std::uint64_t id;
    ChangeDone done;
  };
  std::deque<PendingAssign> pending_assigns_;  // Deferred to on_turn (trap 6).
};

}  // namespace rw::consensus
