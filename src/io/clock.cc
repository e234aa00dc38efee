// CLOCK_MONOTONIC to Instant; CLOCK_REALTIME to Unix milliseconds.
#include "io/clock.h"

#include <time.h>

#include "base/assert.h"

namespace rw::io {

Instant monotonic_now() {
  timespec now{};
  // Cannot fail with a valid clock id and pointer; a failure is a broken system.
  RW_ASSERT(clock_gettime(CLOCK_MONOTONIC, &now) == 0);
  return Instant{static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec};
}

std::int64_t unix_now_ms() {
  timespec now{};
  RW_ASSERT(clock_gettime(CLOCK_REALTIME, &now) == 0);
  return static_cast<std::int64_t>(now.tv_sec) * 1000 + now.tv_nsec / 1'000'000;
}

}  // namespace rw::io
