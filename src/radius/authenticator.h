// The shared secret and the packet authenticators: Request and Response
// Authenticators (RFC 2865 §3, RFC 2866 §3, RFC 5176 §2.3) and the
// Message-Authenticator (RFC 3579 §3.2, RFC 5997 §3). Pure and allocation
// free; comparisons are constant time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "base/bytes.h"
#include "base/random.h"
#include "base/result.h"
#include "radius/md5.h"
#include "radius/packet.h"

namespace rw::radius {

// Longest shared secret accepted. RFC 2865 sets no limit; 256 octets is far
// beyond any real one and keeps SharedSecret a fixed-size value.
inline constexpr std::size_t kMaxSecretLength = 256;

enum class SecretError : std::uint8_t {
  kEmpty,    // RFC 2865 §3: a null shared secret is not allowed
  kTooLong,  // longer than kMaxSecretLength
};

std::string_view to_string(SecretError error);

// A RADIUS shared secret with its HMAC-MD5 key states and its MD5 prefix
// state precomputed, so the per-packet work is only the packet's own
// octets. Built once per client at configuration time; immutable and safe
// to share between threads afterwards.
class SharedSecret {
 public:
  [[nodiscard]] static Result<SharedSecret, SecretError> create(Bytes secret);

  [[nodiscard]] Bytes bytes() const { return Bytes(secret_.data(), length_); }
  // HMAC-MD5 keyed with the secret (RFC 3579 §3.2).
  [[nodiscard]] const HmacMd5Key& hmac() const { return hmac_; }
  // An MD5 computation that has already absorbed the secret: MD5(S + ...)
  // as used by User-Password and the salted encryptions.
  [[nodiscard]] Md5 md5_after_secret() const { return after_secret_; }

 private:
  explicit SharedSecret(Bytes secret);

  std::array<std::uint8_t, kMaxSecretLength> secret_{};
  std::size_t length_ = 0;
  HmacMd5Key hmac_;
  Md5 after_secret_;
};

using Authenticator = std::array<std::uint8_t, kAuthenticatorLength>;

// Whether a packet's Message-Authenticator is present and correct.
enum class MessageAuthenticatorStatus : std::uint8_t { kAbsent, kValid, kInvalid };

std::string_view to_string(MessageAuthenticatorStatus status);

// --- Server side: checking requests -------------------------------------

// Checks the Request Authenticator of an Accounting-Request (RFC 2866 §3),
// Disconnect-Request or CoA-Request (RFC 5176 §2.3): MD5 over the packet
// with 16 zero octets in the authenticator field, followed by the secret.
// Requires: request.code() is one of those three.
[[nodiscard]] bool verify_request_authenticator(const Packet& request, const SharedSecret& secret);

// Checks a request's Message-Authenticator (RFC 3579 §3.2). For
// Access-Request and Status-Server the HMAC covers the packet as received;
// for Accounting-, Disconnect- and CoA-Request the authenticator field is
// taken as 16 zero octets, because the Message-Authenticator is computed
// before the Request Authenticator (RFC 5176 §3.4).
// Whether absence is acceptable is the caller's policy (RFC 3579 §3.3
// requires it with EAP-Message; RFC 5997 §3 with Status-Server).
[[nodiscard]] MessageAuthenticatorStatus check_request_message_authenticator(const Packet& request,
                                                                             const SharedSecret& secret);

// --- Server side: signing responses -------------------------------------

// Signs a finished response in place (RFC 2865 §3, RFC 3579 §3.2): fills
// the Message-Authenticator if the packet has one, computed with the
// Request Authenticator in the authenticator field, then overwrites the
// authenticator field with the Response Authenticator
// MD5(Code + Identifier + Length + Request Authenticator + Attributes + Secret).
// Requires: `response` is a whole packet from PacketBuilder::finish() (or
// otherwise well formed) and request_authenticator has 16 octets.
void sign_response(MutableBytes response, Bytes request_authenticator, const SharedSecret& secret);

// --- Client side (load generator, tests, CoA sender) ---------------------

// A fresh random Request Authenticator for an Access-Request or
// Status-Server (RFC 2865 §3: unpredictable and unique).
[[nodiscard]] Authenticator make_request_authenticator(RandomSource& random);

// Signs a finished request in place. Access-Request and Status-Server: fills
// the Message-Authenticator if present (the random Request Authenticator is
// already in the header). Accounting-, Disconnect- and CoA-Request: fills
// the Message-Authenticator over a zero authenticator field, then writes
// the Request Authenticator (RFC 2866 §3, RFC 5176 §2.3 and §3.4).
// Requires: `request` is a whole, well-formed packet of a request code.
void sign_request(MutableBytes request, const SharedSecret& secret);

// Checks a response's Response Authenticator against the request it answers.
[[nodiscard]] bool verify_response_authenticator(const Packet& response, Bytes request_authenticator,
                                                 const SharedSecret& secret);

// Checks a response's Message-Authenticator, computed with the request's
// authenticator in the authenticator field (RFC 3579 §3.2).
[[nodiscard]] MessageAuthenticatorStatus check_response_message_authenticator(const Packet& response,
                                                                              Bytes request_authenticator,
                                                                              const SharedSecret& secret);

}  // namespace rw::radius
