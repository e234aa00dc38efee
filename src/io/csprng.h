// Csprng: the RandomSource of production, OpenSSL's RAND_bytes behind a small
// per-thread buffer so that a 16-byte Request Authenticator or State does not
// cost a call into OpenSSL each time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "base/random.h"

namespace rw::io {

// Not thread-safe: one instance per thread (thread_csprng() gives one).
// Bytes handed out are wiped from the buffer. Aborts the process if
// RAND_bytes fails, because weak randomness is worse than a crash.
class Csprng final : public RandomSource {
 public:
  Csprng() = default;
  Csprng(const Csprng&) = delete;
  Csprng& operator=(const Csprng&) = delete;
  ~Csprng() override;

  void fill(MutableBytes out) override;

 private:
  void refill();

  static constexpr std::size_t kBufferBytes = 256;
  std::array<std::uint8_t, kBufferBytes> buffer_{};
  std::size_t available_ = 0;  // Unused bytes at the end of buffer_.
};

// The calling thread's Csprng.
[[nodiscard]] Csprng& thread_csprng();

// A RandomSource that any thread may use: each call goes to the calling
// thread's Csprng. For objects built on one thread and used on workers.
class ThreadLocalCsprng final : public RandomSource {
 public:
  void fill(MutableBytes out) override { thread_csprng().fill(out); }
};

}  // namespace rw::io
