// Tests of the OpenSSL-backed RandomSource.
#include "io/csprng.h"

#include <gtest/gtest.h>

#include <array>
#include <set>
#include <vector>

namespace rw::io {
namespace {

TEST(Csprng, FillsRequestsAcrossBufferRefills) {
  Csprng random;
  std::set<std::array<std::uint8_t, 16>> seen;
  // 100 × 16 bytes spans several 256-byte refills; 16 random bytes never repeat.
  for (int i = 0; i < 100; ++i) {
    std::array<std::uint8_t, 16> authenticator{};
    random.fill(authenticator);
    EXPECT_TRUE(seen.insert(authenticator).second);
  }
}

TEST(Csprng, FillsRequestsLargerThanItsBuffer) {
  Csprng random;
  std::vector<std::uint8_t> key(4096, 0);
  random.fill(key);
  std::size_t zeros = 0;
  for (std::uint8_t byte : key) zeros += byte == 0 ? 1 : 0;
  // Expected 16 of 4096; all-zero output would mean nothing was written.
  EXPECT_LT(zeros, 100u);
}

TEST(Csprng, AcceptsEmptyRequests) {
  Csprng random;
  random.fill(MutableBytes());
}

TEST(Csprng, GivesEachThreadItsOwnInstance) {
  Csprng* main_instance = &thread_csprng();
  Csprng* other_instance = nullptr;
  std::thread([&] { other_instance = &thread_csprng(); }).join();
  EXPECT_NE(main_instance, other_instance);
  EXPECT_EQ(main_instance, &thread_csprng());
}

}  // namespace
}  // namespace rw::io
