// peap_packets.h: the Extensions request's layout, the peer's Extensions
// response refused for each named reason, PRF+ and the Compound MAC.
#include "eap/peap_packets.h"

#include <gtest/gtest.h>

#include <vector>

namespace rw::eap {
namespace {

using Octets = std::vector<std::uint8_t>;

Octets binding_response(std::uint8_t sub_type) {
  Octets tlv{0, 12, 0, 56, 0, 0, 0, sub_type};
  tlv.insert(tlv.end(), 32, 0x11);
  tlv.insert(tlv.end(), 20, 0x22);
  return tlv;
}

Octets response(const Octets& tlvs, std::uint8_t identifier = 9) {
  Octets out(5 + tlvs.size());
  out[0] = 2;
  out[1] = identifier;
  out[3] = static_cast<std::uint8_t>(out.size());
  out[4] = 33;
  std::copy(tlvs.begin(), tlvs.end(), out.begin() + 5);
  return out;
}

const Octets kSuccess{0x80, 3, 0, 2, 0, 1};

TEST(ExtensionsRequest, IsAWholeEapRequestWithAMandatoryResultTlv) {
  EXPECT_EQ(extensions_request(7, kResultFailure, std::nullopt),
            (Octets{1, 7, 0, 11, 33, 0x80, 3, 0, 2, 0, 2}));
  const Octets binding(60, 0xAB);
  const Octets with = extensions_request(7, kResultSuccess, binding);
  EXPECT_EQ(with.size(), 71u);
  EXPECT_EQ(with[3], 71);
  EXPECT_EQ(Octets(with.begin() + 11, with.end()), binding);
}

TEST(ParseExtensionsResponse, ReadsResultAndCryptoBinding) {
  Octets tlvs = kSuccess;
  const Octets binding = binding_response(1);
  tlvs.insert(tlvs.end(), binding.begin(), binding.end());
  tlvs.insert(tlvs.end(), {0, 7, 0, 1, 0xFF});  // An optional TLV nobody knows: ignored.
  const Octets packet = response(tlvs);
  auto parsed = parse_extensions_response(packet, 9, 16);
  ASSERT_TRUE(parsed) << to_string(parsed.error());
  EXPECT_EQ(parsed->result, kResultSuccess);
  ASSERT_TRUE(parsed->crypto_binding.has_value());
  EXPECT_EQ(parsed->crypto_binding->whole.size(), 60u);
  EXPECT_EQ(parsed->crypto_binding->compound_mac[0], 0x22);
}

TEST(ParseExtensionsResponse, RefusesEachMalformationByName) {
  Octets two_results = kSuccess;
  two_results.insert(two_results.end(), kSuccess.begin(), kSuccess.end());
  Octets many;
  for (int i = 0; i < 17; ++i) many.insert(many.end(), {0, 7, 0, 0});
  Octets request = response(kSuccess);
  request[0] = 1;
  Octets long_length = response(kSuccess);
  long_length[3] = 40;
  Octets not_extensions = response(kSuccess);
  not_extensions[4] = 26;
  const struct {
    Octets packet;
    PeapPacketError error;
  } cases[] = {
      {{}, PeapPacketError::kEmpty},
      {request, PeapPacketError::kNotAResponse},
      {response(kSuccess, 8), PeapPacketError::kWrongIdentifier},
      {long_length, PeapPacketError::kBadLength},
      {not_extensions, PeapPacketError::kNotExtensions},
      {response({0x80, 3, 0, 2, 0}), PeapPacketError::kTruncatedTlv},
      {response(many), PeapPacketError::kTooManyTlvs},
      {response(two_results), PeapPacketError::kDuplicateTlv},
      {response({0x80, 9, 0, 0}), PeapPacketError::kUnsupportedTlv},
      {response({0, 7, 0, 0}), PeapPacketError::kNoResult},
      {response({0x80, 3, 0, 2, 0, 3}), PeapPacketError::kBadResult},
      {response([] {
         Octets t = kSuccess;
         const Octets b = binding_response(0);  // A Binding Request from the peer.
         t.insert(t.end(), b.begin(), b.end());
         return t;
       }()),
       PeapPacketError::kBadCryptoBinding},
  };
  for (const auto& c : cases) {
    auto parsed = parse_extensions_response(c.packet, 9, 16);
    ASSERT_FALSE(parsed) << to_string(c.error);
    EXPECT_EQ(parsed.error(), c.error) << to_string(c.error) << " got " << to_string(parsed.error());
  }
}

TEST(PeapPrfPlus, ShorterOutputIsAPrefixAndKeysMatter) {
  const Octets key(40, 0x01);
  const Octets seed{'s', 'e', 'e', 'd'};
  const Octets long_output = peap_prf_plus(key, seed, 128);
  const Octets short_output = peap_prf_plus(key, seed, 60);
  EXPECT_EQ(Octets(long_output.begin(), long_output.begin() + 60), short_output);
  EXPECT_NE(peap_prf_plus(Octets(40, 0x02), seed, 60), short_output);
}

TEST(CryptoBindingRequest, CarriesAMacThatVerifiesAndChangesWithTheNonce) {
  const CompoundKeys keys = compound_keys(Octets(40, 0x05), Octets(32, 0x06));
  std::array<std::uint8_t, kCryptoBindingNonceOctets> nonce{};
  nonce.fill(0x07);
  const auto tlv = crypto_binding_request(keys.cmk, nonce);
  EXPECT_EQ(Octets(tlv.begin(), tlv.begin() + 8), (Octets{0, 12, 0, 56, 0, 0, 0, 0}));
  const CompoundMac mac = compound_mac(keys.cmk, tlv);
  EXPECT_TRUE(std::equal(mac.begin(), mac.end(), tlv.begin() + 40));
  nonce[0] = 0x08;
  EXPECT_NE(crypto_binding_request(keys.cmk, nonce), tlv);
  EXPECT_NE(cryptobinding_msk(keys.ipmk), cryptobinding_msk(Ipmk{}));
}

TEST(PeapPacketError, EveryErrorHasAName) {
  for (int e = 0; e <= static_cast<int>(PeapPacketError::kBadCryptoBinding); ++e) {
    EXPECT_NE(to_string(static_cast<PeapPacketError>(e)), "malformed inner packet") << e;
  }
}

}  // namespace
}  // namespace rw::eap
