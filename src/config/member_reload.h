// Which changes of a member config a reload cannot apply (docs/operations.md
// "Reload"). A member reloads its export: section and its dictionary; every
// other key shapes the raft node, the ledger, sockets or the log, which live
// as long as the process. A reload that changes one is rejected whole, with
// the key's position, rather than applied in part. Pure.
#pragma once

#include "config/member_config.h"

namespace rw::config {

// The top-level keys a member reload applies: `export` and `dictionary_dir`.
[[nodiscard]] bool is_member_reloadable_key(std::string_view key);

// One error per top-level key, other than the reloadable ones, whose value
// differs between `running` and `next`. Each points at the key in `next` (at
// the file when the key was removed) and says "needs a restart". Positions
// alone never count as changes.
[[nodiscard]] ConfigErrors member_restart_changes(const MemberConfig& running, const MemberConfig& next);

}  // namespace rw::config
