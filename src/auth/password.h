// PAP (RFC 2865 §5.2): checking a User-Password against the "known good"
// password a users file or an SQL row gives, in the forms FreeRADIUS stores:
// Cleartext-Password, NT-Password, Crypt-Password, the salted digests of
// LDAP ({ssha} and friends) and Password-With-Header. Also the NT hash of
// RFC 2759 §8.3, which MS-CHAP shares. Pure: no I/O, no clock, no logging.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "auth/auth_error.h"
#include "base/bytes.h"
#include "base/result.h"

namespace rw::auth {

inline constexpr std::size_t kNtHashSize = 16;
// MD4 of the UTF-16LE password (RFC 2759 §8.3 NtPasswordHash).
using NtHash = std::array<std::uint8_t, kNtHashSize>;

// The longest password the NT hash takes: 256 UTF-16 code units (RFC 2759
// §8.1 "0-to-256-unicode-char Password").
inline constexpr std::size_t kNtPasswordUnitsMax = 256;

// Computes the NT hash of a UTF-8 password: converts it to UTF-16LE (non-ASCII
// included, as Windows does) and hashes that with MD4.
// Fails with kInvalidUtf8 or kPasswordTooLong; allocates nothing.
[[nodiscard]] Result<NtHash, AuthError> nt_password_hash(std::string_view utf8_password);

// Parses an NT-Password as a users file writes it: 32 hexadecimal digits,
// optionally prefixed by "0x". nullopt for anything else.
[[nodiscard]] std::optional<NtHash> parse_nt_hash(std::string_view text);

// Which form a known good password takes.
enum class CredentialKind : std::uint8_t {
  kCleartext,  // The password itself: works with PAP, CHAP and MS-CHAP.
  kNtHash,     // NT-Password: works with PAP and MS-CHAP, not CHAP.
  kCrypt,      // crypt(3) string ($6$, $y$, $2b$, ...): PAP only.
  kDigest,     // A (salted) MD5/SHA digest ({ssha}, {md5}, ...): PAP only.
};

enum class DigestAlgorithm : std::uint8_t { kMd5, kSha1, kSha256, kSha512 };

// A known good password, parsed once when the users file or SQL row is read,
// so that checking it on the request path allocates nothing. Owns its bytes.
struct Credential {
  CredentialKind kind = CredentialKind::kCleartext;
  // kDigest only: the hash over password + salt.
  DigestAlgorithm digest_algorithm = DigestAlgorithm::kSha1;
  // kCleartext: the password; kCrypt: the whole crypt(3) string; kNtHash:
  // the 16 hash octets; kDigest: the digest octets.
  std::string secret;
  // kDigest only: the octets appended to the password before hashing; empty
  // for the unsalted forms.
  std::string salt;

  [[nodiscard]] static Credential cleartext(std::string_view password);
  [[nodiscard]] static Credential nt_hash(const NtHash& hash);
  [[nodiscard]] static Credential crypt(std::string_view crypt_string);
  // Requires: kind == kNtHash.
  [[nodiscard]] NtHash stored_nt_hash() const;
};

enum class CredentialError : std::uint8_t {
  kUnknownAttribute,   // Not a password attribute this module knows.
  kMalformedNtHash,    // NT-Password is not 32 hex digits (optionally "0x"-prefixed).
  kUnknownHeader,      // Password-With-Header names a scheme this module does not know.
  kMalformedBase64,    // A {ssha}-style value is not base64.
  kWrongDigestLength,  // The decoded digest is shorter than the algorithm's output.
  kEmptyCrypt,         // Crypt-Password is empty: it would match nothing or everything.
};

std::string_view to_string(CredentialError error);

// Builds a Credential from a FreeRADIUS control attribute (name compared
// case-insensitively): Cleartext-Password (also the legacy User-Password),
// NT-Password, Crypt-Password, MD5-Password, SMD5-Password, SHA-Password
// (SHA1-Password), SSHA-Password (SSHA1-Password), SHA2-256/512-Password,
// SSHA2-256/512-Password and Password-With-Header. Digest values are base64
// or, when exactly twice the digest size, hexadecimal (as FreeRADIUS accepts).
[[nodiscard]] Result<Credential, CredentialError> parse_credential(std::string_view attribute,
                                                                   std::string_view value);

// Parses a Password-With-Header value: "{clear}" / "{cleartext}", "{crypt}",
// "{nt}" / "{nthash}" / "{x-nthash}", "{md5}", "{smd5}", "{sha}", "{ssha}",
// "{sha256}", "{ssha256}", "{sha512}", "{ssha512}" (header case-insensitive).
// A value with no header at all is taken as cleartext, as FreeRADIUS does.
[[nodiscard]] Result<Credential, CredentialError> parse_password_with_header(std::string_view value);

// PAP: checks a User-Password (already decrypted, RFC 2865 §5.2 padding NULs
// removed by the caller) against known_good. Every comparison runs in time
// independent of where the inputs differ. Succeeds when the password matches;
// fails with kWrongPassword, or with kEmptyPassword (an empty password, sent
// or stored, never matches), kInvalidUtf8, kPasswordTooLong, kPasswordHasNul
// or kCryptFailed when it cannot be checked.
//
// A kCrypt check calls libcrypt's crypt_rn with a 32 KiB scratch area on the
// stack; bcrypt and yescrypt are slow by design (milliseconds per check) and
// yescrypt allocates its working memory inside libcrypt. That is the price of
// those hashes: put them on a worker that may block, or prefer NT-Password.
[[nodiscard]] Result<void, AuthError> verify_pap(const Credential& known_good, std::string_view password);

}  // namespace rw::auth
