// RW_ASSERT: checks an invariant and stays on in release builds. A broken
// invariant crashes the process rather than corrupting state (docs/style.md §5).
// Never use it on untrusted input: that is what Result is for.
#pragma once

namespace rw {

[[noreturn]] void assert_fail(const char* file, int line, const char* expression);

}  // namespace rw

#define RW_ASSERT(condition)                             \
  do {                                                   \
    if (!(condition)) [[unlikely]] {                     \
      ::rw::assert_fail(__FILE__, __LINE__, #condition); \
    }                                                    \
  } while (false)
