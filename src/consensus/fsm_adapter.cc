// FsmAdapter: libraft's raft_fsm callbacks turned into ReplicatedState calls.
#include "consensus/fsm_adapter.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "base/assert.h"
#include "consensus/envelope.h"

namespace rw::consensus {
namespace {

std::uint64_t steady_us() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// The pipe's capacity asked for: fewer wake-ups of the reading pool thread
// than the default 64 KiB. Advice; a refusal only costs wake-ups.
constexpr int kChildPipeBytes = 1 << 20;

// Writes all of `bytes` to `fd`. Returns false on an error.
bool write_all(int fd, const std::uint8_t* bytes, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, bytes, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

constexpr std::string_view kDeadlinePassed = "deadline passed";

// Reads exactly `size` bytes from `fd` before the steady-clock `deadline_us`.
// Returns an empty string, or why it could not.
std::string read_all(int fd, std::uint8_t* bytes, std::size_t size, std::uint64_t deadline_us) {
  while (size > 0) {
    const std::uint64_t now = steady_us();
    if (now >= deadline_us) return std::string(kDeadlinePassed);
    struct pollfd ready {
      fd, POLLIN, 0
    };
    const int waited = ::poll(&ready, 1, static_cast<int>((deadline_us - now + 999) / 1000));
    if (waited < 0 && errno == EINTR) continue;
    if (waited < 0) return std::string("poll: ") + std::strerror(errno);
    if (waited == 0) continue;
    const ssize_t n = ::read(fd, bytes, size);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return std::string("read: ") + std::strerror(errno);
    if (n == 0) return "the child closed its pipe early";
    bytes += n;
    size -= static_cast<std::size_t>(n);
  }
  return {};
}

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

FsmAdapter::FsmAdapter(ReplicatedState& state, SnapshotSerialization serialization)
    : state_(state), serialization_(serialization) {
  // Version 2: snapshot_finalize returns the snapshot's buffers to us, so
  // one buffer serves every snapshot (trap 8). Version 3 adds
  // snapshot_async, which libraft calls on a pool thread between the two.
  fsm_.version = serialization == SnapshotSerialization::kInChild ? 3 : 2;
  fsm_.data = this;
  fsm_.apply = &FsmAdapter::on_apply;
  fsm_.snapshot = &FsmAdapter::on_snapshot;
  fsm_.restore = &FsmAdapter::on_restore;
  fsm_.snapshot_finalize = &FsmAdapter::on_snapshot_finalize;
  if (serialization == SnapshotSerialization::kInChild) fsm_.snapshot_async = &FsmAdapter::on_snapshot_async;
}

FsmAdapter::~FsmAdapter() {
  // A node closed while a child still wrote: nothing reads it any more.
  abandon_child();
}

void FsmAdapter::fall_back_to_loop(std::string reason) {
  // Serialise on the loop from now on: a child that failed once (a lock
  // held at the fork, the OOM killer, a process limit) would likely fail
  // again, and the log must not grow past its bound meanwhile.
  child_failure_ = std::move(reason);
  ++snapshot_figures_.child_failures;
  serialization_ = SnapshotSerialization::kOnLoop;
}

void FsmAdapter::abandon_child() {
  if (child_ != 0) {
    (void)::kill(child_, SIGKILL);
    (void)::waitpid(child_, nullptr, 0);
    child_ = 0;
  }
  if (child_fd_ >= 0) ::close(child_fd_);
  child_fd_ = -1;
}

int FsmAdapter::on_apply(struct raft_fsm* fsm, const struct raft_buffer* buf, void** result) {
  auto* self = static_cast<FsmAdapter*>(fsm->data);
  RW_ASSERT(self->raft_ != nullptr);
  // libraft applies entries strictly in order and advances last_applied after
  // each one (barriers and configurations included), so the entry being
  // applied is the one after last_applied.
  const std::uint64_t index = self->raft_->last_applied + 1;
  // Only commands come here, never the leader's barrier: load is back before
  // the quiet log was compacted. The load's own snapshots will drop the
  // burst's entries; compacting now would have every member snapshot at once
  // just as the load resumes (docs/limits.md "Member memory budget").
  if (self->compaction_due_) self->skip_compaction();
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
  // The child holds the state as of this index; the loop goes on applying
  // and on_snapshot_async reads the bytes. Otherwise they are written now.
  const bool in_child = self->serialization_ == SnapshotSerialization::kInChild && self->start_child();
  if (!in_child) self->serialise_into_buffer();
  std::vector<std::uint8_t>& buffer = self->snapshot_buffer_;
  self->snapshot_array_ = {buffer.data(), buffer.size()};
  self->snapshot_lent_ = true;
  *bufs = &self->snapshot_array_;
  *n_bufs = 1;

  const auto us = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started)
          .count());
  SnapshotFigures& figures = self->snapshot_figures_;
  ++figures.taken;
  if (in_child) ++figures.in_child;
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
  if (!in_child) {
    figures.last_bytes = buffer.size();
    figures.buffer_bytes = buffer.size();
    self->note_state_bytes(figures.last_bytes);
  }
  return 0;
}

void FsmAdapter::serialise_into_buffer() {
  // The snapshot travels in the same envelope as entries (its length may
  // come back padded too), written in place after an 8-byte placeholder.
  snapshot_buffer_.assign(kEnvelopeHeaderSize, 0);
  state_.snapshot_into(snapshot_buffer_);
  seal_envelope(snapshot_buffer_);
}

bool FsmAdapter::start_child() {
  RW_ASSERT(child_ == 0 && child_fd_ < 0);
  int fds[2] = {-1, -1};
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    fall_back_to_loop(std::string("pipe: ") + std::strerror(errno));
    return false;
  }
  (void)::fcntl(fds[1], F_SETPIPE_SZ, kChildPipeBytes);
  child_started_us_ = steady_us();
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    // Die with the member rather than outlive it; and if it is gone already
    // (before prctl took effect), at once.
    (void)::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(3);
    run_child(fds[1]);
  }
  ::close(fds[1]);
  if (pid < 0) {
    // Refused (no memory to commit with strict overcommit, a process
    // limit): this snapshot and the later ones on the loop.
    fall_back_to_loop(std::string("fork: ") + std::strerror(errno));
    ::close(fds[0]);
    return false;
  }
  child_ = pid;
  child_fd_ = fds[0];
  return true;
}

