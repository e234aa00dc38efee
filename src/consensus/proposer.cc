// Proposer: raft_apply / raft_barrier / raft_add / raft_assign / raft_remove
// with the ownership rules of libraft 0.15.0 (docs/consensus.md traps 3-6).
#include "consensus/proposer.h"

#include <utility>

#include "base/assert.h"
#include "consensus/envelope.h"

namespace rw::consensus {

struct Proposer::ApplyRequest {
  struct raft_apply req {};
  Proposer* owner = nullptr;
  std::uint64_t term = 0;
  Done done;
};

struct Proposer::BarrierRequest {
  struct raft_barrier req {};
  Proposer* owner = nullptr;
  std::uint64_t term = 0;
  bool own_term = true;  // The own-term barrier (readiness), or propose_barrier's.
};

struct Proposer::ChangeRequest {
  struct raft_change req {};
  Proposer* owner = nullptr;
  std::uint64_t promote_id = 0;  // Non-zero: assign as voter once this commits.
  ChangeDone done;
};

Proposer::Proposer(struct raft* raft, Options options, std::function<void()> wake)
    : raft_(raft), options_(options), wake_(std::move(wake)) {
  RW_ASSERT(options_.max_in_flight > 0);
}

bool Proposer::is_leader() const { return raft_state(raft_) == RAFT_LEADER; }

bool Proposer::ready() const {
  return is_ready_for_work(is_leader(), barrier_committed_term_, raft_->current_term);
}

Outcome Proposer::refusal() const {
  Outcome outcome;
  if (is_leader()) {
    outcome.kind = OutcomeKind::kRetryLater;
    return outcome;
  }
  raft_id id = 0;
  const char* address = nullptr;
  raft_leader(raft_, &id, &address);
  outcome.kind = OutcomeKind::kNotLeader;
  outcome.leader_id = id;
  if (address != nullptr) outcome.leader_address = address;
  return outcome;
}

void Proposer::on_turn() {
  if (!is_leader()) return;
  const std::uint64_t term = raft_->current_term;
  if (!barrier_in_flight_ && barrier_issued_term_ != term && start_barrier(/*own_term=*/true)) {
    // Tried again on the next turn when refused.
    barrier_in_flight_ = true;
    barrier_issued_term_ = term;
  }
  while (!pending_assigns_.empty()) {
    PendingAssign next = std::move(pending_assigns_.front());
    pending_assigns_.pop_front();
    start_assign(next.id, std::move(next.done));
  }
}

bool Proposer::start_barrier(bool own_term) {
  auto* request = new BarrierRequest;
  request->req.data = request;
  request->owner = this;
  request->term = raft_->current_term;
  request->own_term = own_term;
  if (raft_barrier(raft_, &request->req, &Proposer::on_barrier) != 0) {
    delete request;
    return false;
  }
  return true;
}

bool Proposer::propose_barrier() {
  if (!is_leader() || plain_barrier_in_flight_ || !start_barrier(/*own_term=*/false)) return false;
  plain_barrier_in_flight_ = true;
  return true;
}

void Proposer::on_barrier(struct raft_barrier* req, int status) {
  auto* request = static_cast<BarrierRequest*>(req->data);
  Proposer* self = request->owner;
  if (!request->own_term) {
    self->plain_barrier_in_flight_ = false;
    delete request;
    return;
  }
  self->barrier_in_flight_ = false;
  if (is_acknowledged(status == 0, request->term, self->raft_->current_term, self->is_leader())) {
    self->barrier_committed_term_ = request->term;
  } else {
    self->barrier_issued_term_ = 0;  // Issue again on a later turn, never from here (trap 6).
  }
  delete request;
  self->wake_();
}

void Proposer::propose(std::vector<std::uint8_t> entry, Done done) {
  RW_ASSERT(has_room());
  if (!ready()) {
    done(refusal());
    return;
  }
  // The buffer must come from raft_malloc; the library owns it only if
  // raft_apply returns 0 (trap 3).
  struct raft_buffer buffer {};
  buffer.len = envelope_size(entry.size());
  buffer.base = raft_malloc(buffer.len);
  RW_ASSERT(buffer.base != nullptr);
  write_envelope(entry, MutableBytes(static_cast<std::uint8_t*>(buffer.base), buffer.len));

  auto* request = new ApplyRequest;
  request->req.data = request;
  request->owner = this;
  request->term = raft_->current_term;
  request->done = std::move(done);
  const int rv = raft_apply(raft_, &request->req, &buffer, 1, &Proposer::on_applied);
  if (rv != 0) {
    // Trap 3: the buffer is still ours on any error; free it. NOTLEADER
    // fails before anything is appended. Another error (an I/O error on the
    // local append) is reported Unknown, conservatively; the submitter
    // re-submits and the record key makes that safe.
    raft_free(buffer.base);
    Outcome outcome;
    if (rv == RAFT_NOTLEADER) {
      outcome = refusal();
    } else {
      outcome.kind = OutcomeKind::kUnknown;
    }
    Done callback = std::move(request->done);
    delete request;
    callback(outcome);
    return;
  }
  ++in_flight_;
}

void Proposer::on_applied(struct raft_apply* req, int status, void* /*result*/) {
  auto* request = static_cast<ApplyRequest*>(req->data);
  Proposer* self = request->owner;
  Outcome outcome;
  if (is_acknowledged(status == 0, request->term, self->raft_->current_term, self->is_leader())) {
    outcome.kind = OutcomeKind::kCommitted;
    outcome.index = req->index;
  } else {
    // RAFT_LEADERSHIPLOST, RAFT_SHUTDOWN, an I/O error, or success seen in a
    // later term: the entry may still commit (trap 5), so never "committed".
    outcome.kind = OutcomeKind::kUnknown;
  }
  --self->in_flight_;
  Done done = std::move(request->done);
  delete request;
  done(outcome);
  self->wake_();
}

void Proposer::add_voter(std::uint64_t id, std::string address, ChangeDone done) {
  auto* request = new ChangeRequest;
  request->req.data = request;
  request->owner = this;
  request->promote_id = id;
  request->done = std::move(done);
  const int rv = raft_add(raft_, &request->req, id, address.c_str(), &Proposer::on_changed);
  if (rv != 0) {
    ChangeDone callback = std::move(request->done);
    delete request;
    callback(rv);
  }
}

void Proposer::start_assign(std::uint64_t id, ChangeDone done) {
  auto* request = new ChangeRequest;
  request->req.data = request;
  request->owner = this;
  request->done = std::move(done);
  const int rv = raft_assign(raft_, &request->req, id, RAFT_VOTER, &Proposer::on_changed);
  if (rv != 0) {
    ChangeDone callback = std::move(request->done);
    delete request;
    callback(rv);
  }
}

void Proposer::remove_member(std::uint64_t id, ChangeDone done) {
  auto* request = new ChangeRequest;
  request->req.data = request;
  request->owner = this;
  request->done = std::move(done);
  const int rv = raft_remove(raft_, &request->req, id, &Proposer::on_changed);
  if (rv != 0) {
    ChangeDone callback = std::move(request->done);
    delete request;
    callback(rv);
  }
}

void Proposer::on_changed(struct raft_change* req, int status) {
  auto* request = static_cast<ChangeRequest*>(req->data);
  Proposer* self = request->owner;
  ChangeDone done = std::move(request->done);
  const std::uint64_t promote_id = request->promote_id;
  delete request;
  if (status == 0 && promote_id != 0) {
    // The second step is a new leader-side call: defer it to the next turn.
    self->pending_assigns_.push_back(PendingAssign{promote_id, std::move(done)});
    self->wake_();
    return;
  }
  done(status);
}

std::uint64_t Proposer::most_up_to_date_follower() const {
  RW_ASSERT(is_leader());
  std::uint64_t best_id = 0;
  raft_index best_match = 0;
  for (unsigned i = 0; i < raft_->configuration.n; ++i) {
    const struct raft_server& server = raft_->configuration.servers[i];
    if (server.id == raft_->id || server.role != RAFT_VOTER) continue;
    const raft_index match = raft_->leader_state.progress[i].match_index;
    if (best_id == 0 || match > best_match) {
      best_id = server.id;
      best_match = match;
    }
  }
  return best_id;
}

}  // namespace rw::consensus
