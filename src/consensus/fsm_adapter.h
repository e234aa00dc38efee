// Adapts a ReplicatedState to libraft's raft_fsm (version 1): apply, snapshot
// and restore run on the loop thread, the snapshot serialised into memory
// (docs/consensus.md trap 8). Used by Node and by the raft_fixture tests alike.
#pragma once

#include "consensus/raft_c.h"
#include "consensus/replicated_state.h"

namespace rw::consensus {

class FsmAdapter {
 public:
  // Borrows `state`, which must outlive the adapter.
  explicit FsmAdapter(ReplicatedState& state);
  FsmAdapter(const FsmAdapter&) = delete;
  FsmAdapter& operator=(const FsmAdapter&) = delete;

  // The raft_fsm to pass to raft_init or raft_fixture_grow. Stable address.
  [[nodiscard]] struct raft_fsm* fsm() { return &fsm_; }

  // Names the raft instance that drives this adapter, whose last_applied
  // gives each entry its index. Requires: called before the instance starts.
  void attach(struct raft* raft) { raft_ = raft; }

  // Counts of restore calls refused as corrupt (the library then fails).
  [[nodiscard]] unsigned restores_refused() const { return restores_refused_; }
  // Counts of committed entries whose envelope was malformed (skipped).
  [[nodiscard]] unsigned entries_malformed() const { return entries_malformed_; }

 private:
  static int on_apply(struct raft_fsm* fsm, const struct raft_buffer* buf, void** result);
  static int on_snapshot(struct raft_fsm* fsm, struct raft_buffer* bufs[], unsigned* n_bufs);
  static int on_restore(struct raft_fsm* fsm, struct raft_buffer* buf);

  ReplicatedState& state_;
  struct raft* raft_ = nullptr;
  struct raft_fsm fsm_ {};
  unsigned restores_refused_ = 0;
  unsigned entries_malformed_ = 0;
};

}  // namespace rw::consensus
