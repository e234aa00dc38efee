#include "eap/eap_message.h"

#include <array>
#include <vector>

#include <gtest/gtest.h>

#include "radius/authenticator.h"

namespace rw::eap {
namespace {

namespace attr = radius::attr;

std::vector<std::uint8_t> pattern(std::size_t size) {
  std::vector<std::uint8_t> out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<std::uint8_t>(i * 7 + 1);
  return out;
}

class EapMessageTest : public ::testing::Test {
 protected:
  // An Access-Request carrying `eap` split by add_eap_message between a
  // User-Name and a State.
  radius::Packet request_with(Bytes eap) {
    radius::PacketBuilder builder(buffer_);
    builder.begin(radius::Code::kAccessRequest, 1, std::array<std::uint8_t, 16>{});
    builder.reserve_message_authenticator();
    builder.add(attr::kUserName, as_bytes("alice"));
    add_eap_message(builder, eap);
    builder.add(attr::kState, as_bytes("state"));
    auto finished = builder.finish();
    EXPECT_TRUE(finished.has_value());
    auto packet = radius::Packet::parse(*finished);
    EXPECT_TRUE(packet.has_value());
    return *packet;
  }

  std::array<std::uint8_t, radius::kMaxPacketLength> buffer_{};
  std::array<std::uint8_t, kEapPacketBytesMax> out_{};
};

TEST_F(EapMessageTest, SplitsAt253AndReassemblesInOrder) {
  for (const std::size_t size : {std::size_t{5}, std::size_t{252}, std::size_t{253}, std::size_t{254},
                                 std::size_t{506}, std::size_t{507}, std::size_t{1500}}) {
    const auto eap = pattern(size);
    const radius::Packet packet = request_with(eap);
    EXPECT_EQ(packet.count(attr::kEapMessage), eap_message_count(size)) << size;
    for (const radius::Attribute attribute : packet.attributes()) {
      if (attribute.type == attr::kEapMessage) {
        EXPECT_LE(attribute.value.size(), 253u);
      }
    }
    auto reassembled = reassemble(packet, out_);
    ASSERT_TRUE(reassembled.has_value()) << size;
    EXPECT_EQ(std::vector<std::uint8_t>(reassembled->begin(), reassembled->end()), eap) << size;
  }
  EXPECT_EQ(eap_message_count(253), 1u);
  EXPECT_EQ(eap_message_count(254), 2u);
  EXPECT_EQ(eap_message_count(506), 2u);
}

TEST_F(EapMessageTest, AnEmptyEapMessageIsEapStart) {
  const radius::Packet packet = request_with({});
  EXPECT_EQ(packet.count(attr::kEapMessage), 1u);
  auto reassembled = reassemble(packet, out_);
  ASSERT_TRUE(reassembled.has_value());
  EXPECT_TRUE(reassembled->empty());
}

TEST_F(EapMessageTest, RefusesWhatPassesTheBound) {
  const auto eap = pattern(600);
  const radius::Packet packet = request_with(eap);
  std::array<std::uint8_t, 600> exact{};
  EXPECT_TRUE(reassemble(packet, exact).has_value());
  std::array<std::uint8_t, 599> short_by_one{};
  auto refused = reassemble(packet, short_by_one);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error(), ReassemblyError::kTooLong);
}

TEST_F(EapMessageTest, TheLargestPacketFitsTheGatewayBound) {
  // As many EAP octets as a 4096-octet Access-Request holds beside a
  // Message-Authenticator: 16 full EAP-Messages and what is left.
  const std::size_t room = radius::kMaxPacketLength - radius::kHeaderLength - 18;
  const std::size_t eap_size = room - 2 * eap_message_count(room - 32);
  radius::PacketBuilder builder(buffer_);
  builder.begin(radius::Code::kAccessRequest, 1, std::array<std::uint8_t, 16>{});
  builder.reserve_message_authenticator();
  const auto eap = pattern(eap_size);
  add_eap_message(builder, eap);
  auto finished = builder.finish();
  ASSERT_TRUE(finished.has_value()) << radius::to_string(*builder.error());
  auto packet = radius::Packet::parse(*finished);
  ASSERT_TRUE(packet.has_value());
  auto reassembled = reassemble(*packet, out_);
  ASSERT_TRUE(reassembled.has_value());
  EXPECT_EQ(reassembled->size(), eap_size);
}

TEST_F(EapMessageTest, NoEapMessageIsNamed) {
  radius::PacketBuilder builder(buffer_);
  builder.begin(radius::Code::kAccessRequest, 1, std::array<std::uint8_t, 16>{});
  builder.add(attr::kUserName, as_bytes("alice"));
  auto finished = builder.finish();
  auto packet = radius::Packet::parse(*finished);
  auto refused = reassemble(*packet, out_);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error(), ReassemblyError::kNoEapMessage);
  EXPECT_EQ(to_string(ReassemblyError::kNoEapMessage), "no_eap_message");
  EXPECT_EQ(to_string(ReassemblyError::kTooLong), "too_long");
}

TEST_F(EapMessageTest, ASplitThatDoesNotFitIsABuildError) {
  const auto eap = pattern(4096);
  radius::PacketBuilder builder(buffer_);
  builder.begin(radius::Code::kAccessChallenge, 1);
  add_eap_message(builder, eap);
  EXPECT_FALSE(builder.finish().has_value());
}

}  // namespace
}  // namespace rw::eap
