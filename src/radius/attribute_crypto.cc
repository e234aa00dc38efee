// User-Password hiding (RFC 2865 §5.2) and the salted encryption shared by
// Tunnel-Password (RFC 2868 §3.5) and the MS-MPPE keys (RFC 2548 §2.4.2).
// Both chain MD5 over 16-octet blocks:
//   b(1) = MD5(S + first), b(i) = MD5(S + c(i-1)), c(i) = p(i) xor b(i)
// where `first` is the Request Authenticator, followed by the Salt in the
// salted form.
#include "radius/attribute_crypto.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace rw::radius {

std::string_view to_string(CryptoError error) {
  switch (error) {
    case CryptoError::kPasswordTooLong:
      return "password_too_long";
    case CryptoError::kBadHiddenLength:
      return "bad_hidden_length";
    case CryptoError::kBadEmbeddedLength:
      return "bad_embedded_length";
    case CryptoError::kOutputTooSmall:
      return "output_too_small";
    case CryptoError::kBadAuthenticator:
      return "bad_authenticator";
  }
  return "unknown";
}

namespace {

constexpr std::size_t kBlock = 16;
constexpr std::size_t kSaltLength = 2;

std::size_t padded_length(std::size_t length) {
  return std::max(kBlock, (length + kBlock - 1) / kBlock * kBlock);
}

// Overwrites plaintext scratch space so it does not linger on the stack.
void wipe(MutableBytes bytes) {
  volatile std::uint8_t* p = bytes.data();
  for (std::size_t i = 0; i < bytes.size(); ++i) p[i] = 0;
}

enum class Direction : std::uint8_t { kHide, kRecover };

// Runs the MD5 chain over `in` (a non-zero multiple of 16 octets) into
// `out`, which may alias `in`: out(i) = in(i) xor MD5(S + chain(i-1)),
// where chain(0) is `first` and the chain is always the ciphertext, which is
// `out` when hiding and `in` when recovering.
void run_chain(const SharedSecret& secret, Bytes first, Bytes in, MutableBytes out, Direction direction) {
  Md5 md5 = secret.md5_after_secret();
  md5.update(first);
  std::array<std::uint8_t, kBlock> block;
  for (std::size_t at = 0;;) {
    Md5Digest pad = md5.finish();
    std::memcpy(block.data(), in.data() + at, kBlock);
    for (std::size_t i = 0; i < kBlock; ++i) out[at + i] = block[i] ^ pad[i];
    if (direction == Direction::kHide) std::memcpy(block.data(), out.data() + at, kBlock);
    at += kBlock;
    if (at >= in.size()) return;
    md5 = secret.md5_after_secret();
    md5.update(block);
  }
}

// The salted form: Salt + encrypt(Length + plaintext + padding), with the
// first block keyed by Request Authenticator + Salt. Writes to `out`.
Result<Bytes, CryptoError> encrypt_salted(Bytes plaintext, std::uint16_t salt, Bytes request_authenticator,
                                          const SharedSecret& secret, MutableBytes out) {
  if (request_authenticator.size() != kAuthenticatorLength) return fail(CryptoError::kBadAuthenticator);
  if (plaintext.size() > kMaxSaltedPlaintextLength) return fail(CryptoError::kPasswordTooLong);
  const std::size_t padded = padded_length(1 + plaintext.size());
  if (out.size() < kSaltLength + padded) return fail(CryptoError::kOutputTooSmall);
  salt |= 0x8000;  // RFC 2868 §3.5: the most significant bit MUST be set.
  out[0] = static_cast<std::uint8_t>(salt >> 8);
  out[1] = static_cast<std::uint8_t>(salt);
  MutableBytes body = out.subspan(kSaltLength, padded);
  body[0] = static_cast<std::uint8_t>(plaintext.size());
  if (!plaintext.empty()) std::memmove(body.data() + 1, plaintext.data(), plaintext.size());
  std::fill(body.begin() + 1 + static_cast<std::ptrdiff_t>(plaintext.size()), body.end(), std::uint8_t{0});
  std::array<std::uint8_t, kAuthenticatorLength + kSaltLength> first;
  std::memcpy(first.data(), request_authenticator.data(), kAuthenticatorLength);
  std::memcpy(first.data() + kAuthenticatorLength, out.data(), kSaltLength);
  run_chain(secret, first, body, body, Direction::kHide);
  return Bytes(out.first(kSaltLength + padded));
}

Result<Bytes, CryptoError> decrypt_salted(Bytes value, Bytes request_authenticator,
                                          const SharedSecret& secret, MutableBytes out) {
  if (request_authenticator.size() != kAuthenticatorLength) return fail(CryptoError::kBadAuthenticator);
  if (value.size() < kSaltLength + kBlock || (value.size() - kSaltLength) % kBlock != 0 ||
      value.size() - kSaltLength > kMaxHiddenValueLength) {
    return fail(CryptoError::kBadHiddenLength);
  }
  Bytes cipher = value.subspan(kSaltLength);
  std::array<std::uint8_t, kAuthenticatorLength + kSaltLength> first;
  std::memcpy(first.data(), request_authenticator.data(), kAuthenticatorLength);
  std::memcpy(first.data() + kAuthenticatorLength, value.data(), kSaltLength);
  std::array<std::uint8_t, kMaxHiddenValueLength> plain;
  MutableBytes body(plain.data(), cipher.size());
  run_chain(secret, first, cipher, body, Direction::kRecover);
  const std::size_t length = body[0];
  Result<Bytes, CryptoError> result = fail(CryptoError::kBadEmbeddedLength);
  if (length > body.size() - 1) {
    result = fail(CryptoError::kBadEmbeddedLength);
  } else if (length > out.size()) {
    result = fail(CryptoError::kOutputTooSmall);
  } else {
    if (length > 0) std::memcpy(out.data(), body.data() + 1, length);
    result = Bytes(out.first(length));
  }
  wipe(body);
  return result;
}

}  // namespace

