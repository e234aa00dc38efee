#include "eap/state.h"

#include <array>

#include <gtest/gtest.h>

namespace rw::eap {
namespace {

constexpr std::array<std::uint8_t, StateCodec::kKeyLength> kKey{1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                                                12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                                                                23, 24, 25, 26, 27, 28, 29, 30, 31, 32};

TEST(EapState, MintedStateVerifiesToItsFields) {
  const StateCodec codec(0xA1B2C3D4, kKey);
  const StateBytes state = codec.mint(12345, 678);
  EXPECT_EQ(state.size(), 29u);
  EXPECT_EQ(state[0], kStateVersion);
  // docs/wire_formats.md "EAP State": the gateway id follows the version.
  EXPECT_EQ(state[1], 0xA1);
  EXPECT_EQ(state[4], 0xD4);
  auto fields = codec.verify(state);
  ASSERT_TRUE(fields.has_value());
  EXPECT_EQ(*fields, (StateFields{.gateway_id = 0xA1B2C3D4, .slot = 12345, .generation = 678}));
  EXPECT_EQ(state_gateway_id(state), 0xA1B2C3D4u);
}

TEST(EapState, RefusesEveryTamperedOctet) {
  const StateCodec codec(7, kKey);
  const StateBytes state = codec.mint(1, 2);
  for (std::size_t i = 0; i < state.size(); ++i) {
    StateBytes tampered = state;
    tampered[i] ^= 0x01;
    auto fields = codec.verify(tampered);
    ASSERT_FALSE(fields.has_value()) << "octet " << i;
    const StateError expected = i == 0  ? StateError::kUnknownVersion
                                : i < 5 ? StateError::kOtherGateway
                                        : StateError::kBadTag;
    EXPECT_EQ(fields.error(), expected) << "octet " << i;
  }
}

TEST(EapState, RefusesAnotherGatewaysState) {
  const StateCodec ours(1, kKey);
  const StateCodec theirs(2, kKey);
  auto fields = ours.verify(theirs.mint(1, 1));
  ASSERT_FALSE(fields.has_value());
  EXPECT_EQ(fields.error(), StateError::kOtherGateway);
  EXPECT_EQ(state_gateway_id(theirs.mint(1, 1)), 2u);
}

TEST(EapState, RefusesAStateOfAnotherKey) {
  // A restart draws a new key: the old process's States are refused.
  SeededRandom first(1);
  SeededRandom second(2);
  const StateCodec before(5, first);
  const StateCodec after(5, second);
  auto fields = after.verify(before.mint(3, 4));
  ASSERT_FALSE(fields.has_value());
  EXPECT_EQ(fields.error(), StateError::kBadTag);
}

TEST(EapState, RefusesWrongLengthsAndNamesEveryError) {
  const StateCodec codec(1, kKey);
  const StateBytes state = codec.mint(1, 1);
  EXPECT_EQ(codec.verify(Bytes(state).first(28)).error(), StateError::kWrongLength);
  EXPECT_EQ(codec.verify(Bytes()).error(), StateError::kWrongLength);
  std::array<std::uint8_t, 30> longer{};
  std::copy(state.begin(), state.end(), longer.begin());
  EXPECT_EQ(codec.verify(longer).error(), StateError::kWrongLength);
  EXPECT_FALSE(state_gateway_id(Bytes(state).first(10)).has_value());
  for (std::size_t i = 0; i < static_cast<std::size_t>(StateError::kCount); ++i) {
    EXPECT_NE(to_string(static_cast<StateError>(i)), "unknown");
  }
}

}  // namespace
}  // namespace rw::eap
