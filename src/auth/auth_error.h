// Why an authentication method refused a request: one closed enum shared by
// PAP, CHAP, MS-CHAP and MAB so that the gateway counts rejects by reason.
#pragma once

#include <cstdint>
#include <string_view>

namespace rw::auth {

// Every reason a verification can fail. kWrongPassword is the only one a
// correct client with a wrong password causes; the others name a malformed
// request, a stored password form the method cannot use, or a local fault.
enum class AuthError : std::uint8_t {
  kWrongPassword,             // The response does not match the known good password.
  kEmptyPassword,             // An empty password, sent or stored: refused by every method.
  kInvalidUtf8,               // The password is not valid UTF-8 (NT hash needs UTF-16LE).
  kPasswordTooLong,           // Longer than 256 UTF-16 code units (RFC 2759 §8.1) or crypt's limit.
  kPasswordHasNul,            // A NUL octet would silently truncate the password for crypt(3).
  kChapNeedsCleartext,        // RFC 1994 §4.1: CHAP needs the password itself, not a hash of it.
  kMsChapNeedsNtHash,         // MS-CHAP needs Cleartext-Password or NT-Password.
  kMalformedChapPassword,     // RFC 2865 §5.3: CHAP-Password is Ident(1) + Response(16).
  kMalformedChapChallenge,    // RFC 2865 §5.40: CHAP-Challenge is at least 5 octets.
  kMalformedMsChapChallenge,  // RFC 2548 §2.3.2: 16 octets for v2, 8 for v1.
  kMalformedMsChapResponse,   // RFC 2548 §2.1.3 / §2.3.2: 50 octets.
  kLmResponseNotSupported,    // MS-CHAPv1 with Flags = 0 asks for the LAN Manager response.
  kCryptFailed,               // libcrypt refused the stored setting (unknown or malformed).
};

std::string_view to_string(AuthError error);

}  // namespace rw::auth
