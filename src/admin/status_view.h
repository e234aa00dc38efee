// `radiusward ctl status` for people (docs/admin_api.md "radiusward ctl"):
// a gateway's or member's /status body as an aligned table, and the verdict
// on its health that the exit status reports, so that `ctl status` serves as
// a probe. Pure: the body in, text and verdict out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace rw::admin {

// Why a process is unhealthy (docs/admin_api.md "Health"); none: healthy.
struct Health {
  std::vector<std::string> problems{};
  // True when every problem may clear by itself within an election or a
  // reconnection (no leader known, a leader not ready yet, a gateway not
  // connected): ctl asks again for a grace period before it says unhealthy.
  bool transient = false;

  [[nodiscard]] bool healthy() const { return problems.empty(); }
};

struct StatusView {
  std::string table{};  // Ends with the health line and '\n'.
  Health health{};
};

// Reads a /status body. Errors, as sentences: the body is not a JSON object,
// has no "role" of "gateway" or "member", or lacks a field the verdict needs
// (a member's "raft_role", a gateway's "submission" object or null with its
// "state").
[[nodiscard]] Result<StatusView, std::string> view_status(std::string_view body);

}  // namespace rw::admin
