// SystemError formatting and the fatal path.
#include "io/system_error.h"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace rw::io {

std::string SystemError::to_string() const { return call + ": " + std::strerror(error_number); }

SystemError last_system_error(std::string call) { return SystemError{std::move(call), errno}; }

void die(const SystemError& error) {
  spdlog::critical("fatal: {}", error.to_string());
  spdlog::shutdown();
  // _Exit rather than exit: other threads are still running, and static
  // destructors must not race with them.
  std::_Exit(1);
}

}  // namespace rw::io
