// When to start a supervised process again after it exited: after a short
// delay, doubled for each crash in a row so that a crash loop does not spin,
// and back to the short delay once the process has stayed up for a while.
// Pure: the supervisor passes the instants in (src/dev_shell/process_supervisor.h).
#pragma once

#include "base/time.h"

namespace rw::deployment {

struct RestartOptions {
  // The delay after an exit that ended a stable run.
  Duration delay = Duration::seconds(1);
  // The largest delay a crash loop backs off to.
  Duration delay_max = Duration::seconds(30);
  // A run at least this long counts as stable: the next exit is a first crash.
  Duration stable_after = Duration::seconds(10);
};

// One supervised process's restart state.
class RestartBackoff {
 public:
  explicit RestartBackoff(const RestartOptions& options) : options_(options) {}

  // The process started at `started` exited at `exited`: returns how long to
  // wait before starting it again. Runs shorter than `stable_after` count as
  // crashes in a row; the n-th such crash waits delay·2^(n-1), at most
  // delay_max.
  [[nodiscard]] Duration on_exit(Instant started, Instant exited);

  // Exits in a row with runs shorter than `stable_after` (the last one
  // included); 1 after an exit that ended a stable run.
  [[nodiscard]] int crashes_in_a_row() const { return crashes_in_a_row_; }

 private:
  RestartOptions options_;
  int crashes_in_a_row_ = 0;
};

}  // namespace rw::deployment
