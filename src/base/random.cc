// SeededRandom: xoshiro256** (Blackman and Vigna), seeded through splitmix64.
#include "base/random.h"

#include "base/assert.h"

namespace rw {
namespace {

std::uint64_t splitmix64(std::uint64_t& x) { return mix64(x += 0x9e3779b97f4a7c15ULL); }

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

std::uint64_t mix64(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

SeededRandom::SeededRandom(std::uint64_t seed) {
  for (auto& word : state_) word = splitmix64(seed);
}

std::uint64_t SeededRandom::next_u64() {
  const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const std::uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

std::uint64_t SeededRandom::below(std::uint64_t bound) {
  RW_ASSERT(bound > 0);
  return next_u64() % bound;
}

void SeededRandom::fill(MutableBytes out) {
  std::size_t i = 0;
  while (i < out.size()) {
    std::uint64_t word = next_u64();
    for (int b = 0; b < 8 && i < out.size(); ++b, ++i) {
      out[i] = static_cast<std::uint8_t>(word >> (8 * b));
    }
  }
}

}  // namespace rw
