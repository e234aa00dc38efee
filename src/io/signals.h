// Process signals as events for the main thread: SIGTERM and SIGINT stop the
// process cleanly, SIGHUP is reserved for reloading users and clients
// (docs/operations.md). Signals are blocked in every thread and taken with
// sigwaitinfo, so no code runs in a signal handler.
#pragma once

#include <optional>
#include <string_view>

#include "base/result.h"
#include "base/time.h"
#include "io/system_error.h"

namespace rw::io {

// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread. Call it before
// starting any thread: threads inherit the mask, so the signals stay pending
// until wait_for_stop_signal() takes them.
[[nodiscard]] Result<void, SystemError> block_process_signals();

// Waits until SIGTERM or SIGINT arrives and returns its name ("SIGTERM").
// SIGHUP is logged as "reload not supported yet" and waiting goes on.
// Requires: block_process_signals() was called.
[[nodiscard]] std::string_view wait_for_stop_signal();

// As wait_for_stop_signal(), but gives up after `timeout`: no value then.
// For a main thread that also watches something else (a member's node).
[[nodiscard]] std::optional<std::string_view> wait_for_stop_signal(Duration timeout);

}  // namespace rw::io
