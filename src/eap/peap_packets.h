// What PEAPv0 carries inside its tunnel (draft-josefsson-pppext-eap-tls-eap,
// [MS-PEAP] §2.2, §3.1.5.5-3.1.5.7): inner EAP packets compressed to Type
// and Type-Data, the Extensions method (Type 33) as a whole EAP packet with
// its TLVs (Result, Crypto-Binding), and the cryptobinding keys (PRF+, IPMK,
// CMK, Compound MAC, the MSK from IPMK). Pure and bounded; the peer's
// octets are untrusted (docs/limits.md "EAP-TLS").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "eap/method.h"

namespace rw::eap {

inline constexpr std::uint8_t kExtensionsType = 33;  // The EAP Extensions method (EAP-TLV).
inline constexpr std::uint16_t kTlvResult = 3;       // Result TLV: Status 1 Success, 2 Failure.
inline constexpr std::uint16_t kTlvCryptoBinding = 12;
inline constexpr std::uint16_t kTlvMandatory = 0x8000;  // M bit of the TLV Type field.
inline constexpr std::uint16_t kResultSuccess = 1;
inline constexpr std::uint16_t kResultFailure = 2;
inline constexpr std::size_t kCryptoBindingValueOctets = 56;
inline constexpr std::size_t kCryptoBindingTlvOctets = 4 + kCryptoBindingValueOctets;
inline constexpr std::size_t kCryptoBindingNonceOctets = 32;
inline constexpr std::size_t kCompoundMacOctets = 20;  // HMAC-SHA1.

// One TLV of an Extensions packet; `value` borrows from the input.
struct PeapTlv {
  std::uint16_t type = 0;  // Without the M and R bits.
  bool mandatory = false;
  Bytes value;
  Bytes whole;  // The TLV with its four-octet header (the Compound MAC covers it).
};

// Everything wrong an inner packet from the peer can be. Closed.
enum class PeapPacketError : std::uint8_t {
  kEmpty,             // No octets.
  kNotAResponse,      // An Extensions packet whose Code is not Response (2).
  kWrongIdentifier,   // Its Identifier is not the request's.
  kBadLength,         // Its Length is below the header or past the data.
  kNotExtensions,     // Its Type is not 33.
  kTruncatedTlv,      // Fewer octets than a TLV header, or a TLV Length past the end.
  kTooManyTlvs,       // More TLVs than the bound.
  kDuplicateTlv,      // A Result or Crypto-Binding TLV twice.
  kUnsupportedTlv,    // A TLV with M set that is neither Result nor Crypto-Binding.
  kNoResult,          // No Result TLV.
  kBadResult,         // A Result TLV whose value is not two octets of 1 or 2.
  kBadCryptoBinding,  // A Crypto-Binding TLV of the wrong length, version or SubType.
};
[[nodiscard]] std::string_view to_string(PeapPacketError error);

// The TLVs of Type-Data, in order; at most `tlvs_max`.
[[nodiscard]] Result<std::vector<PeapTlv>, PeapPacketError> parse_tlvs(Bytes type_data, std::size_t tlvs_max);

// The peer's Crypto-Binding TLV (SubType 1, Binding Response).
struct CryptoBindingTlv {
  Bytes nonce;         // 32 octets.
  Bytes compound_mac;  // 20 octets.
  Bytes whole;         // The whole TLV, 60 octets.
};

// The peer's answer to the Result TLV request: a whole EAP-Response of
// Type 33 (in PEAPv0 the Extensions packet keeps its EAP header).
struct ExtensionsResponse {
  std::uint16_t result = kResultFailure;
  std::optional<CryptoBindingTlv> crypto_binding;
};
[[nodiscard]] Result<ExtensionsResponse, PeapPacketError> parse_extensions_response(Bytes packet,
                                                                                    std::uint8_t identifier,
                                                                                    std::size_t tlvs_max);

// The server's EAP-Request of Type 33 with a Result TLV (M set) and, when
// given, a Crypto-Binding TLV (SubType 0) already MACed.
[[nodiscard]] std::vector<std::uint8_t> extensions_request(std::uint8_t identifier, std::uint16_t result,
                                                           std::optional<Bytes> crypto_binding_tlv);

// ---- Cryptobinding keys ([MS-PEAP] §3.1.5.5.2, §3.1.5.7) -------------------

using Ipmk = std::array<std::uint8_t, 40>;
using Cmk = std::array<std::uint8_t, kCompoundMacOctets>;
using CompoundMac = std::array<std::uint8_t, kCompoundMacOctets>;

// PEAPv0's PRF+ (as RFC 4306 §2.13 with HMAC-SHA1 and two zero octets after
// the counter): T1 = HMAC-SHA1(K, S | 0x01 | 0x00 | 0x00), Tn =
// HMAC-SHA1(K, Tn-1 | S | n | 0x00 | 0x00); the first `length` octets.
// Requires: length <= 20 * 255.
[[nodiscard]] std::vector<std::uint8_t> peap_prf_plus(Bytes key, Bytes seed, std::size_t length);

struct CompoundKeys {
  Ipmk ipmk;
  Cmk cmk;
};
// IPMK | CMK = PRF+(TempKey, "Inner Methods Compound Keys" | ISK, 60), with
// TempKey the first 40 octets of the tunnel key. Requires: temp_key 40
// octets, isk 32.
[[nodiscard]] CompoundKeys compound_keys(Bytes temp_key, Bytes isk);

// HMAC-SHA1(CMK, the Crypto-Binding TLV with its Compound MAC zeroed | the
// EAP Type 25). Requires: tlv.size() == kCryptoBindingTlvOctets.
[[nodiscard]] CompoundMac compound_mac(const Cmk& cmk, Bytes tlv);

// The server's Crypto-Binding TLV (Version 0, Received Version 0, SubType 0
// Binding Request) with `nonce` and its Compound MAC under `cmk`.
[[nodiscard]] std::array<std::uint8_t, kCryptoBindingTlvOctets> crypto_binding_request(
    const Cmk& cmk, const std::array<std::uint8_t, kCryptoBindingNonceOctets>& nonce);

// The MSK after a verified cryptobinding: the first 64 octets of CSK =
// PRF+(IPMK, "Session Key Generating Function" | 0x00, 128).
[[nodiscard]] Msk cryptobinding_msk(const Ipmk& ipmk);

}  // namespace rw::eap
