// Randomness as a port: pure code asks a RandomSource for bytes and never
// opens /dev/urandom itself. The shell supplies a CSPRNG (io/csprng.h); tests
// and the simulator supply SeededRandom so that any run can be replayed.
#pragma once

#include <cstdint>

#include "base/bytes.h"

namespace rw {

class RandomSource {
 public:
  virtual ~RandomSource() = default;
  // Fills `out` with random bytes. Never fails: a source that cannot deliver
  // aborts, because silently weak randomness is worse than a crash.
  virtual void fill(MutableBytes out) = 0;
};

// splitmix64's finaliser: a bijective mix of 64 bits (xor-shifts and odd
// multipliers), every input bit reaching every output bit. Also what the
// ledger's seeded hash mixes each word with (accounting/ledger.cc).
[[nodiscard]] std::uint64_t mix64(std::uint64_t x);

// Deterministic xoshiro256** seeded by splitmix64. Not for secrets: for tests
// and simulation only.
class SeededRandom final : public RandomSource {
 public:
  explicit SeededRandom(std::uint64_t seed);
  void fill(MutableBytes out) override;
  std::uint64_t next_u64();
  // A value in [0, bound); bound must be > 0.
  std::uint64_t below(std::uint64_t bound);

 private:
  std::uint64_t state_[4];
};

}  // namespace rw
