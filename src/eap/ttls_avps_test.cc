// ttls_avps.h: Diameter AVPs inside EAP-TTLS (RFC 5281 §10.1), each
// malformed form refused with its own error.
#include "eap/ttls_avps.h"

#include <gtest/gtest.h>

#include <vector>

namespace rw::eap {
namespace {

using Octets = std::vector<std::uint8_t>;

TEST(Avps, EncodeGivesHeaderDataAndPadding) {
  const Octets avp = encode_avp(kAvpUserName, as_bytes("bob"));
  EXPECT_EQ(avp, (Octets{0, 0, 0, 1, 0x40, 0, 0, 11, 'b', 'o', 'b', 0}));
}

TEST(Avps, ParseReadsWhatEncodeWrote) {
  Octets both = encode_avp(kAvpUserName, as_bytes("alice"));
  const Octets password = encode_avp(kAvpUserPassword, as_bytes("secret"), /*mandatory=*/false);
  both.insert(both.end(), password.begin(), password.end());
  auto avps = parse_avps(both);
  ASSERT_TRUE(avps.has_value()) << to_string(avps.error());
  ASSERT_EQ(avps->size(), 2u);
  EXPECT_EQ((*avps)[0].code, kAvpUserName);
  EXPECT_EQ((*avps)[0].flags, kAvpFlagMandatory);
  EXPECT_EQ(as_chars((*avps)[0].data), "alice");
  EXPECT_EQ((*avps)[1].code, kAvpUserPassword);
  EXPECT_EQ((*avps)[1].flags, 0);
  EXPECT_EQ(as_chars((*avps)[1].data), "secret");
}

TEST(Avps, ReadsVendorIdAndToleratesMissingLastPadding) {
  const Octets vendor{0, 0, 0, 26, 0xC0, 0, 0, 13, 0, 0, 0x01, 0x37, 'x'};  // Microsoft (311).
  auto avps = parse_avps(vendor);
  ASSERT_TRUE(avps.has_value());
  EXPECT_EQ((*avps)[0].vendor_id, std::optional<std::uint32_t>(311));
  EXPECT_EQ(as_chars((*avps)[0].data), "x");
}

TEST(Avps, RefusesEachMalformedForm) {
  EXPECT_EQ(parse_avps(Octets{0, 0, 0, 1, 0x40, 0}).error(), AvpError::kTruncatedHeader);
  EXPECT_EQ(parse_avps(Octets{0, 0, 0, 1, 0xC0, 0, 0, 12, 0}).error(), AvpError::kTruncatedHeader);
  EXPECT_EQ(parse_avps(Octets{0, 0, 0, 1, 0x40, 0, 0, 7}).error(), AvpError::kLengthTooShort);
  EXPECT_EQ(parse_avps(Octets{0, 0, 0, 1, 0xC0, 0, 0, 8, 0, 0, 0, 0}).error(), AvpError::kLengthTooShort);
  EXPECT_EQ(parse_avps(Octets{0, 0, 0, 1, 0x40, 0, 0, 20, 'a'}).error(), AvpError::kLengthPastEnd);
  Octets many;
  for (int i = 0; i < 3; ++i) {
    const Octets one = encode_avp(kAvpUserName, as_bytes("a"));
    many.insert(many.end(), one.begin(), one.end());
  }
  EXPECT_EQ(parse_avps(many, 2).error(), AvpError::kTooManyAvps);
  EXPECT_TRUE(parse_avps(many, 3).has_value());
}

TEST(AvpError, EveryErrorHasAName) {
  for (int e = 0; e <= static_cast<int>(AvpError::kTooManyAvps); ++e) {
    EXPECT_NE(to_string(static_cast<AvpError>(e)), "unknown AVP error") << e;
  }
}

}  // namespace
}  // namespace rw::eap
