// member_memory_budget (member_budget.h).
#include "config/member_budget.h"

#include <algorithm>

#include "config/member_config.h"

namespace rw::config {
namespace {

// Ledger snapshot bytes per held record besides its encoding (index and
// length), per window key, and the header with the trailer
// (Ledger::snapshot_size_bound).
constexpr std::uint64_t kSnapshotHeldRecordBytes = 10;
constexpr std::uint64_t kSnapshotWindowKeyBytes = 32;
constexpr std::uint64_t kSnapshotFixedBytes = 160;

}  // namespace

MemoryBudget member_memory_budget(const MemberConfig& config) {
  const MemberConfig::Ledger& ledger = config.ledger;
  const std::uint64_t held_records = ledger.held_records_max;
  const std::uint64_t held_bytes = ledger.held_bytes_max;
  const std::uint64_t sessions_bytes = ledger.sessions_bytes_max;
  // The most sessions the two bounds let in: the byte bound counts encoded
  // sessions, whose texts may be nearly empty.
  const std::uint64_t sessions =
      std::min<std::uint64_t>(ledger.sessions_max, sessions_bytes / kSessionEncodedMinBytes);
  const std::uint64_t snapshot = kSnapshotFixedBytes + held_bytes + held_records * kSnapshotHeldRecordBytes +
                                 kWindowKeysMax * kSnapshotWindowKeyBytes +
                                 std::min(sessions_bytes, sessions * 4096);
  MemoryBudget budget;
  budget.items = {
      {.what = "process", .keys = "-", .bytes = kMemberProcessBytes},
      {.what = "held records",
       .keys = "ledger.held_records_max, ledger.held_bytes_max",
       .bytes = held_bytes + held_records * kHeldRecordOverheadBytes},
      {.what = "de-duplication window", .keys = "-", .bytes = kWindowKeysMax * kWindowKeyBytes},
      {.what = "sessions",
       .keys = "ledger.sessions_max, ledger.sessions_bytes_max",
       .bytes = sessions * kSessionMemoryBytes + std::min(sessions_bytes, sessions * 4096)},
      // The bound follows a snapshot larger than raft.log_bytes_max
      // (docs/consensus.md "Log held in memory").
      {.what = "raft log",
       .keys = "raft.log_bytes_max, ledger.*",
       .bytes =
           config.raft.log_bytes_max == 0 ? 0 : std::max<std::uint64_t>(config.raft.log_bytes_max, snapshot)},
      // Kept between snapshots at 1.25 times the largest (docs/consensus.md trap 8).
      {.what = "snapshot buffer", .keys = "ledger.*", .bytes = snapshot + snapshot / 4},
      {.what = "gateway connections",
       .keys = "submission_connections_max",
       .bytes = std::uint64_t{config.submission_connections_max} * kConnectionBytes},
  };
  budget.log_unbounded = config.raft.log_bytes_max == 0;
  for (const BudgetItem& item : budget.items) budget.total_bytes += item.bytes;
  return budget;
}

}  // namespace rw::config
