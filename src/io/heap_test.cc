// Tests of the heap tuning (heap.h): what a member relies on to give memory
// back after a load (docs/limits.md "Member memory budget").
#include "io/heap.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

namespace rw::io {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// Keeps the compiler from removing an allocation it could see unused.
void touch(void* block, std::size_t bytes) {
  auto* octets = static_cast<volatile unsigned char*>(block);
  for (std::size_t i = 0; i < bytes; i += 4096) octets[i] = 1;
  asm volatile("" : : "g"(block) : "memory");
}

// Whether a 1 MiB buffer allocated after an 8 MiB one was freed gets its own
// mapping. Untuned, freeing the mapped 8 MiB block raises glibc's threshold
// to 8 MiB, and the 1 MiB buffer would come from the heap and stay there.
bool large_buffer_mapped_after_a_larger_one_is_freed() {
  void* larger = std::malloc(std::size_t{8} << 20);
  if (larger == nullptr) return false;
  touch(larger, std::size_t{8} << 20);
  std::free(larger);
  const std::uint64_t mapped_before = heap_figures().mapped_bytes;
  void* buffer = std::malloc(std::size_t{1} << 20);
  if (buffer == nullptr) return false;
  touch(buffer, std::size_t{1} << 20);
  const std::uint64_t mapped_after = heap_figures().mapped_bytes;
  std::free(buffer);
  return mapped_after >= mapped_before + (std::uint64_t{1} << 20);
}

// In a fresh process (the "threadsafe" death-test style runs the test again
// from main), so that no earlier test has moved the heap's thresholds.
TEST(TuneHeapDeathTest, KeepsLargeBuffersInTheirOwnMapping) {
  if (kSanitized) GTEST_SKIP() << "the sanitizer's allocator has no glibc heap";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        tune_heap();
        std::_Exit(large_buffer_mapped_after_a_larger_one_is_freed() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  // What the tuning changes: untuned, the same steps keep the buffer in the heap.
  EXPECT_EXIT(std::_Exit(large_buffer_mapped_after_a_larger_one_is_freed() ? 0 : 1),
              ::testing::ExitedWithCode(1), "");
}

TEST(ReleaseFreeHeap, GivesBackFreePagesBelowALiveBlock) {
  if (kSanitized) GTEST_SKIP() << "the sanitizer's allocator has no glibc heap";
  tune_heap();
  // 16 MiB of small blocks, then one kept past them: freeing the small ones
  // leaves free pages the top-of-heap trim cannot reach.
  std::vector<void*> blocks;
  for (int i = 0; i < 16 * 1024; ++i) {
    blocks.push_back(std::malloc(1000));
    touch(blocks.back(), 1000);
  }
  void* kept = std::malloc(1000);
  touch(kept, 1000);
  for (void* block : blocks) std::free(block);
  EXPECT_GE(heap_figures().free_bytes, std::uint64_t{15} << 20);
  EXPECT_TRUE(release_free_heap());
  std::free(kept);
}

}  // namespace
}  // namespace rw::io

namespace rw::io {
namespace {

HeapFigures in_use(std::uint64_t mib) { return HeapFigures{.in_use_bytes = mib << 20}; }
Instant at_s(std::int64_t s) { return Instant{} + Duration::seconds(s); }

// A burst raises the memory in use and falls back: one trim once it has
// fallen 8 MiB below the peak, whatever the load does after; none while it
// climbs or holds, none more often than the interval.
TEST(HeapTrimPolicy, TrimsOnceTheMemoryInUseFellFromItsPeak) {
  HeapTrimPolicy policy(std::uint64_t{8} << 20, Duration::seconds(10));
  EXPECT_FALSE(policy.on_sample(at_s(0), in_use(20)));
  EXPECT_FALSE(policy.on_sample(at_s(1), in_use(60)));   // climbing
  EXPECT_FALSE(policy.on_sample(at_s(2), in_use(60)));   // holding
  EXPECT_FALSE(policy.on_sample(at_s(3), in_use(53)));   // 7 MiB below: not yet
  EXPECT_TRUE(policy.on_sample(at_s(4), in_use(52)));    // 8 MiB below the peak
  EXPECT_FALSE(policy.on_sample(at_s(5), in_use(30)));   // within the interval
  EXPECT_TRUE(policy.on_sample(at_s(14), in_use(30)));   // 22 below the peak of 52, interval over
  EXPECT_FALSE(policy.on_sample(at_s(30), in_use(30)));  // nothing fell since
  EXPECT_FALSE(policy.on_sample(at_s(40), in_use(25)));  // 5 below
}

// A slow sample (mallinfo2 over a fragmented heap) spaces the next ones so
// that sampling keeps to 0.1 % of a core, between 1 s and the 10-s trim
// interval.
TEST(HeapSampleInterval, KeepsSamplingToATenthOfAPercent) {
  EXPECT_EQ(heap_sample_interval(Duration::microseconds(50)), Duration::seconds(1));
  EXPECT_EQ(heap_sample_interval(Duration::milliseconds(1)), Duration::seconds(1));
  EXPECT_EQ(heap_sample_interval(Duration::milliseconds(3)), Duration::seconds(3));
  EXPECT_EQ(heap_sample_interval(Duration::milliseconds(7)), Duration::seconds(7));
  EXPECT_EQ(heap_sample_interval(Duration::milliseconds(12)), Duration::seconds(10));
  EXPECT_EQ(heap_sample_interval(Duration::seconds(2)), Duration::seconds(10));
}

}  // namespace
}  // namespace rw::io
