// Tests of FsmAdapter's snapshot buffer: kept warm between snapshots
// (docs/consensus.md trap 8), released when the log is quiet and touched
// back as entries arrive (docs/limits.md "Member memory budget").
#include "consensus/fsm_adapter.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

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

}  // namespace
}  // namespace rw::consensus
