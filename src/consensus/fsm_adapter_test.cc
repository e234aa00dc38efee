// Tests of FsmAdapter's snapshot buffer: kept warm between snapshots
// (docs/consensus.md trap 8), released when the log is quiet and touched
// back as entries arrive (docs/limits.md "Member memory budget"); and of
// snapshots serialised in a forked child while apply goes on
// (docs/consensus.md "Snapshots in a child process").
#include "consensus/fsm_adapter.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "consensus/envelope.h"
#include "consensus/raft_c.h"
#include "consensus/replicated_state.h"

namespace rw::consensus {
namespace {

// A state whose snapshot is `bytes` octets.
class FixedSizeState : public ReplicatedState {
 public:
  explicit FixedSizeState(std::size_t bytes) : bytes_(bytes) {}
  void apply(std::uint64_t, Bytes) override {}
  [[nodiscard]] std::vector<std::uint8_t> snapshot() const override {
    return std::vector<std::uint8_t>(bytes_, 7);
  }
  [[nodiscard]] std::size_t snapshot_size_bound() const override { return bytes_; }
  [[nodiscard]] bool restore(Bytes) override { return true; }

 private:
  std::size_t bytes_;
};

class FsmAdapterBuffer : public ::testing::Test {
 protected:
  static constexpr std::size_t kSnapshotBytes = std::size_t{4} << 20;

  FsmAdapterBuffer() : state_(kSnapshotBytes), adapter_(state_) { adapter_.attach(&raft_); }

  // Takes a snapshot as libraft does; `and_finalize` false leaves it lent.
  void snapshot(bool and_finalize = true) {
    struct raft_buffer* bufs = nullptr;
    unsigned n = 0;
    ASSERT_EQ(adapter_.fsm()->snapshot(adapter_.fsm(), &bufs, &n), 0);
    ASSERT_EQ(n, 1U);
    lent_ = bufs;
    if (and_finalize) finalize();
  }
  void finalize() {
    unsigned n = 1;
    ASSERT_EQ(adapter_.fsm()->snapshot_finalize(adapter_.fsm(), &lent_, &n), 0);
  }
  void apply() {
    std::uint8_t entry[64] = {};
    const struct raft_buffer buf { entry, sizeof(entry) };
    void* result = nullptr;
    ASSERT_EQ(adapter_.fsm()->apply(adapter_.fsm(), &buf, &result), 0);
    ++raft_.last_applied;
  }
  [[nodiscard]] std::uint64_t buffer_bytes() const { return adapter_.snapshot_figures().buffer_bytes; }

  struct raft raft_ {};
  FixedSizeState state_;
  FsmAdapter adapter_;
  struct raft_buffer* lent_ = nullptr;
};

TEST_F(FsmAdapterBuffer, KeepsTheBufferBetweenSnapshots) {
  snapshot();
  EXPECT_GE(buffer_bytes(), kSnapshotBytes);
  apply();
  EXPECT_GE(buffer_bytes(), kSnapshotBytes);
}

TEST_F(FsmAdapterBuffer, ReleasesTheBufferAndTouchesItBackSliceBySlice) {
  snapshot();
  const std::uint64_t kept = buffer_bytes();
  EXPECT_TRUE(adapter_.release_snapshot_buffer());
  EXPECT_EQ(buffer_bytes(), 0U);
  EXPECT_FALSE(adapter_.release_snapshot_buffer());  // Nothing left to free.
  apply();
  EXPECT_GT(buffer_bytes(), 0U);
  EXPECT_LT(buffer_bytes(), kept);  // One slice, not the whole buffer at once.
  for (int i = 0; i < 64 && buffer_bytes() < kept; ++i) apply();
  EXPECT_EQ(buffer_bytes(), kept);
  snapshot();  // Still a whole snapshot.
  EXPECT_GE(buffer_bytes(), kSnapshotBytes);
}

TEST_F(FsmAdapterBuffer, KeepsTheBufferWhileLibraftStillReadsIt) {
  snapshot(/*and_finalize=*/false);
  EXPECT_FALSE(adapter_.release_snapshot_buffer());
  EXPECT_GE(buffer_bytes(), kSnapshotBytes);
  finalize();
  EXPECT_TRUE(adapter_.release_snapshot_buffer());
}

// A state that counts the entries applied and writes, in its snapshot, the
// count and the process that wrote it. `in_child` makes a child misbehave:
// exit with status 7, or hang.
class CountingState : public ReplicatedState {
 public:
  enum class Child : std::uint8_t { kWrites, kExits, kHangs };
  explicit CountingState(Child child = Child::kWrites) : child_(child), owner_(::getpid()) {}
  void apply(std::uint64_t, Bytes) override { ++applied_; }
  [[nodiscard]] std::vector<std::uint8_t> snapshot() const override {
    if (::getpid() != owner_ && child_ == Child::kExits) ::_exit(7);
    if (::getpid() != owner_ && child_ == Child::kHangs) ::pause();
    std::vector<std::uint8_t> out(sizeof(applied_) + sizeof(pid_t));
    const pid_t writer = ::getpid();
    std::memcpy(out.data(), &applied_, sizeof(applied_));
    std::memcpy(out.data() + sizeof(applied_), &writer, sizeof(writer));
    return out;
  }
  [[nodiscard]] bool restore(Bytes) override { return true; }

