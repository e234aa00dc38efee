// MS-CHAP as RADIUS carries it (RFC 2548): MS-CHAPv2 (RFC 2759) with the
// MS-CHAP2-Success authenticator response and MPPE keys (RFC 3079), and
// MS-CHAPv1 (RFC 2433) with MS-CHAP-MPPE-Keys material. Works from a
// Cleartext-Password or an NT-Password. DES and MD4 come from nettle.
// Pure: no I/O, no clock, no logging, no allocation; randomness is passed in.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "auth/auth_error.h"
#include "auth/mppe.h"
#include "auth/password.h"
#include "base/bytes.h"
#include "base/random.h"
#include "base/result.h"

namespace rw::auth {

inline constexpr std::size_t kMsChap2ChallengeSize = 16;  // RFC 2548 §2.3.2 (MS-CHAP-Challenge for v2).
inline constexpr std::size_t kMsChap1ChallengeSize = 8;   // RFC 2433 §4 (MS-CHAP-Challenge for v1).
inline constexpr std::size_t kMsChapResponseSize =
    50;  // RFC 2548 §2.1.3 and §2.3.2, without Vendor-Type/Length.
inline constexpr std::size_t kNtResponseSize = 24;
inline constexpr std::size_t kPeerChallengeSize = 16;
inline constexpr std::size_t kAuthenticatorResponseSize = 42;  // "S=" + 40 hex digits.
inline constexpr std::size_t kMsChap2SuccessSize = 1 + kAuthenticatorResponseSize;
inline constexpr std::size_t kMsChapMppeKeysSize = 32;  // RFC 2548 §2.4.1: LM-Key 8 + NT-Key 16 + padding 8.

using DesBlock = std::array<std::uint8_t, 8>;
using NtResponse = std::array<std::uint8_t, kNtResponseSize>;
using LmHash = std::array<std::uint8_t, 16>;

// ---- Building blocks (RFC 2759 §8), exposed for the vectors -----------------

// Spreads 7 key octets over 8 and sets odd parity in each low bit (RFC 2759
// §8.6, example in §9.3). Requires: seven.size() == 7.
[[nodiscard]] DesBlock expand_des_key(Bytes seven);

// RFC 2759 §8.6 DesEncrypt: DES-ECB of one 8-octet block under a 7-octet key.
// Weak keys are used as they come (the third key is mostly zero padding).
// Requires: clear.size() == 8, key.size() == 7.
[[nodiscard]] DesBlock des_encrypt_block(Bytes clear, Bytes key);

// The user name that enters ChallengeHash: everything after the last '\'
// ("DOMAIN\user" becomes "user"), as Windows strips the domain (RFC 2759 §8.2
// hashes the name "excluding any prepended domain name"). Other forms, such
// as "user@realm" or "host/name", are left as they are.
[[nodiscard]] std::string_view ms_chap_user_name(std::string_view user_name);

// RFC 2759 §8.2 ChallengeHash: the first 8 octets of
// SHA-1(PeerChallenge + AuthenticatorChallenge + UserName). user_name is used
// as given (call ms_chap_user_name first). Requires: both challenges 16 octets.
[[nodiscard]] DesBlock challenge_hash(Bytes peer_challenge, Bytes authenticator_challenge,
                                      std::string_view user_name);

// RFC 2759 §8.5 ChallengeResponse (also RFC 2433 §A.5 for MS-CHAPv1): the
// challenge DES-encrypted under each 7-octet third of the NT hash padded with
// zeros to 21 octets. Requires: challenge.size() == 8.
[[nodiscard]] NtResponse challenge_response(Bytes challenge, const NtHash& nt_hash);

// RFC 2759 §8.7 GenerateAuthenticatorResponse: "S=" and 40 upper-case hex
// digits. user_name as for challenge_hash.
// Requires: nt_response 24 octets, both challenges 16 octets.
[[nodiscard]] std::array<char, kAuthenticatorResponseSize> authenticator_response(
    const NtHash& nt_hash, Bytes nt_response, Bytes peer_challenge, Bytes authenticator_challenge,
    std::string_view user_name);

// RFC 2433 §A.2 LmPasswordHash: DES of "KGS!@#$%" under the upper-cased
// password padded to 14 octets. nullopt when the password has no LAN Manager
// hash: longer than 14 octets, or not ASCII (upper-casing an OEM code page is
// out of scope).
[[nodiscard]] std::optional<LmHash> lm_password_hash(std::string_view password);

// The NT hash a credential yields: hashed from a Cleartext-Password (an
// empty one gives kEmptyPassword), as stored for an NT-Password;
// kMsChapNeedsNtHash for crypt and digest forms.
[[nodiscard]] Result<NtHash, AuthError> nt_hash_of(const Credential& known_good);

// ---- MS-CHAPv2 ---------------------------------------------------------------

// The fields of an MS-CHAP2-Response value (RFC 2548 §2.3.2), borrowed.
struct MsChap2Response {
  std::uint8_t ident = 0;
  std::uint8_t flags = 0;
  Bytes peer_challenge;  // 16 octets.
  Bytes nt_response;     // 24 octets.
};

// Splits an MS-CHAP2-Response value: Ident(1) Flags(1) Peer-Challenge(16)
// Reserved(8) NT-Response(24). Flags and Reserved are not checked: RFC 2759
// §4 reserves them, and refusing a client that sets them gains nothing.
[[nodiscard]] Result<MsChap2Response, AuthError> parse_ms_chap2_response(Bytes value);

// The peer's side of parse_ms_chap2_response: the value with Flags and
// Reserved zero. For tests and the load generator.
[[nodiscard]] std::array<std::uint8_t, kMsChapResponseSize> ms_chap2_response_value(
    std::uint8_t ident, Bytes peer_challenge, const NtResponse& nt_response);

// Both sides of RFC 2759 §8 for one request, as a NAS and its peer would
// make them: fresh authenticator (NAS) and peer challenges from `random`, the
// NT-Response under `nt_hash` with the name as the peer hashes it
// (ms_chap_user_name of `user_name`), the MS-CHAP2-Response value carrying
// it, and the authenticator response a correct server answers with. For
// tests and the load generator.
struct MsChap2PeerResponse {
  std::array<std::uint8_t, kMsChap2ChallengeSize> authenticator_challenge;  // MS-CHAP-Challenge
  std::array<std::uint8_t, kPeerChallengeSize> peer_challenge;
  NtResponse nt_response;
  std::array<std::uint8_t, kMsChapResponseSize> value;  // MS-CHAP2-Response
  std::array<char, kAuthenticatorResponseSize> authenticator_response;
};
[[nodiscard]] MsChap2PeerResponse ms_chap2_peer_response(std::uint8_t ident, std::string_view user_name,
                                                         const NtHash& nt_hash, RandomSource& random);

// What an MS-CHAPv2 Access-Request carries, borrowed from the packet.
struct MsChap2Request {
  Bytes ms_chap_challenge;     // MS-CHAP-Challenge: the 16-octet authenticator challenge.
  Bytes ms_chap2_response;     // MS-CHAP2-Response: 50 octets.
  std::string_view user_name;  // User-Name as sent; the domain is stripped here.
};

// What an Access-Accept for MS-CHAPv2 carries.
struct MsChap2Accept {
  // MS-CHAP2-Success value (RFC 2548 §2.3.3): Ident + "S=<40 hex>".
  std::array<std::uint8_t, kMsChap2SuccessSize> ms_chap2_success;
  // Start keys for MS-MPPE-Send-Key and MS-MPPE-Recv-Key, still in clear.
  MppeKeys mppe;
};

// Verifies an MS-CHAPv2 NT-Response against known_good (Cleartext-Password
// or NT-Password). Fails with kMalformedMsChapChallenge,
// kMalformedMsChapResponse, kMsChapNeedsNtHash, the NT-hash errors
// (kInvalidUtf8, kPasswordTooLong) or kWrongPassword. Compares in constant time.
[[nodiscard]] Result<MsChap2Accept, AuthError> verify_ms_chap2(const Credential& known_good,
                                                               const MsChap2Request& request);

// An MS-CHAP-Error value (RFC 2548 §2.1.5) in a fixed buffer.
struct MsChapError {
  std::array<std::uint8_t, 80> octets{};
  std::size_t size = 0;
  [[nodiscard]] Bytes value() const { return Bytes(octets.data(), size); }
};

// The MS-CHAP-Error for a failed MS-CHAPv2 authentication (RFC 2759 §6):
// Ident + "E=691 R=0 C=<32 hex> V=3 M=Authentication failed", where C is a
// fresh 16-octet challenge from random. R=0: no retry, since a retry would
// need a new Access-Request anyway.
[[nodiscard]] MsChapError ms_chap2_error(std::uint8_t ident, RandomSource& random);

// The Ident to echo in MS-CHAP2-Success or MS-CHAP-Error: the first octet of
// the response attribute, or 0 when it is empty.
[[nodiscard]] std::uint8_t ms_chap_ident(Bytes response_value);

// ---- MS-CHAPv1 ---------------------------------------------------------------

// The fields of an MS-CHAP-Response value (RFC 2548 §2.1.3), borrowed.
struct MsChap1Response {
  std::uint8_t ident = 0;
  std::uint8_t flags = 0;  // 1: use the NT-Response.
  Bytes lm_response;       // 24 octets.
  Bytes nt_response;       // 24 octets.
};

// Splits an MS-CHAP-Response value: Ident(1) Flags(1) LM-Response(24) NT-Response(24).
[[nodiscard]] Result<MsChap1Response, AuthError> parse_ms_chap1_response(Bytes value);

// What an MS-CHAPv1 Access-Request carries (as `radtest -t mschap` sends it).
struct MsChap1Request {
  Bytes ms_chap_challenge;  // MS-CHAP-Challenge: 8 octets.
  Bytes ms_chap_response;   // MS-CHAP-Response: 50 octets.
};

struct MsChap1Accept {
  // MS-CHAP-MPPE-Keys plaintext (RFC 2548 §2.4.1): the first 8 octets of the
  // LAN Manager hash (zeros when there is none), the 16-octet
  // PasswordHashHash (MD4 of the NT hash, as Windows and FreeRADIUS use), and
  // 8 zero octets of padding. The gateway encrypts it like User-Password.
  std::array<std::uint8_t, kMsChapMppeKeysSize> ms_chap_mppe_keys;
};

// Verifies an MS-CHAPv1 NT-Response (RFC 2433 §A.5) against known_good.
// Only the NT-Response is accepted: Flags without bit 0 asks for the LAN
// Manager response, refused with kLmResponseNotSupported (LM is broken).
[[nodiscard]] Result<MsChap1Accept, AuthError> verify_ms_chap1(const Credential& known_good,
                                                               const MsChap1Request& request);

// The MS-CHAP-Error for a failed MS-CHAPv1 authentication (RFC 2433 §6):
// Ident + "E=691 R=0".
[[nodiscard]] MsChapError ms_chap1_error(std::uint8_t ident);

}  // namespace rw::auth
