// Tests of records, record keys (docs/design.md invariant 2) and FreeRADIUS
// session keys (policy.d/accounting acct_unique).
#include "accounting/record.h"

#include <gtest/gtest.h>

#include "accounting/accounting_request_for_test.h"
#include "accounting/entry.h"

namespace rw::accounting {
namespace {

using testing::AccountingRequest;
using testing::record_of;
using testing::RequestSpec;

TEST(MakeRecord, RefusesRequestWithoutStatusType) {
  RequestSpec spec;
  spec.omit_status_type = true;
  auto record = make_record(AccountingRequest(spec).packet(), "nas1", 0, testing::default_recipe());
  ASSERT_FALSE(record.has_value());
  EXPECT_EQ(record.error(), RecordError::kNoStatusType);
}

TEST(MakeRecord, RefusesRequestWithoutSessionId) {
  RequestSpec spec;
  spec.omit_session_id = true;
  auto record = make_record(AccountingRequest(spec).packet(), "nas1", 0, testing::default_recipe());
  ASSERT_FALSE(record.has_value());
  EXPECT_EQ(record.error(), RecordError::kNoSessionId);
}

TEST(MakeRecord, RefusesOverlongClientShortname) {
  auto record = make_record(AccountingRequest(RequestSpec{}).packet(), std::string(kClientNameMax + 1, 'n'),
                            0, testing::default_recipe());
  ASSERT_FALSE(record.has_value());
  EXPECT_EQ(record.error(), RecordError::kClientNameTooLong);
}

TEST(MakeRecord, RefusesOtherCodes) {
  std::array<std::uint8_t, radius::kMaxPacketLength> buffer{};
  radius::PacketBuilder builder(buffer);
  builder.begin(radius::Code::kAccessRequest, 1, std::array<std::uint8_t, 16>{});
  builder.add_u32(radius::attr::kAcctStatusType, status::kStart);
  builder.add(radius::attr::kAcctSessionId, as_bytes("abc"));
  auto packet = radius::Packet::parse(*builder.finish());
  ASSERT_TRUE(packet.has_value());
  auto record = make_record(*packet, "nas1", 0, testing::default_recipe());
  ASSERT_FALSE(record.has_value());
  EXPECT_EQ(record.error(), RecordError::kNotAccountingRequest);
}

TEST(RecordError, EveryReasonHasAName) {
  for (std::size_t i = 0; i < kRecordErrorCount; ++i) {
    EXPECT_NE(to_string(static_cast<RecordError>(i)), "unknown") << i;
  }
}

TEST(MakeRecord, DropsMessageAuthenticatorAndProxyState) {
  RequestSpec spec;
  spec.message_authenticator = true;
  spec.proxy_state = "hop";
  const Record record = record_of(spec);
  EXPECT_FALSE(record.find(radius::attr::kMessageAuthenticator).has_value());
  EXPECT_FALSE(record.find(radius::attr::kProxyState).has_value());
  EXPECT_TRUE(record.find(radius::attr::kUserName).has_value());
  EXPECT_EQ(record.status_type, status::kStart);
  EXPECT_EQ(record.client, "nas1");
}

TEST(MakeRecord, EventTimeIsReceivedMinusDelay) {
  RequestSpec spec;
  spec.delay_s = 5;
  EXPECT_EQ(record_of(spec, 1'000'000).event_unix_ms, 1'000'000 - 5'000);
}

TEST(MakeRecord, EventTimeIsEventTimestampWhenPresent) {
  RequestSpec spec;
  spec.delay_s = 5;
  spec.event_timestamp = 1'700'000'000;
  EXPECT_EQ(record_of(spec, 1'000'000).event_unix_ms, 1'700'000'000'000);
}

TEST(RecordKey, RetransmissionWithSameIdentifierIsOneKey) {
  RequestSpec spec;
  spec.identifier = 9;
  EXPECT_EQ(record_of(spec, 1000).key, record_of(spec, 4000).key);
}

TEST(RecordKey, ResendWithNewIdentifierAndLargerDelayIsOneKey) {
  RequestSpec first;
  first.identifier = 9;
  first.delay_s = 0;
  first.message_authenticator = true;
  RequestSpec resend = first;
  resend.identifier = 10;
  resend.delay_s = 30;
  EXPECT_EQ(record_of(first, 1000).key, record_of(resend, 31000).key);
}

TEST(RecordKey, GatewayResubmissionIsOneKey) {
  const Record record = record_of(RequestSpec{});
  std::vector<std::uint8_t> body;
  encode_record(record, body);
  auto again = validate_record(body);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->key, record.key);
}

TEST(RecordKey, ProxyStateDoesNotChangeTheKey) {
  RequestSpec via_proxy;
  via_proxy.proxy_state = "proxy-1";
  EXPECT_EQ(record_of(RequestSpec{}).key, record_of(via_proxy).key);
}

TEST(RecordKey, DifferentEventsHaveDifferentKeys) {
  RequestSpec start;
  RequestSpec interim;
  interim.status_type = status::kInterimUpdate;
  interim.input_octets = 100;
  RequestSpec later = interim;
  later.input_octets = 200;
  EXPECT_NE(record_of(start).key, record_of(interim).key);
  EXPECT_NE(record_of(interim).key, record_of(later).key);
  EXPECT_NE(record_of(start, 0, "nas1").key, record_of(start, 0, "nas2").key);
}

// Known answers, computed outside radiusward from docs/wire_formats.md
// "Record key" (Python hashlib: SHA-256 of 0x01, the client's length and
// name, the kept TLVs stably sorted by type; the first 16 bytes). Keys are
// stored in ledgers and compared across gateway versions, so any change of
// how they are computed must fail here.
TEST(RecordKey, MatchesTheDocumentedFormula) {
  EXPECT_EQ(record_of(RequestSpec{}).key.hex(), "6fa1e2acc27de7b48f9a0ae40d9a44b9");
  RequestSpec stop;
  stop.status_type = status::kStop;
  stop.session_time_s = 60;
  stop.class_value = "class-a";
  stop.delay_s = 5;  // excluded from the key
  EXPECT_EQ(record_of(stop).key.hex(), "83c5b2ebfdfd7b5683889bde3b7ae13a");
}

TEST(RecordKey, ByteIdenticalInterimUpdatesAreOneKey) {
  // Intended: two Interim-Updates with identical attributes carry no new
  // information (docs/wire_formats.md "Record key").
  RequestSpec interim;
  interim.status_type = status::kInterimUpdate;
  interim.session_time_s = 60;
  EXPECT_EQ(record_of(interim, 1000).key, record_of(interim, 61000).key);
}

// Expected values: `echo -n TEXT | md5sum`, the text FreeRADIUS 3.2's
// acct_unique policy hashes (/etc/freeradius/3.0/policy.d/accounting).
TEST(SessionKey, MatchesFreeRadiusAcctUniqueSessionId) {
  const AccountingRequest request{RequestSpec{}};
  EXPECT_EQ(testing::default_recipe().session_text(request.packet()), "bob,abc123,10.0.0.1,,,7");
  EXPECT_EQ(testing::default_recipe().session_key(request.packet()).hex(),
            "e634e1354c5c56587062ffc5e0055165");
}

TEST(SessionKey, PrefersNasIpv6AddressAndUsesNasPortId) {
  const auto dictionary = radius::Dictionary::builtin();
  std::array<std::uint8_t, radius::kMaxPacketLength> buffer{};
  radius::PacketBuilder builder(buffer);
  builder.begin(radius::Code::kAccountingRequest, 1);
  builder.add_u32(radius::attr::kAcctStatusType, status::kStart);
  builder.add(radius::attr::kUserName, as_bytes("bob"));
  builder.add(radius::attr::kAcctSessionId, as_bytes("abc123"));
  builder.add(radius::attr::kNasIpAddress, std::array<std::uint8_t, 4>{10, 0, 0, 1});
  builder.add(radius::attr::kNasIpv6Address,
              std::array<std::uint8_t, 16>{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1});
  builder.add(radius::attr::kNasIdentifier, as_bytes("nas-a"));
  builder.add(radius::attr::kNasPortId, as_bytes("port-9"));
  builder.add_u32(radius::attr::kNasPort, 7);
  auto wire = builder.finish();
  ASSERT_TRUE(wire.has_value());
  auto packet = radius::Packet::parse(*wire);
  ASSERT_TRUE(packet.has_value());
  EXPECT_EQ(testing::default_recipe().session_text(*packet), "bob,abc123,2001:db8::1,nas-a,port-9,7");
  EXPECT_EQ(testing::default_recipe().session_key(*packet).hex(), "804ef3449f7351a399aa7b4bd69abff1");
}

TEST(SessionKey, UsesClassShortcutOfInsertAcctClass) {
  RequestSpec spec;
  spec.class_value = "ai:0123456789abcdef0123456789ABCDEF";
  const AccountingRequest request(spec);
  EXPECT_EQ(testing::default_recipe().session_key(request.packet()).hex(),
            "182cd8d8c5c5f4bd4007369b2aa3ec9a");
}

TEST(SessionKey, IgnoresClassWithoutExactPrefix) {
  RequestSpec spec;
  spec.class_value = "AI:0123456789abcdef0123456789abcdef";
  const AccountingRequest request(spec);
  EXPECT_EQ(testing::default_recipe().session_key(request.packet()).hex(),
            "e634e1354c5c56587062ffc5e0055165");
}

// The text reads each attribute as Packet::find does — the first of its
// type — and a vendor part from its Vendor-Specific, however the lookups
// are made (docs/accounting.md "Session key").
TEST(SessionKey, ReadsTheFirstOfRepeatedAttributesAndVendorParts) {
  auto recipe = KeyRecipe::parse("User-Name,MS-CHAP-Domain,NAS-Identifier|NAS-IP-Address,Class,NAS-Port",
                                 "ai:", radius::Dictionary::builtin());
  ASSERT_TRUE(recipe.has_value()) << recipe.error();
  std::array<std::uint8_t, radius::kMaxPacketLength> buffer{};
  radius::PacketBuilder builder(buffer);
  builder.begin(radius::Code::kAccountingRequest, 1);
  builder.add_u32(radius::attr::kAcctStatusType, status::kStart);
  builder.add(radius::attr::kNasIdentifier, as_bytes("first-nas"));
  builder.add(radius::attr::kUserName, as_bytes("bob"));
  builder.add(radius::attr::kClass, as_bytes("AI:not-the-shortcut"));
  builder.add_vendor(311, 10, as_bytes("CORP"));
  builder.add(radius::attr::kAcctSessionId, as_bytes("abc123"));
  builder.add(radius::attr::kUserName, as_bytes("mallory"));
  builder.add(radius::attr::kNasIdentifier, as_bytes("second-nas"));
  builder.add(radius::attr::kClass, as_bytes("ai:0123456789abcdef0123456789abcdef"));
  builder.add_u32(radius::attr::kNasPort, 7);
  auto wire = builder.finish();
  ASSERT_TRUE(wire.has_value());
  auto packet = radius::Packet::parse(*wire);
  ASSERT_TRUE(packet.has_value());
  EXPECT_EQ(recipe->session_text(*packet), "bob,CORP,first-nas,0x41493a6e6f742d7468652d73686f7274637574,7");
}

TEST(KeyRecipe, ParsesNamesAndNumbers) {
  auto recipe = KeyRecipe::parse("User-Name, 44", "", radius::Dictionary::builtin());
  ASSERT_TRUE(recipe.has_value()) << recipe.error();
  EXPECT_EQ(recipe->session_text(AccountingRequest(RequestSpec{}).packet()), "bob,abc123");
}

TEST(KeyRecipe, RefusesUnknownAttribute) {
  auto recipe = KeyRecipe::parse("User-Name,No-Such-Attribute", "", radius::Dictionary::builtin());
  ASSERT_FALSE(recipe.has_value());
  EXPECT_NE(recipe.error().find("No-Such-Attribute"), std::string::npos);
}

TEST(Describe, NamesAttributesAndValuesByDictionary) {
  RequestSpec spec;
  spec.delay_s = 3;
  const auto described = describe(record_of(spec), *radius::Dictionary::builtin());
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"Acct-Status-Type", "Start"},  {"User-Name", "bob"}, {"Acct-Session-Id", "abc123"},
      {"NAS-IP-Address", "10.0.0.1"}, {"NAS-Port", "7"},    {"Acct-Delay-Time", "3"},
  };
  EXPECT_EQ(described, expected);
}

TEST(Describe, SplitsVendorSpecificIntoSubAttributes) {
  Record record = record_of(RequestSpec{});
  // Microsoft (311) vendor type 99, unknown to the dictionary: Vendor-311-Attr-99.
  const std::vector<std::uint8_t> vsa = {26, 11, 0, 0, 1, 55, 99, 5, 'a', 'b', 'c'};
  record.attributes.insert(record.attributes.end(), vsa.begin(), vsa.end());
  const auto described = describe(record, *radius::Dictionary::builtin());
  ASSERT_FALSE(described.empty());
  EXPECT_EQ(described.back().first, "Vendor-311-Attr-99");
  EXPECT_EQ(described.back().second, "0x616263");
}

}  // namespace
}  // namespace rw::accounting
