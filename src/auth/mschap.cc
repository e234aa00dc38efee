// MS-CHAPv1 (RFC 2433) and MS-CHAPv2 (RFC 2759) verification for RADIUS
// (RFC 2548), with the MPPE key material of RFC 3079 and RFC 2548 §2.4.1.
#include "auth/mschap.h"

#include <nettle/des.h>
#include <nettle/sha1.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "auth/encoding.h"
#include "base/assert.h"

namespace rw::auth {
namespace {

// RFC 2759 §8.7 Magic1 and Magic2, written as the ASCII they spell.
constexpr std::string_view kServerSigningMagic = "Magic server to client signing constant";
constexpr std::string_view kPadMagic = "Pad to make it do more than one iteration";

// RFC 2433 §A.3: the LAN Manager hash encrypts this "magic" block.
constexpr std::string_view kLmMagic = "KGS!@#$%";
constexpr std::size_t kLmPasswordSizeMax = 14;

constexpr std::size_t kReservedSize = 8;

void sha1_update_bytes(sha1_ctx& context, Bytes bytes) { sha1_update(&context, bytes.size(), bytes.data()); }

void append(MsChapError& error, std::string_view text) {
  RW_ASSERT(error.size + text.size() <= error.octets.size());
  std::memcpy(error.octets.data() + error.size, text.data(), text.size());
  error.size += text.size();
}

}  // namespace

DesBlock expand_des_key(Bytes seven) {
  RW_ASSERT(seven.size() == 7);
  DesBlock key{};
  // Each output octet takes the next 7 bits of the 56-bit key in its high
  // bits; bit 0 is the parity bit.
  key[0] = seven[0];
  for (std::size_t i = 1; i < 7; ++i) {
    key[i] = static_cast<std::uint8_t>(seven[i - 1] << (8 - i) | seven[i] >> i);
  }
  key[7] = static_cast<std::uint8_t>(seven[6] << 1);
  for (std::uint8_t& octet : key) {
    octet &= 0xFE;
    // Odd parity (RFC 2759 §9.3): set bit 0 when the other seven have an even count.
    if (std::popcount(octet) % 2 == 0) octet |= 0x01;
  }
  return key;
}

DesBlock des_encrypt_block(Bytes clear, Bytes key) {
  RW_ASSERT(clear.size() == DES_BLOCK_SIZE && key.size() == 7);
  const DesBlock expanded = expand_des_key(key);
  des_ctx context;
  // des_set_key returns 0 for the DES weak keys but still sets the key up;
  // MS-CHAP must use them (an NT hash ending in zeros makes the third key weak).
  static_cast<void>(des_set_key(&context, expanded.data()));
  DesBlock cypher{};
  ::des_encrypt(&context, DES_BLOCK_SIZE, cypher.data(), clear.data());
  return cypher;
}

std::string_view ms_chap_user_name(std::string_view user_name) {
  const std::size_t backslash = user_name.rfind('\\');
  if (backslash == std::string_view::npos) return user_name;
  return user_name.substr(backslash + 1);
}

DesBlock challenge_hash(Bytes peer_challenge, Bytes authenticator_challenge, std::string_view user_name) {
  RW_ASSERT(peer_challenge.size() == kPeerChallengeSize &&
            authenticator_challenge.size() == kMsChap2ChallengeSize);
  sha1_ctx context;
  sha1_init(&context);
  sha1_update_bytes(context, peer_challenge);
  sha1_update_bytes(context, authenticator_challenge);
  sha1_update_bytes(context, as_bytes(user_name));
  std::array<std::uint8_t, SHA1_DIGEST_SIZE> digest{};
  sha1_digest(&context, digest.size(), digest.data());
  DesBlock challenge{};
  std::copy_n(digest.begin(), challenge.size(), challenge.begin());
  return challenge;
}

NtResponse challenge_response(Bytes challenge, const NtHash& nt_hash) {
  RW_ASSERT(challenge.size() == DES_BLOCK_SIZE);
  std::array<std::uint8_t, 21> padded{};
  std::copy(nt_hash.begin(), nt_hash.end(), padded.begin());
  NtResponse response{};
  for (std::size_t third = 0; third < 3; ++third) {
    const DesBlock block = des_encrypt_block(challenge, Bytes(padded.data() + 7 * third, 7));
    std::copy(block.begin(), block.end(), response.begin() + 8 * static_cast<std::ptrdiff_t>(third));
  }
  return response;
}

std::array<char, kAuthenticatorResponseSize> authenticator_response(const NtHash& nt_hash, Bytes nt_response,
                                                                    Bytes peer_challenge,
                                                                    Bytes authenticator_challenge,
                                                                    std::string_view user_name) {
  RW_ASSERT(nt_response.size() == kNtResponseSize);
  const NtHash hash_hash = password_hash_hash(nt_hash);
  std::array<std::uint8_t, SHA1_DIGEST_SIZE> digest{};
  sha1_ctx context;
  sha1_init(&context);
  sha1_update_bytes(context, hash_hash);
  sha1_update_bytes(context, nt_response);
  sha1_update_bytes(context, as_bytes(kServerSigningMagic));
  sha1_digest(&context, digest.size(), digest.data());

  const DesBlock challenge = challenge_hash(peer_challenge, authenticator_challenge, user_name);
  sha1_init(&context);
  sha1_update_bytes(context, digest);
  sha1_update_bytes(context, challenge);
  sha1_update_bytes(context, as_bytes(kPadMagic));
  sha1_digest(&context, digest.size(), digest.data());

  std::array<char, kAuthenticatorResponseSize> text{};
  text[0] = 'S';
  text[1] = '=';
  hex_encode(digest, std::span<char>(text).subspan(2), HexCase::kUpper);
  return text;
}

std::optional<LmHash> lm_password_hash(std::string_view password) {
  if (password.size() > kLmPasswordSizeMax) return std::nullopt;
  std::array<std::uint8_t, kLmPasswordSizeMax> upper{};
  for (std::size_t i = 0; i < password.size(); ++i) {
    const auto c = static_cast<std::uint8_t>(password[i]);
    if (c >= 0x80) return std::nullopt;
    upper[i] = (c >= 'a' && c <= 'z') ? static_cast<std::uint8_t>(c - 'a' + 'A') : c;
  }
  LmHash hash{};
  const DesBlock first = des_encrypt_block(as_bytes(kLmMagic), Bytes(upper.data(), 7));
  const DesBlock second = des_encrypt_block(as_bytes(kLmMagic), Bytes(upper.data() + 7, 7));
  std::copy(first.begin(), first.end(), hash.begin());
  std::copy(second.begin(), second.end(), hash.begin() + 8);
  return hash;
}

Result<NtHash, AuthError> nt_hash_of(const Credential& known_good) {
  switch (known_good.kind) {
    case CredentialKind::kCleartext:
      if (known_good.secret.empty()) return fail(AuthError::kEmptyPassword);
      return nt_password_hash(known_good.secret);
    case CredentialKind::kNtHash:
      return known_good.stored_nt_hash();
    case CredentialKind::kCrypt:
    case CredentialKind::kDigest:
      return fail(AuthError::kMsChapNeedsNtHash);
  }
  assert_fail(__FILE__, __LINE__, "unknown enum value");
}

std::uint8_t ms_chap_ident(Bytes response_value) { return response_value.empty() ? 0 : response_value[0]; }

Result<MsChap2Response, AuthError> parse_ms_chap2_response(Bytes value) {
  if (value.size() != kMsChapResponseSize) return fail(AuthError::kMalformedMsChapResponse);
  ByteReader reader(value);
  MsChap2Response response;
  static_cast<void>(reader.read_u8(response.ident));
  static_cast<void>(reader.read_u8(response.flags));
  response.peer_challenge = reader.read_bytes(kPeerChallengeSize);
  static_cast<void>(reader.read_bytes(kReservedSize));
  response.nt_response = reader.read_bytes(kNtResponseSize);
  RW_ASSERT(!reader.failed() && reader.remaining() == 0);
  return response;
}

std::array<std::uint8_t, kMsChapResponseSize> ms_chap2_response_value(std::uint8_t ident,
                                                                      Bytes peer_challenge,
                                                                      const NtResponse& nt_response) {
  RW_ASSERT(peer_challenge.size() == kPeerChallengeSize);
  std::array<std::uint8_t, kMsChapResponseSize> value{};
  value[0] = ident;
  std::copy(peer_challenge.begin(), peer_challenge.end(), value.begin() + 2);
  std::copy(nt_response.begin(), nt_response.end(), value.begin() + 2 + kPeerChallengeSize + kReservedSize);
  return value;
}

MsChap2PeerResponse ms_chap2_peer_response(std::uint8_t ident, std::string_view user_name,
                                           const NtHash& nt_hash, RandomSource& random) {
  MsChap2PeerResponse out{};
  random.fill(out.authenticator_challenge);
  random.fill(out.peer_challenge);
  const std::string_view name = ms_chap_user_name(user_name);
  out.nt_response =
      challenge_response(challenge_hash(out.peer_challenge, out.authenticator_challenge, name), nt_hash);
  out.value = ms_chap2_response_value(ident, out.peer_challenge, out.nt_response);
  out.authenticator_response =
      authenticator_response(nt_hash, out.nt_response, out.peer_challenge, out.authenticator_challenge, name);
  return out;
}

Result<MsChap2Accept, AuthError> verify_ms_chap2(const Credential& known_good,
                                                 const MsChap2Request& request) {
  if (request.ms_chap_challenge.size() != kMsChap2ChallengeSize) {
    return fail(AuthError::kMalformedMsChapChallenge);
  }
  const auto response = parse_ms_chap2_response(request.ms_chap2_response);
  if (!response) return fail(response.error());
  const auto nt_hash = nt_hash_of(known_good);
  if (!nt_hash) return fail(nt_hash.error());

  const std::string_view user_name = ms_chap_user_name(request.user_name);
  const DesBlock challenge = challenge_hash(response->peer_challenge, request.ms_chap_challenge, user_name);
  const NtResponse expected = challenge_response(challenge, *nt_hash);
  if (!constant_time_equal(expected, response->nt_response)) return fail(AuthError::kWrongPassword);

  MsChap2Accept accept{};
  accept.ms_chap2_success[0] = response->ident;
  const auto text = authenticator_response(*nt_hash, response->nt_response, response->peer_challenge,
                                           request.ms_chap_challenge, user_name);
  std::copy(text.begin(), text.end(), accept.ms_chap2_success.begin() + 1);
  accept.mppe = ms_chap2_mppe_keys(*nt_hash, response->nt_response);
  return accept;
}

MsChapError ms_chap2_error(std::uint8_t ident, RandomSource& random) {
  std::array<std::uint8_t, kMsChap2ChallengeSize> next_challenge{};
  random.fill(next_challenge);
  std::array<char, 2 * kMsChap2ChallengeSize> challenge_hex{};
  hex_encode(next_challenge, challenge_hex, HexCase::kUpper);

  MsChapError error;
  error.octets[0] = ident;
  error.size = 1;
  // RFC 2759 §6: E=691 is "authentication failure", V=3 says MS-CHAPv2.
  append(error, "E=691 R=0 C=");
  append(error, std::string_view(challenge_hex.data(), challenge_hex.size()));
  append(error, " V=3 M=Authentication failed");
  return error;
}

Result<MsChap1Response, AuthError> parse_ms_chap1_response(Bytes value) {
  if (value.size() != kMsChapResponseSize) return fail(AuthError::kMalformedMsChapResponse);
  ByteReader reader(value);
  MsChap1Response response;
  static_cast<void>(reader.read_u8(response.ident));
  static_cast<void>(reader.read_u8(response.flags));
  response.lm_response = reader.read_bytes(kNtResponseSize);
  response.nt_response = reader.read_bytes(kNtResponseSize);
  RW_ASSERT(!reader.failed() && reader.remaining() == 0);
  return response;
}

Result<MsChap1Accept, AuthError> verify_ms_chap1(const Credential& known_good,
                                                 const MsChap1Request& request) {
  if (request.ms_chap_challenge.size() != kMsChap1ChallengeSize) {
    return fail(AuthError::kMalformedMsChapChallenge);
  }
  const auto response = parse_ms_chap1_response(request.ms_chap_response);
  if (!response) return fail(response.error());
  // RFC 2548 §2.1.3: Flags bit 0 set means "use the NT-Response".
  if ((response->flags & 0x01) == 0) return fail(AuthError::kLmResponseNotSupported);
  const auto nt_hash = nt_hash_of(known_good);
  if (!nt_hash) return fail(nt_hash.error());

  const NtResponse expected = challenge_response(request.ms_chap_challenge, *nt_hash);
  if (!constant_time_equal(expected, response->nt_response)) return fail(AuthError::kWrongPassword);

  MsChap1Accept accept{};
  if (known_good.kind == CredentialKind::kCleartext) {
    if (const auto lm_hash = lm_password_hash(known_good.secret)) {
      std::copy_n(lm_hash->begin(), 8, accept.ms_chap_mppe_keys.begin());
    }
  }
  const NtHash hash_hash = password_hash_hash(*nt_hash);
  std::copy(hash_hash.begin(), hash_hash.end(), accept.ms_chap_mppe_keys.begin() + 8);
  return accept;
}

MsChapError ms_chap1_error(std::uint8_t ident) {
  MsChapError error;
  error.octets[0] = ident;
  error.size = 1;
  append(error, "E=691 R=0");
  return error;
}

}  // namespace rw::auth
