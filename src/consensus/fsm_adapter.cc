// FsmAdapter: libraft's raft_fsm callbacks turned into ReplicatedState calls.
#include "consensus/fsm_adapter.h"

#include "base/assert.h"
#include "consensus/envelope.h"

namespace rw::consensus {

FsmAdapter::FsmAdapter(ReplicatedState& state) : state_(state) {
  fsm_.version = 1;
  fsm_.data = this;
  fsm_.apply = &FsmAdapter::on_apply;
  fsm_.snapshot = &FsmAdapter::on_snapshot;
  fsm_.restore = &FsmAdapter::on_restore;
}

int FsmAdapter::on_apply(struct raft_fsm* fsm, const struct raft_buffer* buf, void** result) {
  auto* self = static_cast<FsmAdapter*>(fsm->data);
  RW_ASSERT(self->raft_ != nullptr);
  // libraft applies entries strictly in order and advances last_applied after
  // each one (barriers and configurations included), so the entry being
  // applied is the one after last_applied.
  const std::uint64_t index = self->raft_->last_applied + 1;
  const auto payload = open_envelope(Bytes(static_cast<const std::uint8_t*>(buf->base), buf->len));
  if (payload) {
    self->state_.apply(index, *payload);
  } else {
    ++self->entries_malformed_;  // Not ours: skipped, never an error (trap 7).
  }
  *result = nullptr;
  return 0;  // Never an error: an error silently stops applying (docs/consensus.md trap 7).
}

int FsmAdapter::on_snapshot(struct raft_fsm* fsm, struct raft_buffer* bufs[], unsigned* n_bufs) {
  auto* self = static_cast<FsmAdapter*>(fsm->data);
  const std::vector<std::uint8_t> bytes = self->state_.snapshot();
  // With version 1 the library frees both the array and each base with
  // raft_free. The snapshot travels in the same envelope as entries: its
  // length may come back padded too.
  auto* array = static_cast<struct raft_buffer*>(raft_malloc(sizeof(struct raft_buffer)));
  if (array == nullptr) return RAFT_NOMEM;
  array[0].len = envelope_size(bytes.size());
  array[0].base = raft_malloc(array[0].len);
  if (array[0].base == nullptr) {
    raft_free(array);
    return RAFT_NOMEM;
  }
  write_envelope(bytes, MutableBytes(static_cast<std::uint8_t*>(array[0].base), array[0].len));
  *bufs = array;
  *n_bufs = 1;
  return 0;
}

int FsmAdapter::on_restore(struct raft_fsm* fsm, struct raft_buffer* buf) {
  auto* self = static_cast<FsmAdapter*>(fsm->data);
  const auto payload = open_envelope(Bytes(static_cast<const std::uint8_t*>(buf->base), buf->len));
  if (!payload || !self->state_.restore(*payload)) {
    ++self->restores_refused_;
    return RAFT_CORRUPT;
  }
  // On success the buffer is ours (docs/consensus.md trap 3).
  raft_free(buf->base);
  return 0;
}

}  // namespace rw::consensus
