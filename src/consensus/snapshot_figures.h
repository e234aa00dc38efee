// What a member's own snapshots cost: FsmAdapter measures them on the loop
// thread, Node publishes them in NodeStatus, the member's /metrics shows them
// (docs/consensus.md trap 8); and where they are serialised.
#pragma once

#include <cstdint>

namespace rw::consensus {

// Where a snapshot's bytes are written (docs/consensus.md "Snapshots in a
// child process").
enum class SnapshotSerialization : std::uint8_t {
  // On the loop thread, inside libraft's snapshot call: the loop (heartbeats,
  // commits) waits for the whole serialisation.
  kOnLoop,
  // In a child process forked by the snapshot call: the child holds the
  // state as of the snapshot's index (the kernel's copy-on-write) and
  // writes it to a pipe, which a libuv pool thread reads into the buffer
  // while the loop goes on applying. The loop pays only the fork. Falls
  // back to kOnLoop for good when a fork or a child fails.
  kInChild,
};

// The snapshots a member took (its own), and those it restored.
struct SnapshotFigures {
  std::uint64_t taken = 0;
  // Snapshots restored since start: the one a restart loads from data_dir,
  // and every one installed from the leader. A member started on an empty
  // data_dir restores only installed ones, which is how an operator (and the
  // replaced-volume fault test) sees a replacement caught up by snapshot.
  std::uint64_t restored = 0;
  std::uint64_t last_us = 0;     // loop-thread time of the latest
  std::uint64_t max_us = 0;      // the longest since start
  std::uint64_t last_bytes = 0;  // size of the latest (its envelope)
  // Of `taken`, those serialised in a child process while the loop went on
  // (FsmAdapter, SnapshotSerialization::kInChild), and how long the latest
  // and the longest child took, from the fork to its last byte read.
  std::uint64_t in_child = 0;
  std::uint64_t child_last_us = 0;
  std::uint64_t child_max_us = 0;
  // Children that failed (fork refused, killed, deadline passed): each
  // snapshot after the first failure is serialised on the loop thread.
  std::uint64_t child_failures = 0;
  // Of `taken`, those the log byte bound asked for (FsmAdapter::bound_log_bytes).
  std::uint64_t for_log_bytes = 0;
  // Of `taken`, those that compacted a quiet log (FsmAdapter::compact_on_next_apply).
  std::uint64_t for_quiet_log = 0;
  // Quiet-log compactions called off because load came back before the
  // leader's barrier (FsmAdapter::on_apply): the next snapshot the load asks
  // for drops the burst's entries instead.
  std::uint64_t quiet_compactions_skipped = 0;
  // Bytes of the entries applied since the latest snapshot (or restore).
  std::uint64_t log_bytes_since = 0;
  // What the in-memory log is bounded by now (FsmAdapter::bound_log_bytes):
  // raft.log_bytes_max, or the latest snapshot's size when that is larger;
  // a snapshot is taken once half of it was applied. 0: no byte bound.
  std::uint64_t log_bytes_bound = 0;
  // Bytes of the snapshot buffer kept between snapshots and touched (so
  // resident): the latest snapshot's size, 0 once a quiet member released it
  // (FsmAdapter::release_snapshot_buffer), growing back as entries arrive.
  std::uint64_t buffer_bytes = 0;
};

}  // namespace rw::consensus
