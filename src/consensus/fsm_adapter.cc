// FsmAdapter: libraft's raft_fsm callbacks turned into ReplicatedState calls.
#include "consensus/fsm_adapter.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "base/assert.h"
#include "consensus/envelope.h"

namespace rw::consensus {
namespace {

// Bytes of the released snapshot buffer touched again per applied entry: a
// 45 MB buffer is warm again after ~180 entries (a second at the ceiling),
// long before the log's byte bound asks for the next snapshot, and each
// apply pays at most 64 page faults (a few with huge pages).
constexpr std::size_t kRewarmSliceBytes = 256 * 1024;

}  // namespace

std::size_t log_entry_bytes(const struct raft_log& log) {
  const std::size_t count = log.back >= log.front ? log.back - log.front : log.size - log.front + log.back;
  std::size_t bytes = 0;
  for (std::size_t k = 0; k < count; ++k) bytes += log.entries[(log.front + k) % log.size].buf.len;
  return bytes;
}

FsmAdapter::FsmAdapter(ReplicatedState& state) : state_(state) {
  // Version 2: snapshot_finalize returns the snapshot's buffers to us, so
  // one buffer serves every snapshot (trap 8).
  fsm_.version = 2;
  fsm_.data = this;
  fsm_.apply = &FsmAdapter::on_apply;
  fsm_.snapshot = &FsmAdapter::on_snapshot;
  fsm_.restore = &FsmAdapter::on_restore;
  fsm_.snapshot_finalize = &FsmAdapter::on_snapshot_finalize;
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
  if (self->log_bytes_max_ != 0) self->note_applied(buf->len);
  if (self->rewarm_bytes_ != 0) self->rewarm_step();
  *result = nullptr;
  return 0;  // Never an error: an error silently stops applying (docs/consensus.md trap 7).
}

int FsmAdapter::on_snapshot(struct raft_fsm* fsm, struct raft_buffer* bufs[], unsigned* n_bufs) {
  auto* self = static_cast<FsmAdapter*>(fsm->data);
  // libraft finalizes a snapshot before it takes the next one.
  RW_ASSERT(!self->snapshot_lent_);
  const auto started = std::chrono::steady_clock::now();
  // A snapshot touches the pages it writes itself.
  self->rewarm_capacity_ = 0;
  self->rewarm_bytes_ = 0;
  const std::size_t bound = self->state_.snapshot_size_bound();
  if (bound != 0) self->reserve_snapshot_buffer(envelope_size(bound));
  // The snapshot travels in the same envelope as entries (its length may
  // come back padded too), written in place after an 8-byte placeholder.
  std::vector<std::uint8_t>& buffer = self->snapshot_buffer_;
  buffer.assign(kEnvelopeHeaderSize, 0);
  self->state_.snapshot_into(buffer);
  seal_envelope(buffer);
  self->snapshot_array_ = {buffer.data(), buffer.size()};
  self->snapshot_lent_ = true;
  *bufs = &self->snapshot_array_;
  *n_bufs = 1;

  const auto us = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started)
          .count());
  SnapshotFigures& figures = self->snapshot_figures_;
  ++figures.taken;
  // A compaction's trailing 1 stays set until libraft truncated behind
  // that snapshot, which is done before it takes this one.
  if (self->trailing_after_compaction_) {
    raft_set_snapshot_trailing(self->raft_, *self->trailing_after_compaction_);
    self->trailing_after_compaction_.reset();
  }
  if (self->log_bytes_max_ != 0) {
    // libraft truncates the log behind this snapshot when the write is done,
    // keeping r->snapshot.trailing entries: set it for this snapshot now.
    raft_set_snapshot_trailing(self->raft_, self->trailing_within_bound());
    if (self->snapshot_forced_) {
      if (self->forced_for_bytes_) ++figures.for_log_bytes;
      raft_set_snapshot_threshold(self->raft_, self->threshold_);
      self->snapshot_forced_ = false;
    }
    figures.log_bytes_since = 0;
  }
  if (self->compaction_due_) {
    // Keep only the entry just applied (the leader's barrier, usually).
    self->trailing_after_compaction_ = self->raft_->snapshot.trailing;
    raft_set_snapshot_trailing(self->raft_, 1);
    raft_set_snapshot_threshold(self->raft_, self->threshold_before_compaction_);
    self->compaction_due_ = false;
    ++figures.for_quiet_log;
    // Every member snapshots at the leader's barrier: in step again.
    self->first_period_ = true;
  } else {
    self->first_period_ = false;
  }
  figures.last_us = us;
  figures.max_us = std::max(figures.max_us, us);
  figures.last_bytes = buffer.size();
  figures.buffer_bytes = buffer.size();
  return 0;
}

int FsmAdapter::on_snapshot_finalize(struct raft_fsm* fsm, struct raft_buffer* bufs[], unsigned* n_bufs) {
  auto* self = static_cast<FsmAdapter*>(fsm->data);
  RW_ASSERT(self->snapshot_lent_ && *bufs == &self->snapshot_array_ && *n_bufs == 1);
  // The buffer stays allocated and warm for the next snapshot: at most
  // 1.25 times the largest snapshot so far (docs/limits.md).
  self->snapshot_lent_ = false;
  self->snapshot_array_ = {};
  *bufs = nullptr;
  *n_bufs = 0;
  return 0;
}

void FsmAdapter::reserve_snapshot_buffer(std::size_t bytes) {
  if (snapshot_buffer_.capacity() >= bytes) return;
  map_snapshot_buffer(bytes + bytes / 4);
}

