// The seam between the EAP conversation (which owns EAP headers, Identifiers,
// negotiation and the State) and one EAP method (RFC 3748 §2, §5): a method
// sees only its own Type-Data, in and out. EAP-MD5 and the TLS-based methods
// (EAP-TLS, PEAP, EAP-TTLS) implement it. Pure: a method does no I/O and
// reads no clock.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"

namespace rw::eap {

// EAP Types (RFC 3748 §5, IANA "Method Types").
enum class Type : std::uint8_t {
  kIdentity = 1,
  kNotification = 2,
  kNak = 3,  // Legacy Nak, RFC 3748 §5.3.1.
  kMd5Challenge = 4,
  kTls = 13,       // RFC 5216, RFC 9190.
  kTtls = 21,      // RFC 5281.
  kPeap = 25,      // draft-josefsson-pppext-eap-tls-eap (PEAPv0).
  kMsChapV2 = 26,  // draft-kamath-pppext-eap-mschapv2, inside PEAP.
  kExpanded = 254,
};

// The Master Session Key a key-deriving method exports (RFC 3748 §7.10): 64
// octets; RFC 2548 MS-MPPE-Recv-Key is its first 32, MS-MPPE-Send-Key the
// next 32 (RFC 5216 §2.3).
using Msk = std::array<std::uint8_t, 64>;

// What a method says after it started or read a response.
struct MethodStep {
  enum class Kind : std::uint8_t {
    kRequest,  // Send an EAP-Request of the method's Type carrying `type_data`.
    kSuccess,  // Authenticated: send EAP-Success (and an Access-Accept).
    kFailure,  // Not authenticated: send EAP-Failure (and an Access-Reject).
  };
  Kind kind = Kind::kFailure;
  std::vector<std::uint8_t> type_data;  // kRequest: the Type-Data of the next EAP-Request.
  std::optional<Msk> msk;               // kSuccess of a key-deriving method.
  std::string reason;                   // kFailure: why, for the decision log (no secrets).
};

// One method's side of one conversation. Created by the conversation once
// the peer agreed to the method; destroyed with the conversation.
class Method {
 public:
  virtual ~Method() = default;

  [[nodiscard]] virtual Type type() const = 0;
  // The first EAP-Request of the method.
  [[nodiscard]] virtual MethodStep start() = 0;
  // The Type-Data of the peer's EAP-Response of this method's Type (the
  // octets after the Type octet; untrusted: bounds-checked here).
  [[nodiscard]] virtual MethodStep on_response(Bytes type_data) = 0;
  // The identity that decided (the inner identity of a tunnelled method,
  // else the EAP-Identity); empty until known.
  [[nodiscard]] virtual std::string_view decided_identity() const = 0;
};

}  // namespace rw::eap
