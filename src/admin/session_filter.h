// Filters of a member's live sessions (docs/admin_api.md "/sessions"): the
// query of GET /sessions?user=..&nas=..&mac=..&ip=..&session=.., the flags of
// `radiusward ctl sessions`, and the match of one session. The member applies
// them before it serialises a session; ctl applies them again to what it
// receives. Pure: no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace rw::admin {

// Every field given must match; an empty filter matches every session.
struct SessionFilter {
  std::optional<std::string> user{};  // User-Name, exactly.
  std::optional<std::string> nas{};   // NAS-IP(v6)-Address as an address, NAS-Identifier or client name.
  std::optional<std::string> mac{};   // Calling-Station-Id as a MAC address, canonical "aa:bb:cc:dd:ee:ff".
  std::optional<std::string> ip{};    // Framed-IP(v6)-Address as an address.
  std::optional<std::string> session{};  // Acct-Session-Id, or Acct-Unique-Session-Id (any case).

  [[nodiscard]] bool empty() const { return !user && !nas && !mac && !ip && !session; }
};

// The filter of `ctl sessions --user --nas --mac --ip --session`, checked and
// normalised. Errors are sentences naming the filter: an empty value, a MAC address in none of the
// notations auth::parse_mac reads, an `ip` that is no IPv4 or IPv6 address.
[[nodiscard]] Result<SessionFilter, std::string> make_session_filter(SessionFilter given);

// Parses the query of GET /sessions ("user=alice&mac=AA-BB-CC-DD-EE-FF",
// percent-encoded, '+' taken literally). Errors, as sentences for a 400
// answer: an unknown or repeated key, a bad percent escape, and those of
// make_session_filter.
[[nodiscard]] Result<SessionFilter, std::string> parse_session_query(std::string_view query);

// The query string for `filter`: "" when it is empty, else "?key=value&..."
// with every byte outside RFC 3986's unreserved set percent-encoded.
[[nodiscard]] std::string session_query(const SessionFilter& filter);

// One session as the filter sees it: texts as /sessions shows them, empty
// when the session has none.
struct SessionFields {
  std::string_view user_name{};
  std::string_view nas_address{};  // NAS-IP-Address or NAS-IPv6-Address
  std::string_view nas_identifier{};
  std::string_view client{};
  std::string_view calling_station_id{};
  std::string_view framed_address{};  // Framed-IP-Address or Framed-IPv6-Address
  std::string_view acct_session_id{};
  std::string_view unique_session_id{};
};

// Requires: `filter` came from make_session_filter or parse_session_query.
[[nodiscard]] bool matches(const SessionFilter& filter, const SessionFields& session);

}  // namespace rw::admin
