// The member's admin API bodies (docs/admin_api.md): /status, /sessions,
// /records as JSON text, and the bodies of the membership POSTs. Pure
// formatting and parsing; the routes and threads are wired in src/app.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "accounting/ledger.h"
#include "admin/session_filter.h"
#include "base/result.h"
#include "consensus/node.h"
#include "member_shell/export_loop.h"
#include "member_shell/ledger_state.h"
#include "member_shell/submission_session.h"
#include "radius/dictionary.h"

namespace rw::member_shell {

// The body of GET /status: raft role, leader, term, indexes, pending
// submissions and ledger figures, and the exporter's state when `exporter`
// is given. `book` gives the leader's submission address.
[[nodiscard]] std::string status_json(std::uint64_t member_id, const consensus::NodeStatus& status,
                                      const LedgerFigures& figures, std::uint64_t pending_submissions,
                                      const SubmissionAddressBook& book,
                                      const ExportStatus* exporter = nullptr);

// One element of the /sessions array, as a JSON object.
[[nodiscard]] std::string session_json(const accounting::Session& session);

// Whether `session` passes GET /sessions?... 's filter (docs/admin_api.md
// "/sessions"), on the texts session_json shows: `mac` against
// Calling-Station-Id, `ip` against Framed-IP-Address.
[[nodiscard]] bool session_matches(const admin::SessionFilter& filter, const accounting::Session& session);

// One line of /records (newline-delimited JSON, '\n' included): index, key
// and the attributes by dictionary name; integers as numbers, repeated
// attributes as arrays.
[[nodiscard]] std::string record_line(const accounting::HeldRecord& held,
                                      const radius::Dictionary& dictionary);

// A membership change asked through POST /members/{add,remove,replace}.
struct MemberChange {
  std::uint64_t id = 0;
  std::string raft{};  // "IPv4:port"; empty for remove.
};

// Parses {"id": N} (remove) or {"id": N, "raft": "IPv4:port"} (add,
// replace). Errors are sentences for a 400 answer.
[[nodiscard]] Result<MemberChange, std::string> parse_member_change(std::string_view body, bool needs_raft);

}  // namespace rw::member_shell