void FsmAdapter::run_child(int fd) {
  // Only this thread exists in the child, and it may not take a lock another
  // thread held at the fork: serialising is pure (Ledger::snapshot_into
  // hashes without OpenSSL's locked algorithm fetch) and glibc's malloc is
  // made usable in a forked child. The member blocks its stop signals for
  // sigtimedwait; here they take their default action, so that a stop of
  // the whole group ends the child too.
  sigset_t none;
  sigemptyset(&none);
  (void)::pthread_sigmask(SIG_SETMASK, &none, nullptr);
  serialise_into_buffer();
  const std::uint64_t size = snapshot_buffer_.size();
  const bool written = write_all(fd, reinterpret_cast<const std::uint8_t*>(&size), sizeof(size)) &&
                       write_all(fd, snapshot_buffer_.data(), snapshot_buffer_.size());
  // _exit: no atexit handlers, no destructors, no stdio flush of the
  // member's buffers, which are the parent's to write.
  ::_exit(written ? 0 : 1);
}

std::string FsmAdapter::collect_child() {
  const std::uint64_t deadline = child_started_us_ + static_cast<std::uint64_t>(child_deadline_ms_) * 1000;
  std::uint64_t size = 0;
  std::string error = read_all(child_fd_, reinterpret_cast<std::uint8_t*>(&size), sizeof(size), deadline);
  if (error.empty() && (size < kEnvelopeHeaderSize || size % 8 != 0 || size > (std::uint64_t{1} << 40))) {
    error = "the child announced " + std::to_string(size) + " bytes";
  }
  if (error.empty()) {
    // Nothing else touches the buffer while libraft holds it (the loop
    // frees or rewarms it only once it is back, on_snapshot_finalize).
    if (snapshot_buffer_.capacity() < size) map_snapshot_buffer(size + size / 4);
    snapshot_buffer_.resize(size);
    error = read_all(child_fd_, snapshot_buffer_.data(), size, deadline);
  }
  const bool deadline_passed = error == kDeadlinePassed;
  if (!error.empty()) (void)::kill(child_, SIGKILL);
  int status = 0;
  pid_t reaped = 0;
  do {
    reaped = ::waitpid(child_, &status, 0);
  } while (reaped < 0 && errno == EINTR);
  // How the child ended says more than the pipe it left short, unless it
  // was killed here for passing the deadline.
  std::string ended;
  if (reaped != child_) {
    ended = std::string("waitpid: ") + std::strerror(errno);
  } else if (WIFSIGNALED(status)) {
    ended = "the child was killed by signal " + std::to_string(WTERMSIG(status));
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    ended = "the child exited with status " + std::to_string(WEXITSTATUS(status));
  }
  if (!deadline_passed && !ended.empty()) error = ended;
  if (error.empty() && !open_envelope(Bytes(snapshot_buffer_)))
    error = "the child's snapshot is not a whole envelope";
  ::close(child_fd_);
  child_fd_ = -1;
  child_ = 0;
  child_us_ = steady_us() - child_started_us_;
  return error;
}

