// QuietLog (quiet_log.h).
#include "consensus/quiet_log.h"

namespace rw::consensus {

bool QuietLog::on_turn(Instant now, std::uint64_t last_applied) {
  if (!moved_at_ || last_applied != last_applied_) {
    last_applied_ = last_applied;
    moved_at_ = now;
    reported_ = false;
    return false;
  }
  if (reported_ || quiet_after_.ns <= 0 || now - *moved_at_ < quiet_after_) return false;
  reported_ = true;
  return true;
}

}  // namespace rw::consensus
