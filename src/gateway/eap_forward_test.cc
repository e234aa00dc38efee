#include "gateway/eap_forward.h"

#include <array>
#include <vector>

#include <gtest/gtest.h>

namespace rw::gateway {
namespace {

std::array<std::uint8_t, 32> key_of(std::uint8_t first) {
  std::array<std::uint8_t, 32> key{};
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<std::uint8_t>(first + i);
  return key;
}

Endpoint v4(std::uint8_t last, std::uint16_t port) {
  Endpoint endpoint{.port = port};
  endpoint.address[0] = 10;
  endpoint.address[3] = last;
  return endpoint;
}

constexpr std::int64_t kNow = 1'800'000'000'000;

struct Fixture {
  ForwardCodec codec{key_of(1)};
  std::array<std::uint8_t, 64> payload{};
  std::array<std::uint8_t, kForwardMessageMax> out{};

  ForwardMessage request(std::uint64_t id) const {
    return ForwardMessage{.kind = ForwardKind::kRequest,
                          .sender = 2,
                          .receiver = 1,
                          .request_id = id,
                          .sent_unix_ms = kNow,
                          .listener = Listener::kAuthentication,
                          .nas = v4(77, 40000),
                          .payload = payload};
  }
  Bytes written(const ForwardMessage& message) {
    const std::size_t length = codec.write(message, out);
    return Bytes(out.data(), length);
  }
};

TEST(EapForward, MessageRoundTrips) {
  Fixture f;
  for (std::size_t i = 0; i < f.payload.size(); ++i) f.payload[i] = static_cast<std::uint8_t>(i);
  ForwardMessage message = f.request(0x0102030405060708);
  message.nas.is_v6 = true;
  message.nas.address[15] = 9;
  message.listener = Listener::kRadSec;
  const Bytes wire = f.written(message);
  ASSERT_EQ(wire.size(), kForwardHeaderLength + f.payload.size() + kForwardTagLength);
  EXPECT_EQ(wire[0], kForwardVersion);
  EXPECT_EQ(wire[1], 1);  // docs/wire_formats.md "EAP forwarding": the kind follows the version.
  auto read = f.codec.read(wire);
  ASSERT_TRUE(read.has_value()) << to_string(read.error());
  EXPECT_EQ(read->kind, ForwardKind::kRequest);
  EXPECT_EQ(read->sender, 2u);
  EXPECT_EQ(read->receiver, 1u);
  EXPECT_EQ(read->request_id, 0x0102030405060708u);
  EXPECT_EQ(read->sent_unix_ms, kNow);
  EXPECT_EQ(read->listener, Listener::kRadSec);
  EXPECT_EQ(read->nas, message.nas);
  EXPECT_TRUE(std::equal(read->payload.begin(), read->payload.end(), f.payload.begin(), f.payload.end()));
}

TEST(EapForward, RefusesEveryTamperedOctet) {
  Fixture f;
  const Bytes wire = f.written(f.request(5));
  std::vector<std::uint8_t> copy(wire.begin(), wire.end());
  for (std::size_t i = 0; i < copy.size(); ++i) {
    copy[i] ^= 0x01;
    auto read = f.codec.read(copy);
    ASSERT_FALSE(read.has_value()) << "octet " << i;
    EXPECT_EQ(read.error(), i == 0 ? ForwardError::kUnknownVersion : ForwardError::kBadTag) << "octet " << i;
    copy[i] ^= 0x01;
  }
  ASSERT_TRUE(f.codec.read(copy).has_value());
}

TEST(EapForward, RefusesAnotherKeyAndTruncations) {
  Fixture f;
  const Bytes wire = f.written(f.request(5));
  const ForwardCodec other(key_of(2));
  EXPECT_EQ(other.read(wire).error(), ForwardError::kBadTag);
  EXPECT_EQ(f.codec.read(wire.first(kForwardHeaderLength + kForwardTagLength - 1)).error(),
            ForwardError::kTooShort);
  // Cut short, the tag no longer covers what it did.
  EXPECT_EQ(f.codec.read(wire.first(wire.size() - 1)).error(), ForwardError::kBadTag);
}

TEST(EapForward, RefusesOversize) {
  Fixture f;
  std::vector<std::uint8_t> big(kForwardPayloadMax + 1, 0);
  ForwardMessage message = f.request(1);
  message.payload = big;
  EXPECT_EQ(f.codec.write(message, f.out), 0u);
  message.payload = Bytes(big.data(), kForwardPayloadMax);
  EXPECT_EQ(f.codec.write(message, f.out), kForwardMessageMax);
  std::vector<std::uint8_t> longer(kForwardMessageMax + 1, kForwardVersion);
  EXPECT_EQ(f.codec.read(longer).error(), ForwardError::kTooLong);
}

TEST(EapForward, SignedButWrongFieldsAreRefused) {
  Fixture f;
  ForwardMessage message = f.request(1);
  message.listener = Listener::kAccounting;
  EXPECT_EQ(f.codec.read(f.written(message)).error(), ForwardError::kBadField);
}

TEST(EapForwardGate, AdmitsAPeerOnceAndRefusesReplays) {
  Fixture f;
  ForwardGate gate(1, {ForwardPeer{.gateway_id = 2, .address = v4(2, 1820)}}, 30'000);
  auto message = f.codec.read(f.written(f.request(100)));
  ASSERT_TRUE(message.has_value());
  auto admitted = gate.admit(*message, v4(2, 1820), kNow);
  ASSERT_TRUE(admitted.has_value());
  EXPECT_EQ(*admitted, 0u);
  EXPECT_EQ(gate.admit(*message, v4(2, 1820), kNow).error(), ForwardRefusal::kReplayed);
  // Out of order within the window: admitted once.
  message->request_id = 90;
  EXPECT_TRUE(gate.admit(*message, v4(2, 1820), kNow).has_value());
  EXPECT_EQ(gate.admit(*message, v4(2, 1820), kNow).error(), ForwardRefusal::kReplayed);
  // Below the window: refused, seen or not.
  message->request_id = 100 + kForwardReplayWindow;
  EXPECT_TRUE(gate.admit(*message, v4(2, 1820), kNow).has_value());
  message->request_id = 100;
  EXPECT_EQ(gate.admit(*message, v4(2, 1820), kNow).error(), ForwardRefusal::kReplayed);
}

TEST(EapForwardGate, RefusesUnknownPeersWrongSourcesAndStaleClocks) {
  Fixture f;
  ForwardGate gate(1, {ForwardPeer{.gateway_id = 2, .address = v4(2, 1820)}}, 30'000);
  ForwardMessage message = f.request(7);
  message.sender = 3;
  EXPECT_EQ(gate.admit(message, v4(2, 1820), kNow).error(), ForwardRefusal::kUnknownPeer);
  message.sender = 2;
  EXPECT_EQ(gate.admit(message, v4(3, 1820), kNow).error(), ForwardRefusal::kWrongSource);
  EXPECT_EQ(gate.admit(message, v4(2, 1821), kNow).error(), ForwardRefusal::kWrongSource);
  message.receiver = 4;
  EXPECT_EQ(gate.admit(message, v4(2, 1820), kNow).error(), ForwardRefusal::kNotForUs);
  message.receiver = 1;
  EXPECT_EQ(gate.admit(message, v4(2, 1820), kNow + 30'001).error(), ForwardRefusal::kStale);
  EXPECT_EQ(gate.admit(message, v4(2, 1820), kNow - 30'001).error(), ForwardRefusal::kStale);
  // None of the refusals used the request id up.
  EXPECT_TRUE(gate.admit(message, v4(2, 1820), kNow).has_value());
  EXPECT_EQ(gate.find(2), std::optional<std::size_t>(0));
  EXPECT_EQ(gate.find(3), std::nullopt);
}

TEST(EapForwardGate, RepliesAreNotKeptInTheReplayWindow) {
  Fixture f;
  ForwardGate gate(1, {ForwardPeer{.gateway_id = 2, .address = v4(2, 1820)}}, 30'000);
  ForwardMessage message = f.request(7);
  message.kind = ForwardKind::kReply;
  // The caller matches a reply against its forwards in flight.
  EXPECT_TRUE(gate.admit(message, v4(2, 1820), kNow).has_value());
  EXPECT_TRUE(gate.admit(message, v4(2, 1820), kNow).has_value());
}

}  // namespace
}  // namespace rw::gateway
