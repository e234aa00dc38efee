// Synchronous signal handling with sigwaitinfo.
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

std::string_view wait_for_stop_signal() {
  const sigset_t set = process_signals();
  for (;;) {
    const int signal = sigwaitinfo(&set, nullptr);
    if (signal < 0) {
      if (errno == EINTR) continue;
      die(last_system_error("sigwaitinfo"));
    }
    if (signal == SIGHUP) {
      spdlog::warn("SIGHUP received: reload not supported yet; restart to apply changes");
      continue;
    }
    return signal == SIGTERM ? "SIGTERM" : "SIGINT";
  }
}

}  // namespace rw::io
