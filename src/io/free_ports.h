// Free TCP ports on loopback, for configs generated before the processes
// that listen on them start (`radiusward dev`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "base/result.h"
#include "io/system_error.h"

namespace rw::io {

// Returns `count` distinct TCP ports that 127.0.0.1 could bind right now:
// each is bound (and held until all are found, so they differ), then
// released. Without `base` the kernel chooses them (from its ephemeral range);
// with it, the first free ports from `base` upwards are taken. Another
// process may take a port between this call and its use: the caller's
// process then fails to bind and says so.
[[nodiscard]] Result<std::vector<std::uint16_t>, SystemError> free_tcp_ports(
    std::size_t count, std::optional<std::uint16_t> base);

}  // namespace rw::io