Result<Bytes, CryptoError> hide_user_password(Bytes password, Bytes request_authenticator,
                                              const SharedSecret& secret, MutableBytes out) {
  if (request_authenticator.size() != kAuthenticatorLength) return fail(CryptoError::kBadAuthenticator);
  if (password.size() > kMaxUserPasswordLength) return fail(CryptoError::kPasswordTooLong);
  const std::size_t padded = padded_length(password.size());
  if (out.size() < padded) return fail(CryptoError::kOutputTooSmall);
  MutableBytes hidden = out.first(padded);
  if (!password.empty()) std::memmove(hidden.data(), password.data(), password.size());
  std::fill(hidden.begin() + static_cast<std::ptrdiff_t>(password.size()), hidden.end(), std::uint8_t{0});
  run_chain(secret, request_authenticator, hidden, hidden, Direction::kHide);
  return Bytes(hidden);
}

Result<Bytes, CryptoError> unhide_user_password(Bytes hidden, Bytes request_authenticator,
                                                const SharedSecret& secret, MutableBytes out) {
  if (request_authenticator.size() != kAuthenticatorLength) return fail(CryptoError::kBadAuthenticator);
  // RFC 2865 §5.2: 16 to 128 octets, a multiple of 16.
  if (hidden.empty() || hidden.size() % kBlock != 0 || hidden.size() > kMaxUserPasswordLength) {
    return fail(CryptoError::kBadHiddenLength);
  }
  if (out.size() < hidden.size()) return fail(CryptoError::kOutputTooSmall);
  MutableBytes plain = out.first(hidden.size());
  run_chain(secret, request_authenticator, hidden, plain, Direction::kRecover);
  std::size_t length = plain.size();
  while (length > 0 && plain[length - 1] == 0) --length;
  return Bytes(plain.first(length));
}

std::uint16_t make_salt(RandomSource& random) {
  std::array<std::uint8_t, kSaltLength> bytes;
  random.fill(bytes);
  return static_cast<std::uint16_t>(0x8000 | bytes[0] << 8 | bytes[1]);
}

Result<Bytes, CryptoError> hide_tunnel_password(Bytes password, std::uint8_t tag, std::uint16_t salt,
                                                Bytes request_authenticator, const SharedSecret& secret,
                                                MutableBytes out) {
  if (out.empty()) return fail(CryptoError::kOutputTooSmall);
  auto salted = encrypt_salted(password, salt, request_authenticator, secret, out.subspan(1));
  if (!salted) return salted;
  out[0] = tag;
  return Bytes(out.first(1 + salted->size()));
}

Result<TunnelPassword, CryptoError> unhide_tunnel_password(Bytes value, Bytes request_authenticator,
                                                           const SharedSecret& secret, MutableBytes out) {
  if (value.empty()) return fail(CryptoError::kBadHiddenLength);
  auto password = decrypt_salted(value.subspan(1), request_authenticator, secret, out);
  if (!password) return fail(password.error());
  return TunnelPassword{value[0], *password};
}

Result<Bytes, CryptoError> encrypt_mppe_key(Bytes key, std::uint16_t salt, Bytes request_authenticator,
                                            const SharedSecret& secret, MutableBytes out) {
  return encrypt_salted(key, salt, request_authenticator, secret, out);
}

Result<Bytes, CryptoError> decrypt_mppe_key(Bytes value, Bytes request_authenticator,
                                            const SharedSecret& secret, MutableBytes out) {
  return decrypt_salted(value, request_authenticator, secret, out);
}

}  // namespace rw::radius
