// PEAPv0's inner packets, TLVs and cryptobinding keys (peap_packets.h).
#include "eap/peap_packets.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>

#include "base/assert.h"

namespace rw::eap {

std::string_view to_string(PeapPacketError error) {
  switch (error) {
    case PeapPacketError::kEmpty:
      return "empty inner packet";
    case PeapPacketError::kNotAResponse:
      return "Extensions packet is not a Response";
    case PeapPacketError::kWrongIdentifier:
      return "Extensions packet with the wrong Identifier";
    case PeapPacketError::kBadLength:
      return "Extensions packet Length out of range";
    case PeapPacketError::kNotExtensions:
      return "inner packet is not of Type 33";
    case PeapPacketError::kTruncatedTlv:
      return "truncated TLV";
    case PeapPacketError::kTooManyTlvs:
      return "more TLVs than the bound";
    case PeapPacketError::kDuplicateTlv:
      return "Result or Crypto-Binding TLV twice";
    case PeapPacketError::kUnsupportedTlv:
      return "unsupported mandatory TLV";
    case PeapPacketError::kNoResult:
      return "no Result TLV";
    case PeapPacketError::kBadResult:
      return "malformed Result TLV";
    case PeapPacketError::kBadCryptoBinding:
      return "malformed Crypto-Binding TLV";
  }
  return "malformed inner packet";
}

namespace {

constexpr std::size_t kEapHeaderOctets = 4;  // Code, Identifier, Length (RFC 3748 §4).
constexpr std::uint8_t kCodeRequest = 1;
constexpr std::uint8_t kCodeResponse = 2;
constexpr std::uint8_t kCryptoBindingSubTypeRequest = 0;
constexpr std::uint8_t kCryptoBindingSubTypeResponse = 1;
constexpr std::uint8_t kPeapType = static_cast<std::uint8_t>(Type::kPeap);
constexpr std::string_view kCompoundKeysLabel = "Inner Methods Compound Keys";
// [MS-PEAP] §3.1.5.7: this label is followed by a NUL, the other is not.
constexpr std::string_view kSessionKeyLabel{"Session Key Generating Function\0", 32};

void put_u16(std::vector<std::uint8_t>& out, std::size_t value) {
  out.push_back(static_cast<std::uint8_t>(value >> 8));
  out.push_back(static_cast<std::uint8_t>(value & 0xFF));
}

Result<CryptoBindingTlv, PeapPacketError> crypto_binding_of(const PeapTlv& tlv) {
  // [MS-PEAP] §2.2.8.1.1: Reserved, Version 0, Received Version 0, SubType.
  if (tlv.value.size() != kCryptoBindingValueOctets || tlv.value[1] != 0 || tlv.value[2] != 0 ||
      tlv.value[3] != kCryptoBindingSubTypeResponse) {
    return fail(PeapPacketError::kBadCryptoBinding);
  }
  return CryptoBindingTlv{.nonce = tlv.value.subspan(4, kCryptoBindingNonceOctets),
                          .compound_mac = tlv.value.subspan(4 + kCryptoBindingNonceOctets),
                          .whole = tlv.whole};
}

}  // namespace

Result<std::vector<PeapTlv>, PeapPacketError> parse_tlvs(Bytes type_data, std::size_t tlvs_max) {
  std::vector<PeapTlv> tlvs;
  ByteReader reader(type_data);
  while (reader.remaining() > 0) {
    if (tlvs.size() == tlvs_max) return fail(PeapPacketError::kTooManyTlvs);
    const std::size_t start = reader.offset();
    std::uint16_t type = 0;
    std::uint16_t length = 0;
    if (!reader.read_u16(type) || !reader.read_u16(length) || reader.remaining() < length) {
      return fail(PeapPacketError::kTruncatedTlv);
    }
    PeapTlv tlv{.type = static_cast<std::uint16_t>(type & 0x3FFF),
                .mandatory = (type & kTlvMandatory) != 0,
                .value = reader.read_bytes(length),
                .whole = type_data.subspan(start, 4 + std::size_t{length})};
    tlvs.push_back(tlv);
  }
  return tlvs;
}

Result<ExtensionsResponse, PeapPacketError> parse_extensions_response(Bytes packet, std::uint8_t identifier,
                                                                      std::size_t tlvs_max) {
  if (packet.empty()) return fail(PeapPacketError::kEmpty);
  if (packet[0] != kCodeResponse) return fail(PeapPacketError::kNotAResponse);
  if (packet.size() < kEapHeaderOctets + 1) return fail(PeapPacketError::kBadLength);
  if (packet[1] != identifier) return fail(PeapPacketError::kWrongIdentifier);
  const std::size_t length = std::size_t{packet[2]} << 8 | packet[3];
  // RFC 3748 §4.1: octets past Length are padding; Length past the data is an error.
  if (length < kEapHeaderOctets + 1 || length > packet.size()) return fail(PeapPacketError::kBadLength);
  if (packet[4] != kExtensionsType) return fail(PeapPacketError::kNotExtensions);
  auto tlvs = parse_tlvs(packet.subspan(kEapHeaderOctets + 1, length - kEapHeaderOctets - 1), tlvs_max);
  if (!tlvs) return fail(tlvs.error());
  ExtensionsResponse response;
  bool have_result = false;
  for (const PeapTlv& tlv : *tlvs) {
    if (tlv.type == kTlvResult) {
      if (have_result) return fail(PeapPacketError::kDuplicateTlv);
      if (tlv.value.size() != 2) return fail(PeapPacketError::kBadResult);
      response.result = static_cast<std::uint16_t>(tlv.value[0] << 8 | tlv.value[1]);
      if (response.result != kResultSuccess && response.result != kResultFailure) {
        return fail(PeapPacketError::kBadResult);
      }
      have_result = true;
    } else if (tlv.type == kTlvCryptoBinding) {
      if (response.crypto_binding) return fail(PeapPacketError::kDuplicateTlv);
      auto binding = crypto_binding_of(tlv);
      if (!binding) return fail(binding.error());
      response.crypto_binding = *binding;
    } else if (tlv.mandatory) {
      return fail(PeapPacketError::kUnsupportedTlv);
    }
  }
  if (!have_result) return fail(PeapPacketError::kNoResult);
  return response;
}

std::vector<std::uint8_t> extensions_request(std::uint8_t identifier, std::uint16_t result,
                                             std::optional<Bytes> crypto_binding_tlv) {
  std::vector<std::uint8_t> out{kCodeRequest, identifier, 0, 0, kExtensionsType};
  put_u16(out, kTlvMandatory | kTlvResult);
  put_u16(out, 2);
  put_u16(out, result);
  if (crypto_binding_tlv) out.insert(out.end(), crypto_binding_tlv->begin(), crypto_binding_tlv->end());
  out[2] = static_cast<std::uint8_t>(out.size() >> 8);
  out[3] = static_cast<std::uint8_t>(out.size() & 0xFF);
  return out;
}

std::vector<std::uint8_t> peap_prf_plus(Bytes key, Bytes seed, std::size_t length) {
  RW_ASSERT(length <= std::size_t{20} * 255);
  std::vector<std::uint8_t> out;
  out.reserve(length + 20);
  std::vector<std::uint8_t> input;
  std::array<std::uint8_t, 20> block{};
  std::size_t block_octets = 0;
  for (unsigned counter = 1; out.size() < length; ++counter) {
    input.assign(block.begin(), block.begin() + static_cast<std::ptrdiff_t>(block_octets));
    input.insert(input.end(), seed.begin(), seed.end());
    input.push_back(static_cast<std::uint8_t>(counter));
    input.push_back(0);
    input.push_back(0);
    unsigned int mac_octets = 0;
    const bool computed = HMAC(EVP_sha1(), key.data(), static_cast<int>(key.size()), input.data(),
                               input.size(), block.data(), &mac_octets) != nullptr;
    RW_ASSERT(computed && mac_octets == block.size());
    block_octets = block.size();
    out.insert(out.end(), block.begin(), block.end());
  }
  std::fill(input.begin(), input.end(), 0);
  std::fill(block.begin(), block.end(), 0);
  out.resize(length);
  return out;
}

CompoundKeys compound_keys(Bytes temp_key, Bytes isk) {
  RW_ASSERT(temp_key.size() == 40 && isk.size() == 32);
  std::vector<std::uint8_t> seed(kCompoundKeysLabel.begin(), kCompoundKeysLabel.end());
  seed.insert(seed.end(), isk.begin(), isk.end());
  std::vector<std::uint8_t> keys = peap_prf_plus(temp_key, seed, 60);
  CompoundKeys out{};
  std::copy_n(keys.begin(), out.ipmk.size(), out.ipmk.begin());
  std::copy_n(keys.begin() + 40, out.cmk.size(), out.cmk.begin());
  std::fill(keys.begin(), keys.end(), 0);
  std::fill(seed.begin(), seed.end(), 0);
  return out;
}

CompoundMac compound_mac(const Cmk& cmk, Bytes tlv) {
  RW_ASSERT(tlv.size() == kCryptoBindingTlvOctets);
  std::array<std::uint8_t, kCryptoBindingTlvOctets + 1> buffer{};
  std::copy(tlv.begin(), tlv.end(), buffer.begin());
  std::fill_n(buffer.begin() + 8 + kCryptoBindingNonceOctets, kCompoundMacOctets, 0);
  buffer.back() = kPeapType;
  CompoundMac mac{};
  unsigned int mac_octets = 0;
  const bool computed = HMAC(EVP_sha1(), cmk.data(), static_cast<int>(cmk.size()), buffer.data(),
                             buffer.size(), mac.data(), &mac_octets) != nullptr;
  RW_ASSERT(computed && mac_octets == mac.size());
  return mac;
}

std::array<std::uint8_t, kCryptoBindingTlvOctets> crypto_binding_request(
    const Cmk& cmk, const std::array<std::uint8_t, kCryptoBindingNonceOctets>& nonce) {
  std::array<std::uint8_t, kCryptoBindingTlvOctets> tlv{};
  tlv[1] = static_cast<std::uint8_t>(kTlvCryptoBinding);
  tlv[3] = static_cast<std::uint8_t>(kCryptoBindingValueOctets);
  tlv[7] = kCryptoBindingSubTypeRequest;  // Reserved, Version 0 and Received Version 0 stay zero.
  std::copy(nonce.begin(), nonce.end(), tlv.begin() + 8);
  const CompoundMac mac = compound_mac(cmk, tlv);
  std::copy(mac.begin(), mac.end(), tlv.begin() + 8 + kCryptoBindingNonceOctets);
  return tlv;
}

Msk cryptobinding_msk(const Ipmk& ipmk) {
  std::vector<std::uint8_t> csk = peap_prf_plus(ipmk, as_bytes(kSessionKeyLabel), 128);
  Msk msk{};
  std::copy_n(csk.begin(), msk.size(), msk.begin());
  std::fill(csk.begin(), csk.end(), 0);
  return msk;
}

}  // namespace rw::eap
