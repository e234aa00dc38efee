// The slow path of RW_ASSERT.
#include "base/assert.h"

#include <cstdio>
#include <cstdlib>

namespace rw {

void assert_fail(const char* file, int line, const char* expression) {
  std::fprintf(stderr, "radiusward: assertion failed at %s:%d: %s\n", file, line, expression);
  std::fflush(stderr);
  std::abort();
}

}  // namespace rw
