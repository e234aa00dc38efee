// Forwarding through the request handler (docs/design.md "EAP across
// several gateways"): two gateways' handlers, each with its own
// conversations and State key, and a sink standing for the forwarder's
// socket that the test carries across by hand.
#include <array>
#include <memory>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "config/clients_file.h"
#include "config/users_file.h"
#include "eap/eap_message.h"
#include "eap/md5_method.h"
#include "eap/packet.h"
#include "gateway/eap_forward.h"
#include "gateway/request_handler.h"
#include "radius/authenticator.h"

namespace rw::gateway {
namespace {

namespace attr = radius::attr;
using radius::Code;

constexpr std::string_view kUsers = R"(
alice   Cleartext-Password := "wonderland"
)";
constexpr std::string_view kClients = R"(
client localhost {
  ipaddr = 127.0.0.1
  secret = testing123
}
)";
const Instant kNow{5'000'000'000};

// What a worker handed to its forwarder.
struct Forward {
  std::uint32_t gateway_id = 0;
  Ticket ticket = 0;
  Listener listener = Listener::kAuthentication;
  Endpoint from{};
  std::vector<std::uint8_t> datagram;
};

class RecordingSink final : public EapForwardSink {
 public:
  [[nodiscard]] bool knows(std::uint32_t gateway_id) const override { return gateway_id == peer; }
  [[nodiscard]] bool forward(std::uint32_t gateway_id, Ticket ticket, Listener listener, const Endpoint& from,
                             Bytes datagram) override {
    if (full) return false;
    forwards.push_back({gateway_id, ticket, listener, from, {datagram.begin(), datagram.end()}});
    return true;
  }
  std::uint32_t peer = 0;
  bool full = false;
  std::vector<Forward> forwards;
};

// One gateway: its conversations, its handler, its sink.
struct Gateway {
  Gateway(std::shared_ptr<const GatewayState> state, RandomSource& random, std::uint32_t id,
          std::uint32_t peer, std::uint8_t key_octet) {
    std::array<std::uint8_t, eap::StateCodec::kKeyLength> key{};
    key.fill(key_octet);
    conversations = std::make_unique<EapConversations>(
        EapTableOptions{.conversations_max = 8, .idle_timeout = Duration::seconds(30), .gateway_id = id},
        key);
    sink.peer = peer;
    handler = std::make_unique<RequestHandler>(state, random, counters, nullptr, AccountingSetup{}, 0,
                                               ParkingSetup{.forwarder = &sink});
    handler->set_eap_conversations(conversations.get());
  }
  std::size_t drops(DropReason reason) const {
    return counters.drops[static_cast<std::size_t>(reason)].get();
  }
  std::size_t rejects(RejectReason reason) const {
    return counters.rejects[static_cast<std::size_t>(reason)].get();
  }

  std::unique_ptr<EapConversations> conversations;
  RecordingSink sink;
  GatewayCounters counters;
  std::unique_ptr<RequestHandler> handler;
};

class EapForwardHandlerTest : public ::testing::Test {
 protected:
  EapForwardHandlerTest() : random_(5) {
    auto dictionary = radius::Dictionary::builtin();
    auto users = config::UsersFile::parse(kUsers, "users", dictionary, gateway_users_limits());
    auto clients = config::parse_clients(kClients, "clients.conf");
    config::ClientsLimits radsec_limits;
    radsec_limits.radsec = true;
    auto radsec = config::parse_clients("client proxy {\n ipaddr = 127.0.0.5\n proto = tls\n}\n",
                                        "radsec.conf", radsec_limits);
    GatewayOptions options;
    options.access.eap.methods = {eap::Type::kMd5Challenge};
    auto state = GatewayState::build({.dictionary = dictionary,
                                      .clients = clients->clients,
                                      .users = std::move(*users),
                                      .options = options,
                                      .radsec_clients = radsec->clients});
    state_ = *state;
    a_ = std::make_unique<Gateway>(state_, random_, 1, 2, 0x11);
    b_ = std::make_unique<Gateway>(state_, random_, 2, 1, 0x22);
    nas_.address = {127, 0, 0, 1};
    nas_.port = 40000;
  }

  // An Access-Request with `eap` and `state`, signed as the NAS signs it.
  Bytes request(Bytes eap, std::optional<Bytes> state) {
    authenticator_ = radius::make_request_authenticator(random_);
    radius::PacketBuilder builder(request_);
    builder.begin(Code::kAccessRequest, next_id_++, authenticator_);
    builder.reserve_message_authenticator();
    builder.add(attr::kUserName, as_bytes("alice"));
    builder.add_u32(attr::kNasPortType, 15);
    eap::add_eap_message(builder, eap);
    if (state) builder.add(attr::kState, *state);
    auto finished = builder.finish();
    radius::sign_request(*finished, secret_);
    return *finished;
  }

  // The reply's code, EAP packet and State.
  struct Reply {
    Code code = Code::kAccessReject;
    eap::Packet eap{};
    std::vector<std::uint8_t> eap_octets;
    std::vector<std::uint8_t> state;
  };
  Reply read(Bytes wire) {
    Reply reply;
    auto packet = radius::Packet::parse(wire);
    EXPECT_TRUE(packet.has_value());
    EXPECT_TRUE(radius::verify_response_authenticator(*packet, authenticator_, secret_));
    reply.code = packet->code();
    std::array<std::uint8_t, 4096> buffer{};
    if (auto assembled = eap::reassemble(*packet, buffer))
      reply.eap_octets.assign(assembled->begin(), assembled->end());
    if (auto parsed = eap::parse(reply.eap_octets)) reply.eap = *parsed;
    if (auto state = packet->find(attr::kState)) reply.state.assign(state->value.begin(), state->value.end());
    return reply;
  }

  // The owner's handler decides what `from`'s sink forwarded, as the
  // forwarder thread does; its reply, or nothing.
  std::optional<std::vector<std::uint8_t>> decide_forwarded(Gateway& owner, const Forward& forward) {
    const Arrival arrival{.listener = forward.listener, .forwarded = true};
    const std::size_t n = owner.handler->on_datagram(kNow, arrival, forward.from, forward.datagram, reply_);
    if (n == 0) return std::nullopt;
    return std::vector<std::uint8_t>(reply_.begin(), reply_.begin() + static_cast<std::ptrdiff_t>(n));
  }

  // The relayed reply the receiver's worker sends the NAS.
  std::optional<DeferredReply> relay(Gateway& receiver, Ticket ticket, std::vector<std::uint8_t> wire) {
    Answer answer{.ticket = ticket, .kind = AnswerKind::kForwarded};
    answer.forwarded = std::make_shared<const std::vector<std::uint8_t>>(std::move(wire));
    return receiver.handler->on_answer(kNow, answer, reply_);
  }

  std::vector<std::uint8_t> md5_answer(const Reply& challenge, std::string_view password) {
    const auto value =
        eap::md5_response_value(challenge.eap.identifier, password, challenge.eap.type_data.subspan(1));
    const auto data = eap::md5_type_data(value);
    std::array<std::uint8_t, 64> buffer{};
    const Bytes wire = eap::write(eap::Packet{.code = eap::Code::kResponse,
                                              .identifier = challenge.eap.identifier,
                                              .type = static_cast<std::uint8_t>(eap::Type::kMd5Challenge),
                                              .type_data = data},
                                  buffer);
    return {wire.begin(), wire.end()};
  }

  // A's MD5 challenge to alice's Identity.
  Reply challenge_from_a() {
    std::array<std::uint8_t, 64> buffer{};
    const Bytes name = as_bytes("alice");
    const Bytes identity = eap::write(eap::Packet{.code = eap::Code::kResponse,
                                                  .identifier = 3,
                                                  .type = static_cast<std::uint8_t>(eap::Type::kIdentity),
                                                  .type_data = name},
                                      buffer);
    const std::size_t n =
        a_->handler->on_datagram(kNow, arrival_, nas_, request(identity, std::nullopt), reply_);
    EXPECT_GT(n, 0u);
    Reply reply = read(Bytes(reply_.data(), n));
    EXPECT_EQ(reply.code, Code::kAccessChallenge);
    return reply;
  }

  SeededRandom random_;
  std::shared_ptr<const GatewayState> state_;
  std::unique_ptr<Gateway> a_;
  std::unique_ptr<Gateway> b_;
  Endpoint nas_{};
  Arrival arrival_{};  // How the NAS's requests arrive at A.
  radius::SharedSecret secret_ = *radius::SharedSecret::create(as_bytes("testing123"));
  std::array<std::uint8_t, 4096> request_{};
  std::array<std::uint8_t, 4096> reply_{};
  std::array<std::uint8_t, 16> authenticator_{};
  std::uint8_t next_id_ = 1;
};

TEST_F(EapForwardHandlerTest, AFollowUpAtTheOtherGatewayIsForwardedAndItsReplyRelayed) {
  const Reply challenge = challenge_from_a();
  const auto answer = md5_answer(challenge, "wonderland");
  const Bytes wire = request(answer, Bytes(challenge.state));
  // B: parked, handed to its forwarder, nothing sent yet.
  EXPECT_EQ(b_->handler->on_datagram(kNow, Arrival{}, nas_, wire, reply_), 0u);
  ASSERT_EQ(b_->sink.forwards.size(), 1u);
  const Forward forward = b_->sink.forwards[0];
  EXPECT_EQ(forward.gateway_id, 1u);
  EXPECT_EQ(forward.from, nas_);
  EXPECT_TRUE(std::equal(wire.begin(), wire.end(), forward.datagram.begin(), forward.datagram.end()));
  EXPECT_EQ(b_->counters.eap_forwarded.get(), 1u);
  // A retransmission to B meanwhile is coalesced, not forwarded twice.
  EXPECT_EQ(b_->handler->on_datagram(kNow, Arrival{}, nas_, wire, reply_), 0u);
  EXPECT_EQ(b_->sink.forwards.size(), 1u);
  // A decides it as its own and B relays the Access-Accept to the NAS.
  const auto decided = decide_forwarded(*a_, forward);
  ASSERT_TRUE(decided.has_value());
  const auto relayed = relay(*b_, forward.ticket, *decided);
  ASSERT_TRUE(relayed.has_value());
  EXPECT_EQ(relayed->to, nas_);
  const Reply accept = read(Bytes(reply_.data(), relayed->length));
  EXPECT_EQ(accept.code, Code::kAccessAccept);
  EXPECT_EQ(accept.eap.code, eap::Code::kSuccess);
  EXPECT_EQ(b_->counters.eap_forward_answered.get(), 1u);
  // B's duplicate cache answers a later retransmission itself.
  const std::size_t again = b_->handler->on_datagram(kNow, Arrival{}, nas_, wire, reply_);
  EXPECT_EQ(read(Bytes(reply_.data(), again)).code, Code::kAccessAccept);
  EXPECT_EQ(b_->sink.forwards.size(), 1u);
  // A stale answer for the same ticket is counted, not sent.
  EXPECT_FALSE(relay(*b_, forward.ticket, *decided).has_value());
  EXPECT_EQ(b_->counters.eap_forward_stale.get(), 1u);
}

TEST_F(EapForwardHandlerTest, ARadSecFollowUpIsDecidedAsRadSecAndRelayedOnItsConnection) {
  nas_.address = {127, 0, 0, 5};
  secret_ = *radius::SharedSecret::create(as_bytes("radsec"));
  arrival_ = Arrival{.listener = Listener::kRadSec, .connection = 1};
  const Reply challenge = challenge_from_a();
  const Arrival at_b{.listener = Listener::kRadSec, .connection = 42};
  EXPECT_EQ(
      b_->handler->on_datagram(kNow, at_b, nas_,
                               request(md5_answer(challenge, "wonderland"), Bytes(challenge.state)), reply_),
      0u);
  ASSERT_EQ(b_->sink.forwards.size(), 1u);
  EXPECT_EQ(b_->sink.forwards[0].listener, Listener::kRadSec);
  // A finds the RadSec client by the NAS's address on the RadSec listener.
  const auto decided = decide_forwarded(*a_, b_->sink.forwards[0]);
  ASSERT_TRUE(decided.has_value());
  const auto relayed = relay(*b_, b_->sink.forwards[0].ticket, *decided);
  ASSERT_TRUE(relayed.has_value());
  EXPECT_EQ(relayed->arrival.connection, 42u);  // Back on the TLS connection it came on.
  EXPECT_EQ(read(Bytes(reply_.data(), relayed->length)).code, Code::kAccessAccept);
}

TEST_F(EapForwardHandlerTest, AReplyThatDoesNotAnswerTheRequestIsDropped) {
  const Reply challenge = challenge_from_a();
  const Bytes wire = request(md5_answer(challenge, "wonderland"), Bytes(challenge.state));
  EXPECT_EQ(b_->handler->on_datagram(kNow, Arrival{}, nas_, wire, reply_), 0u);
  ASSERT_EQ(b_->sink.forwards.size(), 1u);
  auto decided = decide_forwarded(*a_, b_->sink.forwards[0]);
  ASSERT_TRUE(decided.has_value());
  (*decided)[5] ^= 1;  // The Response Authenticator no longer answers the NAS's request.
  EXPECT_FALSE(relay(*b_, b_->sink.forwards[0].ticket, *decided).has_value());
  EXPECT_EQ(b_->drops(DropReason::kEapForwardBadReply), 1u);
}

TEST_F(EapForwardHandlerTest, AForwardNobodyAnswersTimesOut) {
  const Reply challenge = challenge_from_a();
  const Bytes wire = request(md5_answer(challenge, "wonderland"), Bytes(challenge.state));
  EXPECT_EQ(b_->handler->on_datagram(kNow, Arrival{}, nas_, wire, reply_), 0u);
  b_->handler->on_tick(kNow + Duration::milliseconds(999));
  EXPECT_EQ(b_->drops(DropReason::kEapForwardTimeout), 0u);
  b_->handler->on_tick(kNow + Duration::seconds(1));
  EXPECT_EQ(b_->drops(DropReason::kEapForwardTimeout), 1u);
  EXPECT_EQ(b_->handler->pending(PendingKind::kForward), 0u);
  // The NAS's retransmission is forwarded afresh.
  EXPECT_EQ(b_->handler->on_datagram(kNow + Duration::seconds(1), Arrival{}, nas_, wire, reply_), 0u);
  EXPECT_EQ(b_->sink.forwards.size(), 2u);
}

TEST_F(EapForwardHandlerTest, AFullQueueDropsAndAnUnknownGatewayIsRefused) {
  const Reply challenge = challenge_from_a();
  b_->sink.full = true;
  EXPECT_EQ(
      b_->handler->on_datagram(kNow, Arrival{}, nas_,
                               request(md5_answer(challenge, "wonderland"), Bytes(challenge.state)), reply_),
      0u);
  EXPECT_EQ(b_->drops(DropReason::kEapForwardQueueFull), 1u);
  EXPECT_EQ(b_->handler->pending(PendingKind::kForward), 0u);
  // A gateway B does not know: refused at once with EAP-Failure.
  b_->sink.full = false;
  b_->sink.peer = 3;
  const std::size_t n = b_->handler->on_datagram(
      kNow, Arrival{}, nas_, request(md5_answer(challenge, "wonderland"), Bytes(challenge.state)), reply_);
  ASSERT_GT(n, 0u);
  const Reply reject = read(Bytes(reply_.data(), n));
  EXPECT_EQ(reject.code, Code::kAccessReject);
  EXPECT_EQ(reject.eap.code, eap::Code::kFailure);
  EXPECT_EQ(b_->rejects(RejectReason::kEapStateOtherGateway), 1u);
  EXPECT_TRUE(b_->sink.forwards.empty());
}

TEST_F(EapForwardHandlerTest, ARequestForwardedHereIsNeverForwardedOn) {
  const Reply challenge = challenge_from_a();
  // A's State forwarded to B (as if by a third gateway): B refuses it rather than forward it back.
  const Arrival forwarded{.forwarded = true};
  const std::size_t n = b_->handler->on_datagram(
      kNow, forwarded, nas_, request(md5_answer(challenge, "wonderland"), Bytes(challenge.state)), reply_);
  ASSERT_GT(n, 0u);
  EXPECT_EQ(read(Bytes(reply_.data(), n)).code, Code::kAccessReject);
  EXPECT_TRUE(b_->sink.forwards.empty());
}

}  // namespace
}  // namespace rw::gateway
