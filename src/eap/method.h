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

#include "auth/auth_error.h"
#include "base/bytes.h"

namespace rw::auth {
struct Credential;
}  // namespace rw::auth

namespace rw::eap {

struct PeerCertificate;  // tls_session.h

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
    // The method needs the known good password of decided_identity() to go
    // on (EAP-MD5): the conversation looks it up in the users policy, as PAP
    // and CHAP get theirs (which may take an SQL round trip), and calls
    // on_credential() with it. Until then the method is not called again: a
    // retransmitted response only asks for the password again.
    kCredential,
  };
  Kind kind = Kind::kFailure;
  std::vector<std::uint8_t> type_data;  // kRequest: the Type-Data of the next EAP-Request.
  std::optional<Msk> msk;               // kSuccess of a key-deriving method.
  std::string reason;                   // kFailure: why, for the decision log (no secrets).
  // kFailure of a password check (EAP-MD5): which, so that the gateway
  // counts it under the name PAP and CHAP use (wrong_password, ...).
  std::optional<auth::AuthError> auth_error;
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

  // The Identifier the conversation gave the EAP-Request that start() or
  // on_response() just asked for (RFC 3748 §4.1). A method whose proof
  // covers it keeps it (EAP-MD5 hashes it, RFC 3748 §5.4); others ignore it.
  virtual void on_identifier(std::uint8_t /*identifier*/) {}
  // Answers a kCredential step: the known good password of
  // decided_identity(), or null when the users policy gives none the
  // gateway can use. Returns kSuccess or kFailure (or kRequest for a method
  // that goes on). A method that never asks fails.
  [[nodiscard]] virtual MethodStep on_credential(const auth::Credential* /*known_good*/);
  // The client certificate the method verified (EAP-TLS, after success),
  // for the authorization policy; null for the others.
  [[nodiscard]] virtual const PeerCertificate* verified_certificate() const { return nullptr; }
};

// Shorthands for the steps a method returns.
[[nodiscard]] MethodStep request_step(std::vector<std::uint8_t> type_data);
[[nodiscard]] MethodStep credential_step();
[[nodiscard]] MethodStep success_step(std::optional<Msk> msk = std::nullopt);
[[nodiscard]] MethodStep failure_step(std::string reason,
                                      std::optional<auth::AuthError> error = std::nullopt);

}  // namespace rw::eap
