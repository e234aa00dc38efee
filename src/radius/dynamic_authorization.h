// Dynamic Authorization (RFC 5176) as the server side sends it: the
// Disconnect-Request or CoA-Request that names one session to its NAS, and the
// check of the NAS's ACK or NAK. Pure; the UDP exchange and retransmission are
// in src/app (docs/operations.md "Disconnect and CoA").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "radius/authenticator.h"
#include "radius/dictionary.h"
#include "radius/packet.h"

namespace rw::radius {

enum class DynamicKind : std::uint8_t {
  kDisconnect,  // Disconnect-Request (40), answered by Disconnect-ACK (41) or -NAK (42)
  kCoa,         // CoA-Request (43), answered by CoA-ACK (44) or CoA-NAK (45)
};

[[nodiscard]] Code request_code(DynamicKind kind);
// "disconnect" or "coa".
[[nodiscard]] std::string_view to_string(DynamicKind kind);

// What the request identifies the NAS and the session by (RFC 5176 §3): each
// one present goes in, in this order. Empty means absent.
struct SessionIdentity {
  std::vector<std::uint8_t> nas_address;         // NAS-IP-Address (4) or NAS-IPv6-Address (16)
  std::string nas_identifier;                    // NAS-Identifier
  std::string user_name;                         // User-Name
  std::string acct_session_id;                   // Acct-Session-Id
  std::string calling_station_id;                // Calling-Station-Id
  std::vector<std::uint8_t> framed_ip_address;   // Framed-IP-Address (4)
  std::vector<std::uint8_t> framed_ipv6_prefix;  // Framed-IPv6-Prefix's value
};

// One attribute a CoA-Request asks the NAS to apply, as `Name=Value` named it.
struct ChangeAttribute {
  std::uint32_t vendor = 0;  // 0: a standard attribute; else a 1,1-format Vendor-Specific one
  std::uint8_t type = 0;
  std::vector<std::uint8_t> value;
};

// Parses `Name=Value` ("Session-Timeout=60", "Filter-Id=guest") with the
// dictionary. Errors, as sentences: no '=', an unknown name, a value the
// type refuses, an attribute that cannot go in a CoA-Request as given
// (server-side, encrypted, tagged, a vendor format other than 1,1, or an
// identifying or protocol attribute the request sets itself).
[[nodiscard]] Result<ChangeAttribute, std::string> parse_change_attribute(const Dictionary& dictionary,
                                                                          std::string_view text);

// Writes a signed request into `buffer`: Message-Authenticator first
// (RFC 5176 §3.3 allows it; the NAS can refuse a forged request by it even
// where it checks nothing else), the identity, then for kCoa the changes;
// then the Request Authenticator (RFC 5176 §2.3, as RFC 2866 §3). Returns
// the packet's length. `changes` must be empty for kDisconnect.
[[nodiscard]] Result<std::size_t, BuildError> build_dynamic_request(MutableBytes buffer, DynamicKind kind,
                                                                    std::uint8_t identifier,
                                                                    const SessionIdentity& session,
                                                                    std::span<const ChangeAttribute> changes,
                                                                    const SharedSecret& secret);

// Why a datagram is no valid answer to the request.
enum class ReplyError : std::uint8_t {
  kMalformed,                // not a well-formed RADIUS packet
  kWrongCode,                // not the ACK or NAK of the request's kind
  kWrongIdentifier,          // answers another request
  kBadAuthenticator,         // Response Authenticator wrong: another secret, or forged
  kBadMessageAuthenticator,  // a Message-Authenticator that does not verify
};

[[nodiscard]] std::string_view to_string(ReplyError error);

struct DynamicReply {
  bool acknowledged = false;                 // ACK, else NAK
  std::optional<std::uint32_t> error_cause;  // Error-Cause (RFC 5176 §3.5), if it has one
};

// Checks `datagram` against `request` (the signed bytes sent) and reads it.
[[nodiscard]] Result<DynamicReply, ReplyError> read_dynamic_reply(Bytes datagram, DynamicKind kind,
                                                                  Bytes request, const SharedSecret& secret);

// "ACK", "NAK", or with the Error-Cause named by the dictionary
// "NAK Error-Cause=Session-Context-Not-Found(503)" (its number alone when unnamed).
[[nodiscard]] std::string describe(const DynamicReply& reply, const Dictionary& dictionary);

}  // namespace rw::radius
