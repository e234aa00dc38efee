// Restart delays with exponential backoff for crash loops.
#include "deployment/restart_backoff.h"

#include <algorithm>

namespace rw::deployment {

Duration RestartBackoff::on_exit(Instant started, Instant exited) {
  if (exited - started >= options_.stable_after) crashes_in_a_row_ = 0;
  ++crashes_in_a_row_;
  Duration wait = options_.delay;
  // Doubling stops at the bound, so it never overflows however long the loop.
  for (int i = 1; i < crashes_in_a_row_ && wait < options_.delay_max; ++i) wait = wait + wait;
  return std::min(wait, options_.delay_max);
}

}  // namespace rw::deployment
