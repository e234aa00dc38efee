// The raft TLS preamble round trip, its refusals of hostile bytes, and the
// member certificate name rule.
#include "consensus/tls_preamble.h"

#include <gtest/gtest.h>

namespace rw::consensus {
namespace {

TEST(TlsPreamble, RoundTripsAndWaitsForEveryByte) {
  const Preamble sent{.id = 0x0102030405060708ULL, .address = "127.0.0.1:9001"};
  const std::vector<std::uint8_t> bytes = encode_preamble(sent);
  ASSERT_EQ(bytes.size(), kPreambleHeadSize + sent.address.size());
  EXPECT_EQ(std::vector<std::uint8_t>(bytes.begin(), bytes.begin() + 14),
            (std::vector<std::uint8_t>{'r', 'w', 'R', 'T', 1, 14, 1, 2, 3, 4, 5, 6, 7, 8}));
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    auto partial = parse_preamble(std::span(bytes).first(n));
    ASSERT_TRUE(partial.has_value()) << n;
    EXPECT_FALSE(partial->has_value()) << n;
  }
  auto whole = parse_preamble(bytes);
  ASSERT_TRUE(whole.has_value() && whole->has_value());
  EXPECT_EQ((*whole)->id, sent.id);
  EXPECT_EQ((*whole)->address, sent.address);
}

TEST(TlsPreamble, RefusesHostileBytes) {
  const std::vector<std::uint8_t> good = encode_preamble({.id = 2, .address = "10.0.0.2:7000"});
  auto with = [&](std::size_t at, std::uint8_t value) {
    std::vector<std::uint8_t> bytes = good;
    bytes[at] = value;
    return parse_preamble(bytes);
  };
  // A plaintext libraft handshake (protocol version 1, little-endian u64) or a
  // TLS ClientHello is refused from its first byte.
  EXPECT_EQ(parse_preamble(std::vector<std::uint8_t>{1, 0, 0, 0}).error(), PreambleError::kBadMagic);
  EXPECT_EQ(parse_preamble(std::vector<std::uint8_t>{0x16, 0x03, 0x01}).error(), PreambleError::kBadMagic);
  EXPECT_EQ(with(4, 2).error(), PreambleError::kBadVersion);
  EXPECT_EQ(with(5, 0).error(), PreambleError::kBadAddressLength);
  EXPECT_EQ(with(13, 0).error(), PreambleError::kZeroId);
  EXPECT_EQ(with(14, ' ').error(), PreambleError::kBadAddressCharacter);
  EXPECT_EQ(with(15, 0x00).error(), PreambleError::kBadAddressCharacter);
  EXPECT_EQ(with(16, 0xc3).error(), PreambleError::kBadAddressCharacter);
  std::vector<std::uint8_t> longer = good;
  longer.push_back('x');
  EXPECT_EQ(parse_preamble(longer).error(), PreambleError::kTrailingBytes);
}

TEST(TlsPreamble, LongestAddressFitsTheLimit) {
  const std::vector<std::uint8_t> bytes = encode_preamble({.id = 9, .address = std::string(255, 'a')});
  EXPECT_EQ(bytes.size(), kMaxPreambleSize);
  auto parsed = parse_preamble(bytes);
  ASSERT_TRUE(parsed.has_value() && parsed->has_value());
  EXPECT_EQ((*parsed)->address.size(), 255U);
}

TEST(TlsPreamble, MemberCommonNames) {
  EXPECT_EQ(member_common_name(2), "member-2");
  EXPECT_EQ(member_id_of_common_name("member-2"), 2U);
  EXPECT_EQ(member_id_of_common_name("member-18446744073709551615"), UINT64_MAX);
  for (const char* refused : {"member-0", "member-02", "member-", "member-2x", "member--2", "member-+2",
                              "member-18446744073709551616", "gateway-x", "gateway-2", "Member-2",
                              " member-2", "member-2 ", "member"}) {
    EXPECT_EQ(member_id_of_common_name(refused), std::nullopt) << refused;
  }
}

}  // namespace
}  // namespace rw::consensus
