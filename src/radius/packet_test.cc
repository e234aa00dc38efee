// Packet validation (one test per DecodeError), the RFC 2865 §7 vectors, and
// PacketBuilder.
#include "radius/packet.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "radius/test_vectors.h"

namespace rw::radius {
namespace {

using Buffer = std::vector<std::uint8_t>;

// A header with `length` in the Length field followed by `attributes`.
Buffer packet_with(std::uint8_t code, Buffer attributes, std::size_t extra_padding = 0) {
  Buffer out(kHeaderLength, 0);
  out[0] = code;
  out[1] = 7;
  out.insert(out.end(), attributes.begin(), attributes.end());
  const std::size_t length = out.size();
  out[2] = static_cast<std::uint8_t>(length >> 8);
  out[3] = static_cast<std::uint8_t>(length);
  out.resize(out.size() + extra_padding, 0xee);
  return out;
}

DecodeError error_of(const Buffer& datagram) {
  auto packet = Packet::parse(datagram);
  EXPECT_FALSE(packet.has_value());
  return packet ? DecodeError::kDatagramTooShort : packet.error();
}

std::string text(Bytes bytes) { return std::string(as_chars(bytes)); }

// --- RFC 2865 §7 vectors ------------------------------------------------

struct VectorCase {
  const char* file;
  Code code;
  std::uint8_t identifier;
  std::size_t attribute_count;
};

class Rfc2865Vector : public ::testing::TestWithParam<VectorCase> {};

TEST_P(Rfc2865Vector, ParsesAndRebuildsIdentically) {
  const VectorCase& c = GetParam();
  Buffer datagram = testing::read_vector(c.file);
  auto packet = Packet::parse(datagram);
  ASSERT_TRUE(packet.has_value()) << to_string(packet.error());
  EXPECT_EQ(packet->code(), c.code);
  EXPECT_EQ(packet->identifier(), c.identifier);
  EXPECT_EQ(packet->length(), datagram.size());
  std::size_t count = 0;
  std::array<std::uint8_t, kMaxPacketLength> buffer;
  PacketBuilder builder(buffer);
  builder.begin(packet->code(), packet->identifier(), packet->authenticator());
  for (Attribute attribute : packet->attributes()) {
    builder.add(attribute.type, attribute.value);
    ++count;
  }
  EXPECT_EQ(count, c.attribute_count);
  auto rebuilt = builder.finish();
  ASSERT_TRUE(rebuilt.has_value());
  EXPECT_EQ(Buffer(rebuilt->begin(), rebuilt->end()), datagram);
}

INSTANTIATE_TEST_SUITE_P(
    Rfc2865Section7, Rfc2865Vector,
    ::testing::Values(VectorCase{"rfc2865_7.1_access_request.hex", Code::kAccessRequest, 0, 4},
                      VectorCase{"rfc2865_7.1_access_accept.hex", Code::kAccessAccept, 0, 3},
                      VectorCase{"rfc2865_7.2_access_request.hex", Code::kAccessRequest, 1, 6},
                      VectorCase{"rfc2865_7.2_access_accept.hex", Code::kAccessAccept, 1, 6},
                      VectorCase{"rfc2865_7.3_access_request_1.hex", Code::kAccessRequest, 2, 4},
                      VectorCase{"rfc2865_7.3_access_challenge.hex", Code::kAccessChallenge, 2, 2},
                      VectorCase{"rfc2865_7.3_access_request_2.hex", Code::kAccessRequest, 3, 5},
                      VectorCase{"rfc2865_7.3_access_reject.hex", Code::kAccessReject, 3, 0}));

TEST(DecodePacket, ReadsRfc2865Section71Attributes) {
  Buffer datagram = testing::read_vector("rfc2865_7.1_access_request.hex");
  auto packet = Packet::parse(datagram);
  ASSERT_TRUE(packet.has_value());
  ASSERT_TRUE(packet->find(attr::kUserName).has_value());
  EXPECT_EQ(text(packet->find(attr::kUserName)->value), "nemo");
  EXPECT_EQ(packet->find(attr::kUserName)->offset, 20u);
  EXPECT_EQ(packet->find(attr::kUserPassword)->value.size(), 16u);
  EXPECT_EQ(Buffer(packet->find(attr::kNasIpAddress)->value.begin(),
                   packet->find(attr::kNasIpAddress)->value.end()),
            (Buffer{192, 168, 1, 16}));
  EXPECT_EQ(packet->count(attr::kNasPort), 1u);
  EXPECT_EQ(packet->find_u32(attr::kNasPort), std::optional<std::uint32_t>(3));
  EXPECT_FALSE(packet->find_u32(attr::kUserPassword).has_value());  // 16 octets
  EXPECT_FALSE(packet->find_u32(attr::kState).has_value());         // absent
  EXPECT_FALSE(packet->find(attr::kState).has_value());
  EXPECT_FALSE(packet->message_authenticator_offset().has_value());
  EXPECT_EQ(packet->authenticator()[0], 0x0f);
  EXPECT_EQ(packet->attribute_bytes().size(), datagram.size() - kHeaderLength);
}

TEST(DecodePacket, ReadsRfc2865Section73State) {
  Buffer datagram = testing::read_vector("rfc2865_7.3_access_challenge.hex");
  auto packet = Packet::parse(datagram);
  ASSERT_TRUE(packet.has_value());
  EXPECT_EQ(text(packet->find(attr::kState)->value), "32769430");
  EXPECT_EQ(text(packet->find(attr::kReplyMessage)->value), "Challenge 32769430.  Enter response at prompt.");
}

// --- One test per DecodeError --------------------------------------------

TEST(DecodePacket, RejectsDatagramShorterThanHeader) {
  Buffer datagram = packet_with(1, {});
  datagram.pop_back();
  EXPECT_EQ(error_of(datagram), DecodeError::kDatagramTooShort);
  EXPECT_EQ(error_of({}), DecodeError::kDatagramTooShort);
}

TEST(DecodePacket, RejectsLengthBelowHeader) {
  Buffer datagram = packet_with(1, {0x01, 0x03, 'a'});
  datagram[3] = 19;
  EXPECT_EQ(error_of(datagram), DecodeError::kLengthOutOfRange);
}

TEST(DecodePacket, RejectsLengthAboveMaximum) {
  Buffer datagram = packet_with(1, {}, 4100);
  datagram[2] = 0x10;
  datagram[3] = 0x01;  // 4097
  EXPECT_EQ(error_of(datagram), DecodeError::kLengthOutOfRange);
}

TEST(DecodePacket, RejectsLengthLargerThanDatagram) {
  Buffer datagram = packet_with(1, {0x01, 0x03, 'a'});
  datagram.pop_back();
  EXPECT_EQ(error_of(datagram), DecodeError::kLengthExceedsDatagram);
}

TEST(DecodePacket, RejectsUnknownCode) {
  for (int code : {0, 6, 10, 14, 39, 46, 255}) {
    EXPECT_EQ(error_of(packet_with(static_cast<std::uint8_t>(code), {})), DecodeError::kUnknownCode) << code;
  }
}

TEST(DecodePacket, RejectsTruncatedAttributeHeader) {
  EXPECT_EQ(error_of(packet_with(1, {0x01, 0x03, 'a', 0x05})), DecodeError::kAttributeHeaderTruncated);
}

TEST(DecodePacket, RejectsAttributeLengthBelowTwo) {
  EXPECT_EQ(error_of(packet_with(1, {0x01, 0x01, 'a'})), DecodeError::kAttributeLengthTooSmall);
  EXPECT_EQ(error_of(packet_with(1, {0x01, 0x00})), DecodeError::kAttributeLengthTooSmall);
}

TEST(DecodePacket, RejectsAttributeLongerThanPacket) {
  // The attribute claims 5 octets; the Length field ends the packet after 4,
  // even though the datagram (padding) has more.
  EXPECT_EQ(error_of(packet_with(1, {0x01, 0x05, 'a', 'b'}, 8)), DecodeError::kAttributeOverrunsPacket);
}

TEST(DecodePacket, RejectsVendorSpecificWithoutVendorId) {
  EXPECT_EQ(error_of(packet_with(1, {26, 5, 0, 0, 1})), DecodeError::kVendorSpecificTooShort);
}

TEST(DecodePacket, RejectsMessageAuthenticatorOfWrongLength) {
  Buffer attribute(17, 0);
  attribute[0] = attr::kMessageAuthenticator;
  attribute[1] = 17;
  EXPECT_EQ(error_of(packet_with(1, attribute)), DecodeError::kMessageAuthenticatorLength);
}

TEST(DecodePacket, RejectsSecondMessageAuthenticator) {
  Buffer attributes(36, 0);
  attributes[0] = attributes[18] = attr::kMessageAuthenticator;
  attributes[1] = attributes[19] = 18;
  EXPECT_EQ(error_of(packet_with(1, attributes)), DecodeError::kDuplicateMessageAuthenticator);
}

TEST(DecodePacket, NamesEveryError) {
  for (std::size_t e = 0; e < kDecodeErrorCount; ++e) {
    EXPECT_NE(to_string(static_cast<DecodeError>(e)), "unknown") << e;
  }
}

// --- Accepted shapes ------------------------------------------------------

TEST(DecodePacket, IgnoresOctetsPastLength) {
  Buffer datagram = packet_with(4, {0x01, 0x03, 'a'}, 11);
  auto packet = Packet::parse(datagram);
  ASSERT_TRUE(packet.has_value());
  EXPECT_EQ(packet->length(), kHeaderLength + 3);
  EXPECT_EQ(packet->count(attr::kUserName), 1u);
}

TEST(DecodePacket, AcceptsEveryKnownCode) {
  for (int code : {1, 2, 3, 4, 5, 11, 12, 13, 40, 41, 42, 43, 44, 45}) {
    Buffer datagram = packet_with(static_cast<std::uint8_t>(code), {});
    auto packet = Packet::parse(datagram);
    ASSERT_TRUE(packet.has_value()) << code;
    EXPECT_NE(to_string(packet->code()), "Unknown");
  }
}

TEST(DecodePacket, AcceptsEmptyAttributeAndMaximumLength) {
  Buffer attributes = {0x18, 0x02};
  Buffer big(255, 'x');
  big[0] = attr::kClass;
  big[1] = 255;
  attributes.insert(attributes.end(), big.begin(), big.end());
  Buffer datagram = packet_with(2, attributes);
  auto packet = Packet::parse(datagram);
  ASSERT_TRUE(packet.has_value());
  EXPECT_TRUE(packet->find(attr::kState)->value.empty());
  EXPECT_EQ(packet->find(attr::kClass)->value.size(), 253u);
}

TEST(DecodePacket, AcceptsPacketOfMaximumLength) {
  // 4096 - 20 = 4076 octets of attributes: fifteen of 255 and one of 251.
  Buffer attributes;
  for (int i = 0; i < 16; ++i) {
    const std::size_t length = i < 15 ? 255 : 251;
    attributes.push_back(attr::kClass);
    attributes.push_back(static_cast<std::uint8_t>(length));
    attributes.resize(attributes.size() + length - 2, 'c');
  }
  Buffer datagram = packet_with(2, attributes);
  auto packet = Packet::parse(datagram);
  ASSERT_TRUE(packet.has_value()) << to_string(packet.error());
  EXPECT_EQ(packet->length(), kMaxPacketLength);
  EXPECT_EQ(packet->count(attr::kClass), 16u);
}

TEST(DecodePacket, RecordsMessageAuthenticatorOffset) {
  Buffer attributes = {0x01, 0x03, 'a'};
  attributes.push_back(attr::kMessageAuthenticator);
  attributes.push_back(18);
  attributes.resize(attributes.size() + 16, 0);
  Buffer datagram = packet_with(1, attributes);
  auto packet = Packet::parse(datagram);
  ASSERT_TRUE(packet.has_value());
  EXPECT_EQ(packet->message_authenticator_offset(), std::optional<std::size_t>(23));
}

TEST(DecodePacket, FindsVendorAttributeAcrossVendorSpecifics) {
  // A malformed Microsoft body, then another vendor, then a good Microsoft one.
  Buffer attributes = {26, 9, 0, 0, 0x01, 0x37, 16, 1, 0xaa};    // sub-length 1: malformed
  Buffer other = {26, 10, 0, 0, 0x00, 0x09, 16, 4, 0xbb, 0xbb};  // Cisco (9)
  Buffer good = {26, 13, 0, 0, 0x01, 0x37, 7, 3, 0x01, 16, 4, 0xcc, 0xcc};
  attributes.insert(attributes.end(), other.begin(), other.end());
  attributes.insert(attributes.end(), good.begin(), good.end());
  Buffer datagram = packet_with(2, attributes);
  auto packet = Packet::parse(datagram);
  ASSERT_TRUE(packet.has_value()) << to_string(packet.error());
  auto key = packet->find_vendor(kVendorMicrosoft, ms::kMppeSendKey);
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(Buffer(key->begin(), key->end()), (Buffer{0xcc, 0xcc}));
  EXPECT_EQ(packet->find_vendor(kVendorMicrosoft, ms::kMppeEncryptionPolicy)->size(), 1u);
  EXPECT_FALSE(packet->find_vendor(kVendorMicrosoft, ms::kMppeRecvKey).has_value());
  EXPECT_EQ(packet->find_vendor(9, 16)->size(), 2u);
  EXPECT_EQ(packet->count(attr::kVendorSpecific), 3u);
}

TEST(DecodePacket, AcceptsVendorSpecificWithOnlyVendorId) {
  Buffer datagram = packet_with(2, {26, 6, 0, 0, 0x01, 0x37});
  auto packet = Packet::parse(datagram);
  ASSERT_TRUE(packet.has_value());
  auto vsa = split_vendor_specific(packet->find(attr::kVendorSpecific)->value);
  ASSERT_TRUE(vsa.has_value());
  EXPECT_EQ(vsa->vendor, kVendorMicrosoft);
  EXPECT_TRUE(vsa->body.empty());
  EXPECT_FALSE(packet->find_vendor(kVendorMicrosoft, 1).has_value());
}

// --- PacketBuilder --------------------------------------------------------

TEST(PacketBuilder, BuildsHeaderAttributesAndLength) {
  std::array<std::uint8_t, 64> buffer;
  PacketBuilder builder(buffer);
  builder.begin(Code::kAccessAccept, 9);
  builder.add(attr::kReplyMessage, as_bytes("hi"));
  builder.add_u32(attr::kSessionTimeout, 0x01020304);
  auto wire = builder.finish();
  ASSERT_TRUE(wire.has_value());
  Buffer expected = packet_with(2, {18, 4, 'h', 'i', 27, 6, 1, 2, 3, 4});
  expected[1] = 9;
  EXPECT_EQ(Buffer(wire->begin(), wire->end()), expected);
}

TEST(PacketBuilder, WritesVendorSpecificInOneOneFormat) {
  std::array<std::uint8_t, 64> buffer;
  PacketBuilder builder(buffer);
  builder.begin(Code::kAccessAccept, 0);
  builder.add_vendor(kVendorMicrosoft, ms::kMppeRecvKey, as_bytes("k"));
  auto wire = builder.finish();
  ASSERT_TRUE(wire.has_value());
  EXPECT_EQ(Buffer(wire->begin() + 20, wire->end()), (Buffer{26, 9, 0, 0, 1, 0x37, 17, 3, 'k'}));
  auto packet = Packet::parse(*wire);
  ASSERT_TRUE(packet.has_value());
  EXPECT_EQ(text(*packet->find_vendor(kVendorMicrosoft, ms::kMppeRecvKey)), "k");
}

TEST(PacketBuilder, ReservesMessageAuthenticatorWhereCalled) {
  std::array<std::uint8_t, 128> buffer;
  PacketBuilder builder(buffer);
  builder.begin(Code::kAccessChallenge, 1);
  builder.reserve_message_authenticator();
  builder.add(attr::kState, as_bytes("s"));
  EXPECT_EQ(builder.message_authenticator_offset(), std::optional<std::size_t>(20));
  auto wire = builder.finish();
  ASSERT_TRUE(wire.has_value());
  auto packet = Packet::parse(*wire);
  ASSERT_TRUE(packet.has_value());
  EXPECT_EQ(packet->message_authenticator_offset(), std::optional<std::size_t>(20));
}

TEST(PacketBuilder, RejectsSecondMessageAuthenticator) {
  std::array<std::uint8_t, 128> buffer;
  PacketBuilder builder(buffer);
  builder.begin(Code::kAccessRequest, 1);
  builder.reserve_message_authenticator();
  builder.reserve_message_authenticator();
  EXPECT_EQ(builder.finish().error(), BuildError::kDuplicateMessageAuthenticator);
}

TEST(PacketBuilder, RejectsMessageAuthenticatorOfWrongSize) {
  std::array<std::uint8_t, 128> buffer;
  PacketBuilder builder(buffer);
  builder.begin(Code::kAccessRequest, 1);
  builder.add(attr::kMessageAuthenticator, as_bytes("short"));
  EXPECT_EQ(builder.finish().error(), BuildError::kBadMessageAuthenticator);
}

TEST(PacketBuilder, RejectsValueTooLong) {
  std::array<std::uint8_t, kMaxPacketLength> buffer;
  Buffer value(254, 'v');
  PacketBuilder builder(buffer);
  builder.begin(Code::kAccessAccept, 1);
  builder.add(attr::kClass, Bytes(value).first(253));
  EXPECT_TRUE(builder.finish().has_value());
  builder.begin(Code::kAccessAccept, 1);
  builder.add(attr::kClass, value);
  EXPECT_EQ(builder.finish().error(), BuildError::kValueTooLong);
  builder.begin(Code::kAccessAccept, 1);
  builder.add_vendor(kVendorMicrosoft, 1, Bytes(value).first(248));
  EXPECT_EQ(builder.finish().error(), BuildError::kValueTooLong);
}

TEST(PacketBuilder, ReportsOverflowOfBufferAndKeepsFirstError) {
  std::array<std::uint8_t, 24> buffer;
  PacketBuilder builder(buffer);
  builder.begin(Code::kAccessAccept, 1);
  builder.add(attr::kClass, as_bytes("ab"));
  builder.add(attr::kClass, as_bytes("c"));  // does not fit
  builder.add(attr::kClass, Buffer(300, 'x'));
  EXPECT_EQ(builder.error(), std::optional<BuildError>(BuildError::kPacketTooLong));
  EXPECT_EQ(builder.finish().error(), BuildError::kPacketTooLong);
}

TEST(PacketBuilder, NeverExceedsMaximumPacketLength) {
  std::array<std::uint8_t, kMaxPacketLength + 100> buffer;
  PacketBuilder builder(buffer);
  builder.begin(Code::kAccessAccept, 1);
  Buffer value(253, 'v');
  for (int i = 0; i < 20; ++i) builder.add(attr::kClass, value);
  EXPECT_EQ(builder.finish().error(), BuildError::kPacketTooLong);
}

TEST(PacketBuilder, RequiresBegin) {
  std::array<std::uint8_t, 64> buffer;
  PacketBuilder builder(buffer);
  EXPECT_EQ(builder.finish().error(), BuildError::kNotBegun);
  builder.add(attr::kClass, as_bytes("x"));
  EXPECT_EQ(builder.finish().error(), BuildError::kNotBegun);
}

TEST(PacketBuilder, RejectsAuthenticatorOfWrongLength) {
  std::array<std::uint8_t, 64> buffer;
  PacketBuilder builder(buffer);
  builder.begin(Code::kAccessRequest, 1, as_bytes("short"));
  EXPECT_EQ(builder.finish().error(), BuildError::kBadAuthenticatorLength);
}

TEST(PacketBuilder, BeginStartsOverAfterAnError) {
  std::array<std::uint8_t, 64> buffer;
  PacketBuilder builder(buffer);
  builder.begin(Code::kAccessRequest, 1);
  builder.add(attr::kClass, Buffer(300, 'x'));
  builder.begin(Code::kAccessRequest, 2);
  builder.add(attr::kClass, as_bytes("x"));
  auto wire = builder.finish();
  ASSERT_TRUE(wire.has_value());
  EXPECT_EQ(wire->size(), 23u);
}

}  // namespace
}  // namespace rw::radius