void FsmAdapter::map_snapshot_buffer(std::size_t capacity) {
  std::vector<std::uint8_t> bigger;
  bigger.reserve(capacity);
  // Transparent huge pages for the new buffer, where the kernel allows them
  // (Debian's default is "madvise"): first-touch faults then come per 2 MiB,
  // not per 4 KiB. Advice only; a refusal costs the faults, nothing else.
  constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
  const auto start = reinterpret_cast<std::uintptr_t>(bigger.data());
  const std::uintptr_t first = (start + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t end = (start + bigger.capacity()) & ~(kHugePage - 1);
  if (end > first) (void)madvise(reinterpret_cast<void*>(first), end - first, MADV_HUGEPAGE);
  snapshot_buffer_.swap(bigger);
}

bool FsmAdapter::release_snapshot_buffer() {
  if (snapshot_lent_ || snapshot_buffer_.capacity() == 0) return false;
  rewarm_capacity_ = snapshot_buffer_.capacity();
  rewarm_bytes_ = snapshot_buffer_.size();
  // Larger than the mmap threshold (io::tune_heap), so freeing it unmaps it.
  std::vector<std::uint8_t>().swap(snapshot_buffer_);
  snapshot_figures_.buffer_bytes = 0;
  return true;
}

void FsmAdapter::rewarm_step() {
  if (snapshot_buffer_.capacity() < rewarm_capacity_) map_snapshot_buffer(rewarm_capacity_);
  // resize() zero-fills: the new slice's pages are faulted in now, a few
  // per apply, rather than all at once inside the next snapshot.
  const std::size_t next = std::min(rewarm_bytes_, snapshot_buffer_.size() + kRewarmSliceBytes);
  snapshot_buffer_.resize(next);
  snapshot_figures_.buffer_bytes = next;
  if (next == rewarm_bytes_) {
    rewarm_capacity_ = 0;
    rewarm_bytes_ = 0;
  }
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
  // An installed snapshot replaces the log: nothing is held since.
  self->snapshot_figures_.log_bytes_since = 0;
  self->recent_sizes_.clear();
  // At the leader's index, like the others that installed it: stagger again.
  self->first_period_ = true;
  ++self->snapshot_figures_.restored;
  return 0;
}

void FsmAdapter::bound_log_bytes(std::size_t bytes, unsigned threshold, unsigned trailing) {
  RW_ASSERT(raft_ != nullptr);
  log_bytes_max_ = bytes;
  threshold_ = threshold;
  trailing_ = trailing;
  snapshot_forced_ = false;
  raft_set_snapshot_threshold(raft_, threshold);
  raft_set_snapshot_trailing(raft_, trailing);
}

void FsmAdapter::compact_on_next_apply() {
  RW_ASSERT(raft_ != nullptr);
  if (compaction_due_) return;
  // A snapshot the byte bound asked for restores the configured threshold
  // itself; the one to restore here is the configured one too.
  threshold_before_compaction_ = snapshot_forced_ ? threshold_ : raft_->snapshot.threshold;
  compaction_due_ = true;
  // libraft checks after each apply whether entries since the last snapshot
  // reach the threshold (note_applied).
  raft_set_snapshot_threshold(raft_, 1);
}

void FsmAdapter::stagger_snapshots(double phase) {
  RW_ASSERT(phase >= 0 && phase < 1);
  phase_ = phase;
}

void FsmAdapter::note_applied(std::size_t bytes) {
  snapshot_figures_.log_bytes_since += bytes;
  recent_sizes_.push_back(static_cast<std::uint32_t>(bytes));
  while (recent_sizes_.size() > trailing_) recent_sizes_.pop_front();
  // The head start of a staggered member's first period (stagger_snapshots);
  // libraft's own threshold check (entries since the snapshot) keeps the
  // period after it.
  const double head_start = first_period_ ? phase_ : 0;
  const auto early = [head_start](std::uint64_t period) {
    return static_cast<std::uint64_t>(head_start * static_cast<double>(period));
  };
  const std::uint64_t half = log_bytes_max_ / 2;
  const bool bytes_due = snapshot_figures_.log_bytes_since + early(half) >= half;
  // Entries since the snapshot as libraft counts them (barriers included),
  // this one too: it is applied at last_applied + 1.
  const std::uint64_t entries_since = raft_->last_applied + 1 - raft_->log.snapshot.last_index;
  const bool entries_due =
      first_period_ && threshold_ != 0 && entries_since + early(threshold_) >= threshold_;
  if (!snapshot_forced_ && (bytes_due || entries_due)) {
    // libraft checks its threshold after each apply (shouldTakeSnapshot:
    // entries since the last snapshot >= threshold): 1 takes one now, or as
    // soon as a snapshot in progress is done.
    raft_set_snapshot_threshold(raft_, 1);
    snapshot_forced_ = true;
    forced_for_bytes_ = bytes_due;
  }
}

unsigned FsmAdapter::trailing_within_bound() const {
  // Barriers and configuration entries are not applied here and are not
  // counted, so keeping this many log entries keeps at most these bytes.
  std::size_t sum = 0;
  unsigned count = 0;
  for (auto size = recent_sizes_.rbegin(); size != recent_sizes_.rend(); ++size) {
    if (sum + *size > log_bytes_max_ / 2) break;
    sum += *size;
    ++count;
  }
  return count;
}

}  // namespace rw::consensus
