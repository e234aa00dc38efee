// Process signals as events for the main thread: SIGTERM and SIGINT stop the
// process cleanly, SIGHUP asks it to reload its configuration
// (docs/operations.md "Reload"). Signals are blocked in every thread and
// taken with sigwaitinfo, so no code runs in a signal handler.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/result.h"
#include "base/time.h"
#include "io/system_error.h"

namespace rw::io {

// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread. Call it before
// starting any thread: threads inherit the mask, so the signals stay pending
// until the main thread takes them.
[[nodiscard]] Result<void, SystemError> block_process_signals();

// What a signal asks of the process.
enum class SignalRequest : std::uint8_t { kStop, kReload };

struct SignalEvent {
  SignalRequest request = SignalRequest::kStop;
  std::string_view name;  // "SIGTERM", "SIGINT", "SIGHUP".
};

// Waits up to `timeout` for SIGTERM, SIGINT or SIGHUP; no value when none
// came. Requires: block_process_signals() was called.
[[nodiscard]] std::optional<SignalEvent> wait_for_signal(Duration timeout);

// Waits until SIGTERM or SIGINT arrives and returns its name ("SIGTERM").
// For a process that has nothing to reload: SIGHUP is logged as ignored and
// waiting goes on. Requires: block_process_signals() was called.
[[nodiscard]] std::string_view wait_for_stop_signal();

// As wait_for_stop_signal(), but gives up after `timeout`: no value then.
[[nodiscard]] std::optional<std::string_view> wait_for_stop_signal(Duration timeout);

}  // namespace rw::io
