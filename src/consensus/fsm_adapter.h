// Adapts a ReplicatedState to libraft's raft_fsm (version 2): apply, snapshot
// and restore run on the loop thread, the snapshot serialised into memory
// (docs/consensus.md trap 8) — into one buffer the adapter owns and keeps
// warm across snapshots (snapshot_finalize hands it back), so a snapshot's
// pause is serialisation only, not tens of thousands of page faults. Used by
// Node and by the raft_fixture tests alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "consensus/raft_c.h"
#include "consensus/replicated_state.h"
#include "consensus/snapshot_figures.h"

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
  // Snapshots taken here and how long the latest and longest held the loop
  // thread (what a leader's followers wait without a heartbeat, trap 8), and
  // snapshots restored.
  [[nodiscard]] const SnapshotFigures& snapshot_figures() const { return snapshot_figures_; }

 private:
  static int on_apply(struct raft_fsm* fsm, const struct raft_buffer* buf, void** result);
  static int on_snapshot(struct raft_fsm* fsm, struct raft_buffer* bufs[], unsigned* n_bufs);
  static int on_restore(struct raft_fsm* fsm, struct raft_buffer* buf);
  static int on_snapshot_finalize(struct raft_fsm* fsm, struct raft_buffer* bufs[], unsigned* n_bufs);
  // Grows snapshot_buffer_ to at least `bytes` with room to spare, asking
  // the kernel for huge pages for it (a fresh 35 MB buffer took ~120 ms of
  // page faults on the reference machine, trap 8).
  void reserve_snapshot_buffer(std::size_t bytes);

  ReplicatedState& state_;
  struct raft* raft_ = nullptr;
  struct raft_fsm fsm_ {};
  unsigned restores_refused_ = 0;
  unsigned entries_malformed_ = 0;
  // The envelope of the latest snapshot; libraft reads it until
  // on_snapshot_finalize, and never takes a second snapshot before that.
  std::vector<std::uint8_t> snapshot_buffer_;
  struct raft_buffer snapshot_array_ {};
  bool snapshot_lent_ = false;
  SnapshotFigures snapshot_figures_;
};

}  // namespace rw::consensus
