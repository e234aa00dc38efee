// Exit statuses of every radiusward command (docs/operations.md).
#pragma once

namespace rw::app {

inline constexpr int kExitOk = 0;
// A runtime failure: a port in use, a thread that could not start, or a fatal
// error of the environment after start.
inline constexpr int kExitRuntimeFailure = 1;
// The configuration or the command line is wrong; nothing was started.
inline constexpr int kExitConfigError = 2;

}  // namespace rw::app
