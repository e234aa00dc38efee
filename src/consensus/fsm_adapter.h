// Adapts a ReplicatedState to libraft's raft_fsm: apply and restore run on
// the loop thread; a snapshot is serialised into memory (docs/consensus.md
// trap 8) — into one buffer the adapter owns and keeps warm across
// snapshots (snapshot_finalize hands it back), so a snapshot costs
// serialisation only, not tens of thousands of page faults. Serialised on
// the loop thread (FSM version 2), or in a forked child while the loop goes
// on applying (FSM version 3, docs/consensus.md "Snapshots in a child
// process"). Used by Node and by the raft_fixture tests alike.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "consensus/raft_c.h"
#include "consensus/replicated_state.h"
#include "consensus/snapshot_figures.h"

namespace rw::consensus {

// The bytes of the entries libraft holds in its in-memory log (since the
// last snapshot and the trailing ones behind it): what raft.log_bytes_max
// bounds. Walks the log: O(entries).
[[nodiscard]] std::size_t log_entry_bytes(const struct raft_log& log);

class FsmAdapter {
 public:
  // How long a child may take to write its snapshot before it is killed and
  // the snapshot abandoned (libraft takes another later, on the loop).
  static constexpr int kChildDeadlineMs = 120'000;

  // Borrows `state`, which must outlive the adapter. With kInChild the
  // adapter is libraft's FSM version 3 (snapshot_async); the raft_io must
  // then offer async_work (raft_uv and raft_fixture do).
  explicit FsmAdapter(ReplicatedState& state,
                      SnapshotSerialization serialization = SnapshotSerialization::kOnLoop);
  ~FsmAdapter();
  FsmAdapter(const FsmAdapter&) = delete;
  FsmAdapter& operator=(const FsmAdapter&) = delete;

  // The raft_fsm to pass to raft_init or raft_fixture_grow. Stable address.
  [[nodiscard]] struct raft_fsm* fsm() { return &fsm_; }

  // Names the raft instance that drives this adapter, whose last_applied
  // gives each entry its index. Requires: called before the instance starts.
  void attach(struct raft* raft) { raft_ = raft; }

  // Bounds, in bytes, the raft log libraft keeps in memory (the entries
  // since the last snapshot plus the trailing ones kept behind it), which its
  // entry-count threshold and trailing leave unbounded when entries are
  // large (docs/consensus.md "Log held in memory"). With `bytes` > 0 the
  // bound is `bytes`, or the latest snapshot's size when that is larger (so
  // that what snapshots write stays within a constant times what the log
  // receives, whatever the state's size): once
  // the entries applied since the last snapshot reach half of it, the
  // next apply takes a snapshot (libraft's threshold is lowered to 1 until
  // it does); every snapshot keeps as trailing entries only the latest that
  // fit in the other half, and at most `trailing`. `threshold` and
  // `trailing` are the configured entry counts, restored after each such
  // snapshot. 0 leaves libraft's entry counts alone.
  // Requires: attach() first; on the loop thread (or before start).
  void bound_log_bytes(std::size_t bytes, unsigned threshold, unsigned trailing);

  // Staggers this member's snapshots against the other members' (docs/
  // consensus.md "Staggered snapshots"). Every member applies the same
  // entries, so with the same bound they all snapshot at the same index and
  // pause together: a leader's commits then wait out its followers' pauses
  // as well as its own, and members sharing a core pause three times as
  // long. With `phase` in [0, 1) this member's first snapshot after start,
  // a restore or a compaction comes that share of a period early (of half
  // the byte bound, and of the entry threshold), and each later one a whole
  // period after the previous, so the members' pauses stay apart. Node
  // gives member k of n voters the phase ((k - 1) mod n) / n. Requires:
  // bound_log_bytes() first (the periods are its).
  void stagger_snapshots(double phase);

  // Compacts the log of a member whose log went quiet (QuietLog): the next
  // barrier applied (the one the leader appends for it, Proposer::
  // propose_barrier) takes a snapshot that keeps only that one entry behind
  // it, so the entries of the last burst (up to raft.log_bytes_max) leave
  // memory. A command applied first (load is back) calls it off instead
  // (SnapshotFigures::quiet_compactions_skipped): the load's own snapshots
  // drop those entries, and every member snapshotting at once as load
  // resumes would stall it. The configured threshold and trailing return
  // after either. Never trailing 0: libraft's raft_uv reads 0 as an
  // installed snapshot's, which drops the whole log. A second call before
  // that snapshot changes nothing. docs/limits.md "Member memory budget".
  // Requires: attach() first; on the loop thread.
  void compact_on_next_apply();
  [[nodiscard]] bool compaction_due() const { return compaction_due_; }

  // Counts of restore calls refused as corrupt (the library then fails).
  [[nodiscard]] unsigned restores_refused() const { return restores_refused_; }
  // Counts of committed entries whose envelope was malformed (skipped).
  [[nodiscard]] unsigned entries_malformed() const { return entries_malformed_; }
  // Snapshots taken here and how long the latest and longest held the loop
  // thread (what a leader's followers wait without a heartbeat, trap 8), and
  // snapshots restored.
  [[nodiscard]] const SnapshotFigures& snapshot_figures() const { return snapshot_figures_; }
  // How long a child may take (kChildDeadlineMs unless set; tests shorten it).
  void set_child_deadline_ms(int ms) { child_deadline_ms_ = ms; }
  // Why the latest child failed (SnapshotFigures::child_failures), for the
  // log; empty while none did.
  [[nodiscard]] const std::string& child_failure() const { return child_failure_; }

