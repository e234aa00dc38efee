#include "eap/packet.h"

#include <array>
#include <vector>

#include <gtest/gtest.h>

namespace rw::eap {
namespace {

std::vector<std::uint8_t> octets(std::initializer_list<int> values) {
  std::vector<std::uint8_t> out;
  for (int v : values) out.push_back(static_cast<std::uint8_t>(v));
  return out;
}

TEST(ParseEapPacket, ReadsAResponseIdentity) {
  const auto wire = octets({2, 7, 0, 10, 1, 'a', 'l', 'i', 'c', 'e'});
  auto packet = parse(wire);
  ASSERT_TRUE(packet.has_value());
  EXPECT_EQ(packet->code, Code::kResponse);
  EXPECT_EQ(packet->identifier, 7);
  EXPECT_EQ(packet->type, 1);
  EXPECT_EQ(as_chars(packet->type_data), "alice");
  EXPECT_EQ(packet->length(), wire.size());
}

TEST(ParseEapPacket, ReadsSuccessAndFailure) {
  for (const int code : {3, 4}) {
    const auto wire = octets({code, 9, 0, 4});
    auto packet = parse(wire);
    ASSERT_TRUE(packet.has_value());
    EXPECT_EQ(static_cast<int>(packet->code), code);
    EXPECT_EQ(packet->type, 0);
    EXPECT_TRUE(packet->type_data.empty());
  }
}

TEST(ParseEapPacket, IgnoresOctetsPastLength) {
  // RFC 3748 §4: link-layer padding.
  const auto wire = octets({2, 1, 0, 6, 1, 'x', 0, 0, 0});
  auto packet = parse(wire);
  ASSERT_TRUE(packet.has_value());
  EXPECT_EQ(as_chars(packet->type_data), "x");
}

TEST(ParseEapPacket, NamesEveryError) {
  struct Case {
    std::vector<std::uint8_t> wire;
    ParseError error;
  };
  const Case cases[] = {
      {octets({}), ParseError::kTooShort},
      {octets({2, 1, 0}), ParseError::kTooShort},
      {octets({0, 1, 0, 4}), ParseError::kUnknownCode},
      {octets({5, 1, 0, 4}), ParseError::kUnknownCode},
      {octets({3, 1, 0, 3}), ParseError::kLengthTooSmall},
      {octets({2, 1, 0, 4}), ParseError::kLengthTooSmall},  // A Response needs its Type.
      {octets({2, 1, 0, 9, 1, 'a'}), ParseError::kLengthExceedsData},
      {octets({1, 1, 0xFF, 0xFF, 1}), ParseError::kLengthExceedsData},
      {octets({3, 1, 0, 5, 0}), ParseError::kResultWithData},
  };
  for (const Case& c : cases) {
    auto packet = parse(c.wire);
    ASSERT_FALSE(packet.has_value());
    EXPECT_EQ(packet.error(), c.error) << to_string(c.error);
  }
  for (std::size_t i = 0; i < kParseErrorCount; ++i) {
    EXPECT_NE(to_string(static_cast<ParseError>(i)), "unknown");
  }
}

TEST(WriteEapPacket, RoundTripsThroughParse) {
  const auto data = octets({16, 1, 2, 3});
  const Packet request{.code = Code::kRequest, .identifier = 200, .type = 4, .type_data = data};
  std::array<std::uint8_t, 64> buffer{};
  const Bytes wire = write(request, buffer);
  ASSERT_EQ(wire.size(), 9u);
  EXPECT_EQ(wire[0], 1);
  EXPECT_EQ(wire[1], 200);
  EXPECT_EQ(wire[3], 9);
  auto parsed = parse(wire);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->type, 4);
  EXPECT_EQ(std::vector<std::uint8_t>(parsed->type_data.begin(), parsed->type_data.end()), data);
}

TEST(WriteEapPacket, WritesAResultWithoutType) {
  std::array<std::uint8_t, 4> buffer{};
  const Bytes wire = write(Packet{.code = Code::kFailure, .identifier = 3, .type = 99}, buffer);
  EXPECT_EQ(std::vector<std::uint8_t>(wire.begin(), wire.end()), octets({4, 3, 0, 4}));
}

TEST(WriteEapPacket, WritesNothingThatDoesNotFit) {
  const auto data = octets({1, 2, 3});
  std::array<std::uint8_t, 7> buffer{};
  EXPECT_TRUE(write(Packet{.code = Code::kResponse, .type = 4, .type_data = data}, buffer).empty());
  std::array<std::uint8_t, 8> exact{};
  EXPECT_EQ(write(Packet{.code = Code::kResponse, .type = 4, .type_data = data}, exact).size(), 8u);
  const std::vector<std::uint8_t> huge(70'000, 0);
  std::vector<std::uint8_t> big(80'000);
  EXPECT_TRUE(write(Packet{.code = Code::kRequest, .type = 13, .type_data = huge}, big).empty());
}

}  // namespace
}  // namespace rw::eap
