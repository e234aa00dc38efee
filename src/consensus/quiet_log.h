// Tells the node when its log has gone quiet: no entry applied for a while.
// A quiet member gives back memory that only load needs (the snapshot
// buffer of trap 8, the heap's free pages; docs/limits.md "Member memory
// budget"). Pure: the node feeds it the time and its applied index.
#pragma once

#include <cstdint>
#include <optional>

#include "base/time.h"

namespace rw::consensus {

class QuietLog {
 public:
  // `quiet_after`: how long without a new applied entry counts as quiet.
  // Zero: never quiet.
  explicit QuietLog(Duration quiet_after) : quiet_after_(quiet_after) {}

  // Called on every loop turn with libraft's last applied index. True once
  // per quiet spell, on the first turn `quiet_after` past the latest change
  // of the index; the next change starts a new spell.
  [[nodiscard]] bool on_turn(Instant now, std::uint64_t last_applied);

 private:
  Duration quiet_after_;
  std::uint64_t last_applied_ = 0;
  // When the index last moved; absent before the first turn.
  std::optional<Instant> moved_at_{};
  bool reported_ = false;
};

}  // namespace rw::consensus
