// CHAP as RADIUS carries it (RFC 1994 §4.1, RFC 2865 §2.2, §5.3, §5.40): the
// NAS sends CHAP-Password = Ident + MD5(Ident + password + challenge), with the
// challenge in CHAP-Challenge or, when that is absent, in the Request
// Authenticator. Pure: no I/O, no clock, no logging, no allocation.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "auth/auth_error.h"
#include "auth/password.h"
#include "base/bytes.h"
#include "base/result.h"

namespace rw::auth {

inline constexpr std::size_t kChapResponseSize = 16;
// RFC 2865 §5.3: CHAP Ident (1 octet) + String (16 octets).
inline constexpr std::size_t kChapPasswordSize = 1 + kChapResponseSize;
// RFC 2865 §5.40: Length >= 7, so the challenge is at least 5 octets.
inline constexpr std::size_t kChapChallengeSizeMin = 5;

// The attributes of an Access-Request that CHAP needs, borrowed from the
// packet. The caller keeps them alive for the call.
struct ChapRequest {
  Bytes chap_password;                                 // CHAP-Password (3): Ident + Response.
  std::optional<Bytes> chap_challenge = std::nullopt;  // CHAP-Challenge (60), absent when the NAS sent none.
  Bytes request_authenticator;                         // The 16-octet Request Authenticator.
};

// The challenge CHAP hashes: CHAP-Challenge when present, otherwise the
// Request Authenticator (RFC 2865 §2.2).
[[nodiscard]] Bytes chap_challenge_of(const ChapRequest& request);

// RFC 1994 §4.1: MD5(Ident + secret + challenge). Exposed for tests and the
// load generator, which play the NAS.
[[nodiscard]] std::array<std::uint8_t, kChapResponseSize> chap_response(std::uint8_t ident,
                                                                        std::string_view password,
                                                                        Bytes challenge);

// The CHAP-Password value a NAS sends (RFC 2865 §5.3): Ident, then
// chap_response(ident, password, challenge). For tests and the load
// generator.
[[nodiscard]] std::array<std::uint8_t, kChapPasswordSize> chap_password(std::uint8_t ident,
                                                                        std::string_view password,
                                                                        Bytes challenge);

// Verifies CHAP against known_good, which must be a Cleartext-Password: a
// one-way hash of the password cannot answer a challenge (kChapNeedsCleartext),
// and not empty (kEmptyPassword).
// Fails with kMalformedChapPassword or kMalformedChapChallenge on malformed
// attributes and kWrongPassword on a mismatch; compares in constant time.
[[nodiscard]] Result<void, AuthError> verify_chap(const Credential& known_good, const ChapRequest& request);

}  // namespace rw::auth