int FsmAdapter::on_snapshot_async(struct raft_fsm* fsm, struct raft_buffer* bufs[], unsigned* n_bufs) {
  auto* self = static_cast<FsmAdapter*>(fsm->data);
  RW_ASSERT(self->snapshot_lent_ && *bufs == &self->snapshot_array_ && *n_bufs == 1);
  if (self->child_ == 0) return 0;  // Written on the loop already.
  self->child_error_ = self->collect_child();
  if (!self->child_error_.empty()) return RAFT_IOERR;  // libraft drops it and finalizes.
  self->snapshot_array_ = {self->snapshot_buffer_.data(), self->snapshot_buffer_.size()};
  return 0;
}

int FsmAdapter::on_snapshot_finalize(struct raft_fsm* fsm, struct raft_buffer* bufs[], unsigned* n_bufs) {
  auto* self = static_cast<FsmAdapter*>(fsm->data);
  RW_ASSERT(self->snapshot_lent_ && *bufs == &self->snapshot_array_ && *n_bufs == 1);
  SnapshotFigures& figures = self->snapshot_figures_;
  if (self->child_ != 0) {
    // libraft gave up before on_snapshot_async (its work could not be
    // queued): nobody reads this child.
    self->child_error_ = "the snapshot was abandoned before its bytes were read";
    self->abandon_child();
  }
  if (!self->child_error_.empty()) {
    self->fall_back_to_loop(std::move(self->child_error_));
    self->child_error_.clear();
  } else if (self->child_us_ != 0) {
    figures.child_last_us = self->child_us_;
    figures.child_max_us = std::max(figures.child_max_us, self->child_us_);
    figures.last_bytes = self->snapshot_buffer_.size();
    self->note_state_bytes(figures.last_bytes);
  }
  self->child_us_ = 0;
  figures.buffer_bytes = self->snapshot_buffer_.size();
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
  self->note_state_bytes(buf->len);
  self->recent_sizes_.clear();
  // At the leader's index, like the others that installed it: stagger again.
  self->first_period_ = true;
  ++self->snapshot_figures_.restored;
  return 0;
}

void FsmAdapter::bound_log_bytes(std::size_t bytes, unsigned threshold, unsigned trailing) {
  RW_ASSERT(raft_ != nullptr);
  log_bytes_max_ = bytes;
  snapshot_figures_.log_bytes_bound = log_bytes_bound();
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

void FsmAdapter::skip_compaction() {
  compaction_due_ = false;
  ++snapshot_figures_.quiet_compactions_skipped;
  // A snapshot the byte bound forced before is still due (threshold 1 until
  // it is taken); otherwise the threshold compact_on_next_apply replaced.
  if (!snapshot_forced_) raft_set_snapshot_threshold(raft_, threshold_before_compaction_);
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
  const std::uint64_t half = log_bytes_bound() / 2;
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

std::size_t FsmAdapter::log_bytes_bound() const {
  if (log_bytes_max_ == 0) return 0;
  // A state larger than the configured bound would otherwise be written
  // whole each time half the bound arrives: with a snapshot of S bytes and a
  // bound of B, S / (B / 2) snapshot bytes per log byte, growing with the
  // state (a million live sessions: ~3.5, every member on the shared core
  // serialising and writing ~175 MB every ~13 s). At max(B, S) a snapshot
  // writes at most twice the bytes the log received since the last one
  // (three times while the state grows by all it receives), whatever the
  // state's size (docs/consensus.md "Log held in memory").
  return std::max(log_bytes_max_, latest_state_bytes_);
}

void FsmAdapter::note_state_bytes(std::size_t bytes) {
  latest_state_bytes_ = bytes;
  if (log_bytes_max_ != 0) snapshot_figures_.log_bytes_bound = log_bytes_bound();
}

unsigned FsmAdapter::trailing_within_bound() const {
  // Barriers and configuration entries are not applied here and are not
  // counted, so keeping this many log entries keeps at most these bytes.
  const std::size_t half = log_bytes_bound() / 2;
  std::size_t sum = 0;
  unsigned count = 0;
  for (auto size = recent_sizes_.rbegin(); size != recent_sizes_.rend(); ++size) {
    if (sum + *size > half) break;
    sum += *size;
    ++count;
  }
  return count;
}

}  // namespace rw::consensus
