// Where `radiusward ctl disconnect` and `ctl coa` send (docs/operations.md
// "Disconnect and CoA"): each session of a member's /sessions answer that
// passes the filter, with the NAS address, port and secret its client entry
// gives and what the request names the session by. Pure: no I/O.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "admin/session_filter.h"
#include "base/result.h"
#include "config/clients_file.h"
#include "radius/dynamic_authorization.h"

namespace rw::admin {

struct DynamicTarget {
  std::string acct_session_id{};
  std::string user_name{};
  // The NAS's CoA address and port; `to` is the text "192.0.2.10:3799" or
  // "[2001:db8::1]:3799" ("-" when there is none).
  std::array<std::uint8_t, 16> address{};  // IPv4 in the first 4 bytes
  bool is_v6 = false;
  std::uint16_t port = 0;
  std::string to = "-";
  // The client entry the session's NAS is; nullptr when none fits, and then
  // `problem` says why (the session gets that line instead of a request).
  const config::ClientDef* client = nullptr;
  std::string problem{};
  radius::SessionIdentity identity{};
};

// The sessions of `sessions_body` (a /sessions answer) passing `filter`, in
// its order. The session's `client` names its client entry (the shortname).
// With one entry of that shortname it is that one; with several, the one
// whose addresses hold the session's NAS-IP-Address. The request goes to the
// entry's coa_server, else to the entry's address when it is one host, else
// to the session's NAS-IP-Address when the entry's addresses hold it.
// Errors, as sentences: the body is not a /sessions answer.
[[nodiscard]] Result<std::vector<DynamicTarget>, std::string> dynamic_targets(
    std::string_view sessions_body, const SessionFilter& filter, std::span<const config::ClientDef> clients);

// "session 0000001A user alice nas 192.0.2.10:3799": how a session's outcome
// line starts.
[[nodiscard]] std::string outcome_prefix(const DynamicTarget& target);

}  // namespace rw::admin
