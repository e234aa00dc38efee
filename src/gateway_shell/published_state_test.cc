// Tests of the reload switch: a worker's handler decides with the published
// state from its next call on, keeps its duplicate cache across the switch,
// and retired states are freed only once nobody holds them.
#include "gateway_shell/published_state.h"

#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "base/random.h"
#include "config/clients_file.h"
#include "radius/attribute_crypto.h"
#include "radius/authenticator.h"
#include "radius/packet.h"

namespace rw::gateway_shell {
namespace {

namespace attr = radius::attr;
using radius::Code;

constexpr std::string_view kClients = "client localhost {\n  ipaddr = 127.0.0.1\n  secret = testing123\n}\n";
const Instant kNow{5'000'000'000};

std::shared_ptr<const gateway::GatewayState> state_with(const std::string& users_text) {
  auto dictionary = radius::Dictionary::builtin();
  auto users = config::UsersFile::parse(users_text, "users", dictionary, gateway::gateway_users_limits());
  EXPECT_TRUE(users);
  auto clients = config::parse_clients(kClients, "clients.conf");
  EXPECT_TRUE(clients);
  auto state = gateway::GatewayState::build({dictionary, clients->clients, std::move(*users), {}});
  EXPECT_TRUE(state) << state.error();
  return *state;
}

TEST(PublishedState, GenerationsAndCollection) {
  auto first = state_with("alice Cleartext-Password := \"a\"\n");
  PublishedState published(first);
  EXPECT_EQ(published.generation(), 0u);
  EXPECT_EQ(published.current().second, first);
  std::weak_ptr<const gateway::GatewayState> watch = first;
  published.publish(state_with("bob Cleartext-Password := \"b\"\n"));
  EXPECT_EQ(published.generation(), 1u);
  EXPECT_EQ(published.current().first, 1u);
  EXPECT_NE(published.current().second, first);
  // Still held here (as a worker would): retired, not freed.
  EXPECT_EQ(published.collect(), 1u);
  EXPECT_FALSE(watch.expired());
  first.reset();
  EXPECT_EQ(published.collect(), 0u);
  EXPECT_TRUE(watch.expired());
}

class ReloadingHandlerTest : public ::testing::Test {
 protected:
  ReloadingHandlerTest() : random_(7), secret_(*radius::SharedSecret::create(as_bytes("testing123"))) {}

  // A PAP Access-Request's bytes, to send once or again as a retransmission.
  std::vector<std::uint8_t> pap(std::string_view user, std::string_view password, std::uint8_t id) {
    std::array<std::uint8_t, radius::kMaxPacketLength> buffer{};
    const radius::Authenticator authenticator = radius::make_request_authenticator(random_);
    radius::PacketBuilder builder(buffer);
    builder.begin(Code::kAccessRequest, id, authenticator);
    builder.reserve_message_authenticator();
    builder.add(attr::kUserName, as_bytes(user));
    std::array<std::uint8_t, 128> hidden{};
    auto value = radius::hide_user_password(as_bytes(password), authenticator, secret_, hidden);
    EXPECT_TRUE(value);
    builder.add(attr::kUserPassword, *value);
    auto finished = builder.finish();
    EXPECT_TRUE(finished);
    radius::sign_request(*finished, secret_);
    return std::vector<std::uint8_t>(finished->begin(), finished->end());
  }

  std::optional<Code> answer(gateway::DatagramHandler& handler, const std::vector<std::uint8_t>& request) {
    gateway::Endpoint from;
    from.address = {127, 0, 0, 1};
    from.port = 40000;
    const std::size_t n = handler.on_datagram(
        kNow, gateway::Arrival{.listener = gateway::Listener::kAuthentication}, from, request, reply_);
    if (n == 0) return std::nullopt;
    auto packet = radius::Packet::parse(Bytes(reply_.data(), n));
    EXPECT_TRUE(packet);
    return packet ? std::optional<Code>(packet->code()) : std::nullopt;
  }

  SeededRandom random_;
  radius::SharedSecret secret_;
  std::array<std::uint8_t, radius::kMaxPacketLength> reply_{};
};

TEST_F(ReloadingHandlerTest, NextRequestIsDecidedWithThePublishedState) {
  auto start = state_with("alice Cleartext-Password := \"a\"\n");
  PublishedState published(start);
  gateway::RequestHandlerFactory factory(start, random_, nullptr);
  ReloadingHandlerFactory reloading(factory, published);
  std::unique_ptr<gateway::DatagramHandler> handler = reloading.make_handler(0);

  EXPECT_EQ(answer(*handler, pap("alice", "a", 1)), Code::kAccessAccept);
  const std::vector<std::uint8_t> bob_before = pap("bob", "b", 2);
  EXPECT_EQ(answer(*handler, bob_before), Code::kAccessReject);

  published.publish(state_with("bob Cleartext-Password := \"b\"\n"));
  EXPECT_EQ(answer(*handler, pap("bob", "b", 3)), Code::kAccessAccept);
  EXPECT_EQ(answer(*handler, pap("alice", "a", 4)), Code::kAccessReject);
  EXPECT_EQ(static_cast<ReloadingHandler&>(*handler).generation(), 1u);
  // The duplicate cache survived the switch: the retransmission gets the
  // answer it was given, not a new decision.
  EXPECT_EQ(answer(*handler, bob_before), Code::kAccessReject);
  EXPECT_EQ(static_cast<ReloadingHandler&>(*handler).handler().duplicates().answered_size(), 4u);
}

// The gateway's start (src/app/commands.cc): once every handler is made the
// factory lets go of the start state, so that the first reload frees it
// instead of keeping it beside every later state for the life of the process.
TEST_F(ReloadingHandlerTest, TheStartStateIsFreedByAReloadOnceTheFactoryForgetsIt) {
  auto start = state_with("alice Cleartext-Password := \"a\"\n");
  const std::weak_ptr<const gateway::GatewayState> watch = start;
  PublishedState published(start);
  start.reset();
  gateway::RequestHandlerFactory factory(published.current().second, random_, nullptr);
  ReloadingHandlerFactory reloading(factory, published);
  std::unique_ptr<gateway::DatagramHandler> handler = reloading.make_handler(0);
  factory.forget_state();
  EXPECT_EQ(answer(*handler, pap("alice", "a", 1)), Code::kAccessAccept);
  published.publish(state_with("bob Cleartext-Password := \"b\"\n"));
  handler->on_tick(kNow);  // The worker takes the new state up.
  EXPECT_EQ(published.collect(), 0u);
  EXPECT_TRUE(watch.expired()) << "nothing holds the start state after the reload";
  EXPECT_EQ(answer(*handler, pap("bob", "b", 2)), Code::kAccessAccept);
}

}  // namespace
}  // namespace rw::gateway_shell
