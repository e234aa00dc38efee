// Synchronous signal handling with sigtimedwait.
#include "io/signals.h"

#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <cerrno>

namespace rw::io {
namespace {

sigset_t process_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  return set;
}

}  // namespace

Result<void, SystemError> block_process_signals() {
  const sigset_t set = process_signals();
  const int error = pthread_sigmask(SIG_BLOCK, &set, nullptr);
  if (error != 0) return fail(SystemError{"pthread_sigmask", error});
  return {};
}

std::optional<SignalEvent> wait_for_signal(Duration timeout) {
  const sigset_t set = process_signals();
  const std::int64_t ms = timeout.to_ms();
  const timespec limit{.tv_sec = static_cast<time_t>(ms / 1000),
                       .tv_nsec = static_cast<long>(ms % 1000) * 1'000'000};
  for (;;) {
    const int signal = sigtimedwait(&set, nullptr, &limit);
    if (signal < 0) {
      if (errno == EAGAIN) return std::nullopt;
      if (errno == EINTR) continue;
      die(last_system_error("sigtimedwait"));
    }
    if (signal == SIGHUP) return SignalEvent{SignalRequest::kReload, "SIGHUP"};
    return SignalEvent{SignalRequest::kStop, signal == SIGTERM ? "SIGTERM" : "SIGINT"};
  }
}

std::string_view wait_for_stop_signal() {
  for (;;) {
    if (auto signal = wait_for_stop_signal(Duration::seconds(3600))) return *signal;
  }
}

std::optional<std::string_view> wait_for_stop_signal(Duration timeout) {
  for (;;) {
    std::optional<SignalEvent> event = wait_for_signal(timeout);
    if (!event) return std::nullopt;
    if (event->request == SignalRequest::kStop) return event->name;
    spdlog::warn("SIGHUP received: this process has nothing to reload; ignored");
  }
}

}  // namespace rw::io
