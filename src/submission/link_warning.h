// What a gateway says in its log when it cannot reach the leader: the
// Forwarder counts submit and connect timeouts but logs nothing, so without
// this a gateway cut off from the leader (while it still reaches followers)
// holds every NAS request unanswered in silence (docs/RELIABILITY.md,
// "Partitions", finding 1). Pure: counters in, text out.
#pragma once

#include <optional>
#include <string>

#include "submission/forwarder.h"

namespace rw::submission {

// A warning when `now` counts more submit or connect timeouts than
// `last_warned` (the counters at the previous warning, or zero), naming the
// timeouts since then, the next address tried and the records waiting for a
// commit, unless the link is ready again (the timeouts were the way back);
// else a warning when it counts more commit timeouts (a member that answered
// Pings but not a Submit), in any state; nullopt otherwise. The caller
// rate-limits.
[[nodiscard]] std::optional<std::string> link_warning(const ForwarderCounters& last_warned,
                                                      const ForwarderStatus& now);

}  // namespace rw::submission