  // Frees the snapshot buffer kept between snapshots (trap 8), for a member
  // whose log went quiet (QuietLog): it holds up to 1.25 times the largest
  // snapshot, tens of MB at the default bounds, that only the next snapshot
  // needs. The applies after it touch the buffer back in slices (a fixed
  // share per entry), so that the next snapshot's pause stays free of page
  // faults. Returns false, changing nothing, while libraft still reads the
  // latest snapshot or when there is nothing to free.
  // Requires: on the loop thread.
  bool release_snapshot_buffer();

 private:
  static int on_apply(struct raft_fsm* fsm, const struct raft_buffer* buf, void** result);
  static int on_snapshot(struct raft_fsm* fsm, struct raft_buffer* bufs[], unsigned* n_bufs);
  static int on_restore(struct raft_fsm* fsm, struct raft_buffer* buf);
  static int on_snapshot_finalize(struct raft_fsm* fsm, struct raft_buffer* bufs[], unsigned* n_bufs);
  // FSM version 3, on a libuv pool thread between on_snapshot and
  // on_snapshot_finalize: reads the child's snapshot into the buffer.
  static int on_snapshot_async(struct raft_fsm* fsm, struct raft_buffer* bufs[], unsigned* n_bufs);
  // Serialises the state into snapshot_buffer_, sealed in its envelope.
  void serialise_into_buffer();
  // Forks the child that serialises the state and writes it to a pipe.
  // Returns false, with no child left behind, when the pipe or the fork
  // fails.
  bool start_child();
  // In the child: writes the snapshot to `fd`, then exits. Never returns.
  [[noreturn]] void run_child(int fd);
  // A child could not serve (`reason`, for the log): counted, and every
  // later snapshot is serialised on the loop.
  void fall_back_to_loop(std::string reason);
  // Kills and reaps a child whose bytes nobody will read, and closes its
  // pipe. Nothing when there is none.
  void abandon_child();
  // On the pool thread: the child's bytes into snapshot_buffer_, and its
  // exit. Returns an empty string on success, else why it failed.
  std::string collect_child();
  // Grows snapshot_buffer_ to at least `bytes` with room to spare, asking
  // the kernel for huge pages for it (a fresh 35 MB buffer took ~120 ms of
  // page faults on the reference machine, trap 8).
  void reserve_snapshot_buffer(std::size_t bytes);
  // Replaces the buffer by an empty one of exactly `capacity` bytes,
  // advised MADV_HUGEPAGE.
  void map_snapshot_buffer(std::size_t capacity);
  // After release_snapshot_buffer: maps the buffer again on the first apply,
  // then touches one more slice of it per apply, up to the size it had.
  void rewarm_step();
  // The byte bound's bookkeeping for one applied entry of `bytes`.
  void note_applied(std::size_t bytes);
  // Calls off a due quiet-log compaction (compact_on_next_apply).
  void skip_compaction();
  // The trailing entry count that keeps the latest entries within half the bound.
  [[nodiscard]] unsigned trailing_within_bound() const;
  // The byte bound in effect: log_bytes_max_, or the latest snapshot's size
  // when larger (0: no byte bound).
  [[nodiscard]] std::size_t log_bytes_bound() const;
  void note_state_bytes(std::size_t bytes);

  ReplicatedState& state_;
  SnapshotSerialization serialization_;
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
  // kInChild: the child serialising the lent snapshot (0: none, the bytes
  // are already in the buffer), the pipe's read end, and when it was
  // forked. Set on the loop thread before libraft queues on_snapshot_async,
  // read and cleared there; libuv's work queue orders the two threads.
  pid_t child_ = 0;
  int child_fd_ = -1;
  std::uint64_t child_started_us_ = 0;
  int child_deadline_ms_ = kChildDeadlineMs;
  // Written by on_snapshot_async, read by on_snapshot_finalize: the child's
  // time, and why it failed (empty: it did not).
  std::uint64_t child_us_ = 0;
  std::string child_error_;
  // The latest failure kept for the log (child_failure()).
  std::string child_failure_;
  // release_snapshot_buffer: the capacity and the size the buffer had, to
  // be mapped and touched again by rewarm_step (0: nothing to do).
  std::size_t rewarm_capacity_ = 0;
  std::size_t rewarm_bytes_ = 0;
  // bound_log_bytes: the bound (0: off), the configured entry counts, the
  // sizes of the latest applied entries (at most `trailing_` of them), and
  // whether the threshold is lowered now.
  std::size_t log_bytes_max_ = 0;
  // The size of the latest snapshot taken or restored here (its envelope).
  std::size_t latest_state_bytes_ = 0;
  unsigned threshold_ = 0;
  unsigned trailing_ = 0;
  std::deque<std::uint32_t> recent_sizes_;
  bool snapshot_forced_ = false;
  bool forced_for_bytes_ = false;  // The byte bound forced it (not a staggered entry threshold).
  // compact_on_next_apply: due, and libraft's threshold and trailing as they
  // were, to be put back (the trailing count once the compacting snapshot's
  // truncation is done: at the next snapshot).
  bool compaction_due_ = false;
  // stagger_snapshots: the share of a period the first one after start,
  // restore or compaction comes early (0: none), and whether the next
  // snapshot is that first one.
  double phase_ = 0;
  bool first_period_ = true;
  unsigned threshold_before_compaction_ = 0;
  std::optional<unsigned> trailing_after_compaction_;
};

}  // namespace rw::consensus
