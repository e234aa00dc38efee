// The monotonic clock: the only clock the shell reads for request handling.
// Pure code gets `now` from here as an Instant (DESIGN.md invariant 4).
#pragma once

#include "base/time.h"

namespace rw::io {

// CLOCK_MONOTONIC as an Instant: never jumps with wall-clock changes.
[[nodiscard]] Instant monotonic_now();

}  // namespace rw::io
