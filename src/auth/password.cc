// PAP against every stored password form, and the NT hash (RFC 2759 §8.3).
#include "auth/password.h"

#include <crypt.h>
#include <nettle/md4.h>
#include <nettle/md5.h>
#include <nettle/nettle-meta.h>
#include <nettle/sha1.h>
#include <nettle/sha2.h>
#include <strings.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "auth/encoding.h"
#include "base/assert.h"

namespace rw::auth {
namespace {

// Large enough for a SHA-512 digest and a generous salt, base64 or hex.
constexpr std::size_t kDigestBufferSize = 256;

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

const nettle_hash& nettle_hash_of(DigestAlgorithm algorithm) {
  switch (algorithm) {
    case DigestAlgorithm::kMd5:
      return nettle_md5;
    case DigestAlgorithm::kSha1:
      return nettle_sha1;
    case DigestAlgorithm::kSha256:
      return nettle_sha256;
    case DigestAlgorithm::kSha512:
      return nettle_sha512;
  }
  assert_fail(__FILE__, __LINE__, "unknown enum value");
}

std::size_t digest_size(DigestAlgorithm algorithm) { return nettle_hash_of(algorithm).digest_size; }

// Writes hash(first + second) into out and returns the digest size.
std::size_t digest_of(DigestAlgorithm algorithm, Bytes first, Bytes second, MutableBytes out) {
  const nettle_hash& hash = nettle_hash_of(algorithm);
  RW_ASSERT(out.size() >= hash.digest_size);
  // SHA-512 has the largest context of the four.
  alignas(std::max_align_t) std::array<std::uint8_t, sizeof(sha512_ctx)> context{};
  RW_ASSERT(hash.context_size <= context.size());
  hash.init(context.data());
  hash.update(context.data(), first.size(), first.data());
  hash.update(context.data(), second.size(), second.data());
  hash.digest(context.data(), hash.digest_size, out.data());
  return hash.digest_size;
}

// A digest value as FreeRADIUS accepts it: hexadecimal when it is exactly
// twice the digest size in hex digits, base64 otherwise. Salted forms carry
// the salt after the digest (RFC 2307 practice for {SSHA}).
Result<Credential, CredentialError> parse_digest(DigestAlgorithm algorithm, bool salted,
                                                 std::string_view value) {
  const std::size_t size = digest_size(algorithm);
  std::array<std::uint8_t, kDigestBufferSize> decoded{};
  std::size_t decoded_size = 0;
  if (value.size() == 2 * size && hex_decode(value, MutableBytes(decoded.data(), size))) {
    decoded_size = size;
  } else if (auto written = base64_decode(value, decoded)) {
    decoded_size = *written;
  } else {
    return fail(CredentialError::kMalformedBase64);
  }
  if (decoded_size < size || (!salted && decoded_size != size)) {
    return fail(CredentialError::kWrongDigestLength);
  }
  Credential credential;
  credential.kind = CredentialKind::kDigest;
  credential.digest_algorithm = algorithm;
  const std::string_view all = as_chars(Bytes(decoded.data(), decoded_size));
  credential.secret = all.substr(0, size);
  credential.salt = all.substr(size);
  return credential;
}

struct DigestScheme {
  std::string_view name;
  DigestAlgorithm algorithm;
  bool salted;
};

// FreeRADIUS's Password-With-Header names and their control attributes.
constexpr std::array<DigestScheme, 8> kHeaderSchemes{{
    {"{md5}", DigestAlgorithm::kMd5, false},
    {"{smd5}", DigestAlgorithm::kMd5, true},
    {"{sha}", DigestAlgorithm::kSha1, false},
    {"{ssha}", DigestAlgorithm::kSha1, true},
    {"{sha256}", DigestAlgorithm::kSha256, false},
    {"{ssha256}", DigestAlgorithm::kSha256, true},
    {"{sha512}", DigestAlgorithm::kSha512, false},
    {"{ssha512}", DigestAlgorithm::kSha512, true},
}};

constexpr std::array<DigestScheme, 10> kAttributeSchemes{{
    {"MD5-Password", DigestAlgorithm::kMd5, false},
    {"SMD5-Password", DigestAlgorithm::kMd5, true},
    {"SHA-Password", DigestAlgorithm::kSha1, false},
    {"SHA1-Password", DigestAlgorithm::kSha1, false},
    {"SSHA-Password", DigestAlgorithm::kSha1, true},
    {"SSHA1-Password", DigestAlgorithm::kSha1, true},
    {"SHA2-256-Password", DigestAlgorithm::kSha256, false},
    {"SSHA2-256-Password", DigestAlgorithm::kSha256, true},
    {"SHA2-512-Password", DigestAlgorithm::kSha512, false},
    {"SSHA2-512-Password", DigestAlgorithm::kSha512, true},
}};

// FreeRADIUS 3.2's SHA2-Password, unsalted: its variant follows from the
// digest's length, hex or base64 as parse_digest reads them. SHA-256 and
// SHA-512 are known; a SHA-224 or SHA-384 digest is refused
// (kWrongDigestLength), never guessed.
Result<Credential, CredentialError> sha2_credential(std::string_view value) {
  auto as_sha256 = parse_digest(DigestAlgorithm::kSha256, false, value);
  if (as_sha256) return as_sha256;
  auto as_sha512 = parse_digest(DigestAlgorithm::kSha512, false, value);
  if (as_sha512) return as_sha512;
  return fail(as_sha512.error());
}

Result<Credential, CredentialError> nt_credential(std::string_view value) {
  const std::optional<NtHash> hash = parse_nt_hash(value);
  if (!hash) return fail(CredentialError::kMalformedNtHash);
  return Credential::nt_hash(*hash);
}

Result<Credential, CredentialError> crypt_credential(std::string_view value) {
  if (value.empty()) return fail(CredentialError::kEmptyCrypt);
  return Credential::crypt(value);
}

// Compares in time independent of the contents and, up to
// kSecretCompareSpan octets (twice RFC 2865 §5.2's 128-octet User-Password),
// of both lengths: every such call walks the same number of octets, so
// neither a near miss nor the stored password's length shows in the timing.
// Cheaper than hashing both sides, which cost two SHA-256 per PAP request.
constexpr std::size_t kSecretCompareSpan = 256;

bool secrets_equal(std::string_view a, std::string_view b) {
  const std::size_t span = std::max({kSecretCompareSpan, a.size(), b.size()});
  auto diff = static_cast<std::uint8_t>(a.size() != b.size());
  for (std::size_t i = 0; i < span; ++i) {
    const auto x = static_cast<std::uint8_t>(i < a.size() ? a[i] : 0);
    const auto y = static_cast<std::uint8_t>(i < b.size() ? b[i] : 0);
    diff = static_cast<std::uint8_t>(diff | (x ^ y));
  }
  return diff == 0;
}

Result<void, AuthError> verify_crypt(std::string_view setting, std::string_view password) {
  if (password.find('\0') != std::string_view::npos) return fail(AuthError::kPasswordHasNul);
  // The 32 KiB scratch area lives on the stack: crypt_rn is reentrant and
  // never touches static storage. libxcrypt asks for `initialized` and
  // `reserved` to start zeroed; `input` and `setting` are the documented
  // places for the NUL-terminated arguments.
  crypt_data scratch;
  scratch.initialized = 0;
  std::memset(scratch.reserved, 0, sizeof scratch.reserved);
  if (password.size() >= sizeof scratch.input) return fail(AuthError::kPasswordTooLong);
  if (setting.size() >= sizeof scratch.setting || setting.find('\0') != std::string_view::npos) {
    return fail(AuthError::kCryptFailed);
  }
  std::memcpy(scratch.input, password.data(), password.size());
  scratch.input[password.size()] = '\0';
  std::memcpy(scratch.setting, setting.data(), setting.size());
  scratch.setting[setting.size()] = '\0';

  const char* hashed = crypt_rn(scratch.input, scratch.setting, &scratch, sizeof scratch);
  const bool matched = hashed != nullptr && constant_time_equal(as_bytes(hashed), as_bytes(setting));
  explicit_bzero(scratch.input, sizeof scratch.input);
  if (hashed == nullptr) return fail(AuthError::kCryptFailed);
  if (!matched) return fail(AuthError::kWrongPassword);
  return {};
}

Result<void, AuthError> verify_digest(const Credential& known_good, std::string_view password) {
  std::array<std::uint8_t, SHA512_DIGEST_SIZE> computed{};
  const std::size_t size =
      digest_of(known_good.digest_algorithm, as_bytes(password), as_bytes(known_good.salt), computed);
  if (!constant_time_equal(Bytes(computed.data(), size), as_bytes(known_good.secret))) {
    return fail(AuthError::kWrongPassword);
  }
  return {};
}

}  // namespace

Result<NtHash, AuthError> nt_password_hash(std::string_view utf8_password) {
  std::array<std::uint8_t, 2 * kNtPasswordUnitsMax> unicode{};
  const auto unicode_size = utf8_to_utf16le(utf8_password, unicode);
  if (!unicode_size) return fail(unicode_size.error());
  NtHash hash{};
  md4_ctx context;
  md4_init(&context);
  md4_update(&context, *unicode_size, unicode.data());
  md4_digest(&context, hash.size(), hash.data());
  explicit_bzero(unicode.data(), unicode.size());
  return hash;
}

std::optional<NtHash> parse_nt_hash(std::string_view text) {
  if (text.size() == 2 + 2 * kNtHashSize && (text.starts_with("0x") || text.starts_with("0X"))) {
    text.remove_prefix(2);
  }
  NtHash hash{};
  if (!hex_decode(text, hash)) return std::nullopt;
  return hash;
}

Credential Credential::cleartext(std::string_view password) {
  Credential credential;
  credential.secret = password;
  return credential;
}

Credential Credential::nt_hash(const NtHash& hash) {
  Credential credential;
  credential.kind = CredentialKind::kNtHash;
  credential.secret = as_chars(hash);
  return credential;
}

Credential Credential::crypt(std::string_view crypt_string) {
  Credential credential;
  credential.kind = CredentialKind::kCrypt;
  credential.secret = crypt_string;
  return credential;
}

NtHash Credential::stored_nt_hash() const {
  RW_ASSERT(kind == CredentialKind::kNtHash && secret.size() == kNtHashSize);
  NtHash hash{};
  std::memcpy(hash.data(), secret.data(), hash.size());
  return hash;
}

std::string_view to_string(CredentialError error) {
  switch (error) {
    case CredentialError::kUnknownAttribute:
      return "not a known password attribute";
    case CredentialError::kMalformedNtHash:
      return "NT-Password must be 32 hexadecimal digits";
    case CredentialError::kUnknownHeader:
      return "unknown {scheme} in Password-With-Header";
    case CredentialError::kMalformedBase64:
      return "password digest is neither base64 nor hexadecimal";
    case CredentialError::kWrongDigestLength:
      return "password digest has the wrong length";
    case CredentialError::kEmptyCrypt:
      return "Crypt-Password is empty";
  }
  return "unknown";
}

Result<Credential, CredentialError> parse_credential(std::string_view attribute, std::string_view value) {
  if (equals_ignoring_case(attribute, "Cleartext-Password") ||
      equals_ignoring_case(attribute, "User-Password")) {
    return Credential::cleartext(value);
  }
  if (equals_ignoring_case(attribute, "NT-Password")) return nt_credential(value);
  if (equals_ignoring_case(attribute, "Crypt-Password")) return crypt_credential(value);
  if (equals_ignoring_case(attribute, "Password-With-Header")) return parse_password_with_header(value);
  if (equals_ignoring_case(attribute, "SHA2-Password")) return sha2_credential(value);
  for (const DigestScheme& scheme : kAttributeSchemes) {
    if (equals_ignoring_case(attribute, scheme.name))
      return parse_digest(scheme.algorithm, scheme.salted, value);
  }
  return fail(CredentialError::kUnknownAttribute);
}

Result<Credential, CredentialError> parse_password_with_header(std::string_view value) {
  if (!value.starts_with('{')) return Credential::cleartext(value);
  const std::size_t close = value.find('}');
  if (close == std::string_view::npos) return Credential::cleartext(value);
  const std::string_view header = value.substr(0, close + 1);
  const std::string_view rest = value.substr(close + 1);
  if (equals_ignoring_case(header, "{clear}") || equals_ignoring_case(header, "{cleartext}")) {
    return Credential::cleartext(rest);
  }
  if (equals_ignoring_case(header, "{crypt}")) return crypt_credential(rest);
  if (equals_ignoring_case(header, "{nt}") || equals_ignoring_case(header, "{nthash}") ||
      equals_ignoring_case(header, "{x-nthash}")) {
    return nt_credential(rest);
  }
  for (const DigestScheme& scheme : kHeaderSchemes) {
    if (equals_ignoring_case(header, scheme.name)) return parse_digest(scheme.algorithm, scheme.salted, rest);
  }
  return fail(CredentialError::kUnknownHeader);
}

Result<void, AuthError> verify_pap(const Credential& known_good, std::string_view password) {
  // An empty password on either side is never a match: a forgotten or
  // default-constructed Credential must not open the door to everyone.
  if (password.empty() || known_good.secret.empty()) return fail(AuthError::kEmptyPassword);
  switch (known_good.kind) {
    case CredentialKind::kCleartext:
      if (!secrets_equal(known_good.secret, password)) return fail(AuthError::kWrongPassword);
      return {};
    case CredentialKind::kNtHash: {
      const auto hash = nt_password_hash(password);
      if (!hash) return fail(hash.error());
      if (!constant_time_equal(*hash, as_bytes(known_good.secret))) return fail(AuthError::kWrongPassword);
      return {};
    }
    case CredentialKind::kCrypt:
      return verify_crypt(known_good.secret, password);
    case CredentialKind::kDigest:
      return verify_digest(known_good, password);
  }
  assert_fail(__FILE__, __LINE__, "unknown enum value");
}

}  // namespace rw::auth
