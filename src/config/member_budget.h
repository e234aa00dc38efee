// The memory a member needs at its configured bounds: what each bound costs
// resident when it is full, added up (docs/limits.md "Member memory
// budget"). Pure arithmetic on a MemberConfig; `memory_budget_mib` refuses a
// config whose bounds need more (member_config.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace rw::config {

struct MemberConfig;

// Costs per unit, from the structures' sizes and measurements on the 2-core
// development machine (docs/limits.md "Member memory budget" gives each).
inline constexpr std::uint64_t kMemberProcessBytes = std::uint64_t{26} << 20;  // idle member RSS
// The key set's node and bucket (reserved at start, Ledger::reserve_key_index) are in both.
inline constexpr std::uint64_t kHeldRecordOverheadBytes = 176;  // deque slot, block header, key set node
inline constexpr std::uint64_t kWindowKeyBytes = 96;            // window slot and key set node
// LedgerLimits::exported_keys_max (not configurable; member_shell's
// ledger_state_test checks the two agree).
inline constexpr std::uint64_t kWindowKeysMax = 128'000;
// A session in memory besides its texts: map node, its slot in the hashed
// session index (node and bucket), its place in its NAS's list, the expiry
// node, the per-user count, two address vectors. The hashed index added 32
// bytes per session to the 640 of the trees it replaced; measured 874 bytes
// per session with broadband-length texts (docs/accounting.md "Cost against
// the session table").
inline constexpr std::uint64_t kSessionMemoryBytes = 672;
// The smallest encoded session (LedgerLimits::sessions_bytes_max counts
// encoded bytes): the fixed fields of a snapshot's session with empty texts.
inline constexpr std::uint64_t kSessionEncodedMinBytes = 92;
// A gateway connection: its frame reader (one maximal frame, 1 MiB + 4) and
// the TLS stream's buffers.
inline constexpr std::uint64_t kConnectionBytes = (std::uint64_t{1} << 20) + (std::uint64_t{128} << 10);

// One line of the budget.
struct BudgetItem {
  std::string_view what;  // "sessions", ...
  std::string_view keys;  // the config keys it follows
  std::uint64_t bytes = 0;
};

struct MemoryBudget {
  std::vector<BudgetItem> items;
  std::uint64_t total_bytes = 0;
  // raft.log_bytes_max is 0: the log is bounded in entries only, and the
  // total leaves it out.
  bool log_unbounded = false;
};

// The budget of `config`'s bounds, each full at once.
[[nodiscard]] MemoryBudget member_memory_budget(const MemberConfig& config);

}  // namespace rw::config
