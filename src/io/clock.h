// The monotonic clock: the only clock the shell reads for request handling.
// Pure code gets `now` from here as an Instant (docs/design.md invariant 4).
#pragma once

#include "base/time.h"

namespace rw::io {

// CLOCK_MONOTONIC as an Instant: never jumps with wall-clock changes.
[[nodiscard]] Instant monotonic_now();

// CLOCK_REALTIME in Unix milliseconds: only for timestamps that leave the
// process (the time an accounting record was received), never for timeouts.
[[nodiscard]] std::int64_t unix_now_ms();

}  // namespace rw::io
