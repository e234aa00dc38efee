#include "submission/link_warning.h"

#include <fmt/format.h>

namespace rw::submission {

std::optional<std::string> link_warning(const ForwarderCounters& last_warned, const ForwarderStatus& now) {
  const std::uint64_t submits = now.counters.submit_timeouts - last_warned.submit_timeouts;
  const std::uint64_t connects = now.counters.connect_timeouts - last_warned.connect_timeouts;
  const std::uint64_t commits = now.counters.commit_timeouts - last_warned.commit_timeouts;
  // Once ready again the link has recovered: the timeouts were the way back.
  if ((submits != 0 || connects != 0) && now.state != LinkState::kReady) {
    return fmt::format(
        "submission: no leader reached: {} submit and {} connect timeout(s) since the last warning; "
        "{} record(s) wait for a commit and their NAS requests stay unanswered; next attempt {}",
        submits, connects, now.pending_records, now.address);
  }
  // A member that answers Pings but never a Submit is a fault of its own,
  // whatever the link's state now (docs/accounting.md "A slow leader is not a
  // dead one").
  if (commits != 0) {
    return fmt::format(
        "submission: {} Submit(s) unanswered for the commit timeout by a member that answered Pings "
        "since the last warning; their records were submitted again; {} record(s) wait for a commit; "
        "connection {} ({})",
        commits, now.pending_records, now.address, to_string(now.state));
  }
  return std::nullopt;
}

}  // namespace rw::submission
