// Hidden attribute values: User-Password (RFC 2865 §5.2), Tunnel-Password
// (RFC 2868 §3.5) and MS-MPPE-Send-Key / MS-MPPE-Recv-Key (RFC 2548 §2.4.2,
// §2.4.3). Every function writes into a caller-provided buffer and returns
// a view of it; nothing allocates. Callers should wipe the buffers after use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/bytes.h"
#include "base/random.h"
#include "base/result.h"
#include "radius/authenticator.h"

namespace rw::radius {

// RFC 2865 §5.2: the password is at most 128 octets.
inline constexpr std::size_t kMaxUserPasswordLength = 128;
// Largest plaintext for the salted encryptions (Tunnel-Password, MPPE keys):
// the length octet plus the plaintext, padded to 16, must fit in the 240
// octets left in an attribute after the type, length, tag or vendor header
// and salt.
inline constexpr std::size_t kMaxSaltedPlaintextLength = 239;
// An output buffer of this size fits any value produced or recovered here.
inline constexpr std::size_t kMaxHiddenValueLength = 253;

enum class CryptoError : std::uint8_t {
  kPasswordTooLong,    // User-Password over 128 octets, salted plaintext over 239
  kBadHiddenLength,    // hidden value not a non-zero multiple of 16 (after tag and salt)
  kBadEmbeddedLength,  // the decrypted length octet exceeds the decrypted data
  kOutputTooSmall,     // the caller's buffer cannot hold the result
  kBadAuthenticator,   // the Request Authenticator is not 16 octets
};

std::string_view to_string(CryptoError error);

// Hides a User-Password (RFC 2865 §5.2): pads to a multiple of 16 with NULs
// (an empty password becomes 16 NULs), then chains
// c(i) = p(i) xor MD5(S + c(i-1)), c(0) = Request Authenticator.
// Returns the hidden value, a prefix of `out`.
[[nodiscard]] Result<Bytes, CryptoError> hide_user_password(Bytes password, Bytes request_authenticator,
                                                            const SharedSecret& secret, MutableBytes out);

// Recovers a User-Password; trailing NULs (the padding) are stripped.
// Returns the password, a prefix of `out`. A wrong secret yields garbage,
// not an error: the caller's password check rejects it.
[[nodiscard]] Result<Bytes, CryptoError> unhide_user_password(Bytes hidden, Bytes request_authenticator,
                                                              const SharedSecret& secret, MutableBytes out);

// A Salt for the salted encryptions: 16 bits with the high bit set
// (RFC 2868 §3.5, RFC 2548 §2.4.2).
[[nodiscard]] std::uint16_t make_salt(RandomSource& random);

// Salts for one packet: RFC 2868 §3.5 requires every Salt in a packet to be
// unique. The first is random; each next one is the previous plus one,
// keeping the high bit, so 32768 salts are distinct.
class SaltSequence {
 public:
  explicit SaltSequence(RandomSource& random) : next_(make_salt(random)) {}
  [[nodiscard]] std::uint16_t next() {
    const std::uint16_t salt = next_;
    next_ = static_cast<std::uint16_t>(0x8000 | ((next_ + 1) & 0x7fff));
    return salt;
  }

 private:
  std::uint16_t next_;
};

// Hides a Tunnel-Password (RFC 2868 §3.5). Writes the whole attribute
// value, Tag (one octet) + Salt (two) + encrypted String, so the caller can
// add() it as is. `salt` gets its high bit set. `request_authenticator` is
// that of the Access-Request the Access-Accept answers.
[[nodiscard]] Result<Bytes, CryptoError> hide_tunnel_password(Bytes password, std::uint8_t tag,
                                                              std::uint16_t salt, Bytes request_authenticator,
                                                              const SharedSecret& secret, MutableBytes out);

struct TunnelPassword {
  // RFC 2868 §3.5: 0x01-0x1F group tunnel attributes; other values are
  // reported as received and are the caller's to ignore.
  std::uint8_t tag = 0;
  Bytes password;  // A prefix of the caller's `out`.
};

// Recovers a Tunnel-Password from its attribute value (Tag + Salt + String).
[[nodiscard]] Result<TunnelPassword, CryptoError> unhide_tunnel_password(Bytes value,
                                                                         Bytes request_authenticator,
                                                                         const SharedSecret& secret,
                                                                         MutableBytes out);

// Encrypts an MS-MPPE-Send-Key or MS-MPPE-Recv-Key (RFC 2548 §2.4.2,
// §2.4.3). Writes the vendor sub-attribute value, Salt (two octets) +
// encrypted (Key-Length + Key + padding), for add_vendor().
[[nodiscard]] Result<Bytes, CryptoError> encrypt_mppe_key(Bytes key, std::uint16_t salt,
                                                          Bytes request_authenticator,
                                                          const SharedSecret& secret, MutableBytes out);

// Decrypts an MS-MPPE-Send-Key or MS-MPPE-Recv-Key value. Returns the key,
// a prefix of `out`.
[[nodiscard]] Result<Bytes, CryptoError> decrypt_mppe_key(Bytes value, Bytes request_authenticator,
                                                          const SharedSecret& secret, MutableBytes out);

}  // namespace rw::radius