 private:
  Child child_;
  pid_t owner_;
  std::uint64_t applied_ = 0;
};

// What a snapshot's envelope says: the entries applied and the writer's pid.
struct Written {
  std::uint64_t applied = 0;
  pid_t writer = 0;
};
Written written(const struct raft_buffer& buffer) {
  Written out;
  const auto* payload = static_cast<const std::uint8_t*>(buffer.base) + kEnvelopeHeaderSize;
  std::memcpy(&out.applied, payload, sizeof(out.applied));
  std::memcpy(&out.writer, payload + sizeof(out.applied), sizeof(out.writer));
  return out;
}

class FsmAdapterChild : public ::testing::Test {
 protected:
  explicit FsmAdapterChild(CountingState::Child child = CountingState::Child::kWrites)
      : state_(child), adapter_(state_, SnapshotSerialization::kInChild) {
    adapter_.attach(&raft_);
  }

  void apply(int entries) {
    // An entry as Node appends them: a payload in its envelope.
    const std::vector<std::uint8_t> payload(40, 1);
    std::vector<std::uint8_t> entry(envelope_size(payload.size()));
    write_envelope(Bytes(payload), MutableBytes(entry));
    const struct raft_buffer buf { entry.data(), entry.size() };
    void* result = nullptr;
    for (int i = 0; i < entries; ++i) {
      ASSERT_EQ(adapter_.fsm()->apply(adapter_.fsm(), &buf, &result), 0);
      ++raft_.last_applied;
    }
  }
  // libraft's three calls: snapshot on the loop, snapshot_async on a pool
  // thread (here, this one), finalize on the loop.
  void begin() {
    n_ = 0;
    ASSERT_EQ(adapter_.fsm()->snapshot(adapter_.fsm(), &lent_, &n_), 0);
    ASSERT_EQ(n_, 1U);
  }
  int finish_async() { return adapter_.fsm()->snapshot_async(adapter_.fsm(), &lent_, &n_); }
  void finalize() { ASSERT_EQ(adapter_.fsm()->snapshot_finalize(adapter_.fsm(), &lent_, &n_), 0); }

  struct raft raft_ {};
  CountingState state_;
  FsmAdapter adapter_;
  struct raft_buffer* lent_ = nullptr;
  unsigned n_ = 0;
};

TEST_F(FsmAdapterChild, IsLibraftsVersionThreeWithSnapshotAsync) {
  EXPECT_EQ(adapter_.fsm()->version, 3);
  EXPECT_NE(adapter_.fsm()->snapshot_async, nullptr);
  CountingState state;
  FsmAdapter on_loop(state);
  EXPECT_EQ(on_loop.fsm()->version, 2);
}

// The snapshot holds the state as of its call, written by another process,
// while the entries applied after the call change only the parent's state.
TEST_F(FsmAdapterChild, HoldsTheStateAtItsIndexWhileApplyGoesOn) {
  apply(10);
  begin();
  apply(5);  // The loop goes on while the child writes.
  ASSERT_EQ(finish_async(), 0);
  const Written snapshot = written(*lent_);
  EXPECT_EQ(snapshot.applied, 10U);
  EXPECT_NE(snapshot.writer, ::getpid());
  EXPECT_EQ(lent_->len, envelope_size(sizeof(std::uint64_t) + sizeof(pid_t)));
  finalize();
  const SnapshotFigures& figures = adapter_.snapshot_figures();
  EXPECT_EQ(figures.taken, 1U);
  EXPECT_EQ(figures.in_child, 1U);
  EXPECT_EQ(figures.child_failures, 0U);
  EXPECT_GT(figures.child_last_us, 0U);
  EXPECT_EQ(figures.last_bytes, envelope_size(sizeof(std::uint64_t) + sizeof(pid_t)));

  // The next one sees all 15, again from a child.
  begin();
  ASSERT_EQ(finish_async(), 0);
  EXPECT_EQ(written(*lent_).applied, 15U);
  finalize();
  EXPECT_EQ(adapter_.snapshot_figures().in_child, 2U);
}

class FsmAdapterChildExits : public FsmAdapterChild {
 protected:
  FsmAdapterChildExits() : FsmAdapterChild(CountingState::Child::kExits) {}
};

// A child that dies fails its snapshot (libraft drops it and takes another
// later); that one and every later one are written on the loop.
TEST_F(FsmAdapterChildExits, FailsTheSnapshotAndFallsBackToTheLoop) {
  apply(3);
  begin();
  EXPECT_EQ(finish_async(), RAFT_IOERR);
  finalize();
  EXPECT_EQ(adapter_.snapshot_figures().child_failures, 1U);
  EXPECT_NE(adapter_.child_failure().find("status 7"), std::string::npos) << adapter_.child_failure();

  begin();
  EXPECT_EQ(written(*lent_).applied, 3U);  // Written by the snapshot call itself.
  EXPECT_EQ(written(*lent_).writer, ::getpid());
  ASSERT_EQ(finish_async(), 0);
  finalize();
  EXPECT_EQ(adapter_.snapshot_figures().in_child, 1U);
  EXPECT_EQ(adapter_.snapshot_figures().taken, 2U);
}

class FsmAdapterChildHangs : public FsmAdapterChild {
 protected:
  FsmAdapterChildHangs() : FsmAdapterChild(CountingState::Child::kHangs) {}
};

// A child that never writes (a lock held at the fork, say) is killed at the
// deadline, not waited for.
TEST_F(FsmAdapterChildHangs, IsKilledAtTheDeadline) {
  adapter_.set_child_deadline_ms(300);
  apply(1);
  begin();
  EXPECT_EQ(finish_async(), RAFT_IOERR);
  finalize();
  EXPECT_EQ(adapter_.snapshot_figures().child_failures, 1U);
  EXPECT_EQ(adapter_.child_failure(), "deadline passed");
}

}  // namespace
}  // namespace rw::consensus
