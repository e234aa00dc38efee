// Failures of the environment (socket, bind, thread creation, epoll): the
// call that failed and its errno, printed as "bind 0.0.0.0:1812: Address
// already in use". Before start they are returned; after start they are
// fatal (docs/style.md §5).
#pragma once

#include <string>

namespace rw::io {

struct SystemError {
  std::string call;  // The call and its argument, e.g. "bind 0.0.0.0:1812".
  int error_number = 0;

  // "call: strerror(error_number)".
  [[nodiscard]] std::string to_string() const;
};

// Builds a SystemError from the current errno.
[[nodiscard]] SystemError last_system_error(std::string call);

// Logs the error at critical level, flushes the logs and ends the process
// with exit status 1 (docs/operations.md). For failures after start, where
// there is nobody to return an error to.
[[noreturn]] void die(const SystemError& error);

}  // namespace rw::io
