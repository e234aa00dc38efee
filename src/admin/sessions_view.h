// `radiusward ctl sessions` for people (docs/admin_api.md "radiusward
// ctl"): a member's /sessions body as a table, one session a line, filtered
// again on this side so that the table is right whatever the member did
// with the query. Pure.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "admin/session_filter.h"
#include "base/result.h"

namespace rw::admin {

struct SessionsView {
  std::string table{};  // Header, one line per session, then "N sessions".
  std::size_t shown = 0;
};

// Errors, as sentences: the body is not a JSON object with a "sessions"
// array, or an element of it is not an object. A field of an unexpected type
// is shown as its JSON text and matches no filter.
[[nodiscard]] Result<SessionsView, std::string> view_sessions(std::string_view body,
                                                              const SessionFilter& filter);

}  // namespace rw::admin
