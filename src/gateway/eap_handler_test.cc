// EAP through the request handler: whole conversations as a NAS sends them,
// against the shared conversation table, on one or two workers.
#include "gateway/eap_handler.h"

#include <array>
#include <map>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "auth/sql_users.h"
#include "config/clients_file.h"
#include "config/users_file.h"
#include "eap/md5_method.h"
#include "eap/packet.h"
#include "gateway/request_handler.h"
#include "radius/attribute_crypto.h"
#include "radius/authenticator.h"

namespace rw::gateway {
namespace {

namespace attr = radius::attr;
using radius::Code;

constexpr std::string_view kUsers = R"(
alice   Cleartext-Password := "wonderland"
        Reply-Message = "Hello",
        Session-Timeout = 3600
bob     NT-Password := 0x44EBBA8D5312B8D611474411F56989AE
dave    Auth-Type := Reject
        Reply-Message = "Denied"
)";

constexpr std::string_view kClients = R"(
client localhost {
  ipaddr = 127.0.0.1
  secret = testing123
}
client other {
  ipaddr = 127.0.0.2
  secret = other-secret
}
client legacy {
  ipaddr = 127.0.0.9
  secret = legacy
  require_message_authenticator = no
}
)";

constexpr std::array<std::uint8_t, eap::StateCodec::kKeyLength> kKey{
    9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2};
constexpr std::uint32_t kGatewayId = 7;
const Instant kNow{5'000'000'000};

Endpoint endpoint(std::uint8_t last_octet, std::uint16_t port) {
  Endpoint e;
  e.address = {127, 0, 0, last_octet};
  e.port = port;
  return e;
}

std::vector<std::uint8_t> eap_packet(eap::Code code, std::uint8_t identifier, eap::Type type,
                                     std::vector<std::uint8_t> data = {}) {
  std::array<std::uint8_t, 4096> buffer{};
  const Bytes wire = eap::write(
      eap::Packet{
          .code = code, .identifier = identifier, .type = static_cast<std::uint8_t>(type), .type_data = data},
      buffer);
  return {wire.begin(), wire.end()};
}

std::vector<std::uint8_t> identity(std::uint8_t identifier, std::string_view name) {
  const Bytes bytes = as_bytes(name);
  return eap_packet(eap::Code::kResponse, identifier, eap::Type::kIdentity, {bytes.begin(), bytes.end()});
}

// What a NAS sees in a reply.
struct Reply {
  std::vector<std::uint8_t> wire;
  Code code = Code::kAccessReject;
  std::vector<std::uint8_t> eap;  // The EAP-Messages, reassembled.
  std::optional<std::vector<std::uint8_t>> state;
  std::optional<std::uint32_t> session_timeout;
  std::size_t eap_messages = 0;
  std::vector<std::string> reply_messages;
  std::map<std::uint8_t, std::vector<std::uint8_t>> microsoft;  // Vendor 311 sub-attributes.

  [[nodiscard]] eap::Packet eap_parsed() const {
    auto packet = eap::parse(eap);
    EXPECT_TRUE(packet.has_value());
    return packet.value_or(eap::Packet{});
  }
};

// A method that succeeds on its first Response with a known MSK, after a
// first Request of `size` octets: the keys and the splitting of large packets.
class KeyedMethod final : public eap::Method {
 public:
  explicit KeyedMethod(std::size_t size) : size_(size) {}
  [[nodiscard]] eap::Type type() const override { return eap::Type::kTls; }
  [[nodiscard]] eap::MethodStep start() override {
    std::vector<std::uint8_t> data(size_);
    for (std::size_t i = 0; i < size_; ++i) data[i] = static_cast<std::uint8_t>(i);
    return eap::request_step(std::move(data));
  }
  [[nodiscard]] eap::MethodStep on_response(Bytes /*type_data*/) override {
    eap::Msk msk{};
    for (std::size_t i = 0; i < msk.size(); ++i) msk[i] = static_cast<std::uint8_t>(100 + i);
    return eap::success_step(msk);
  }
  [[nodiscard]] std::string_view decided_identity() const override { return "alice"; }

 private:
  std::size_t size_;
};

class KeyedFactory final : public eap::MethodFactory {
 public:
  [[nodiscard]] std::unique_ptr<eap::Method> make(eap::Type type, std::string_view /*identity*/) override {
    if (type != eap::Type::kTls) return nullptr;
    return std::make_unique<KeyedMethod>(size);
  }
  std::size_t size = 40;
};

class RecordingObserver final : public DecisionObserver {
 public:
  void on_decision(const Decision& decision) override {
    decisions.push_back({std::string(decision.user_name), std::string(decision.outer_identity),
                         std::string(method_name(decision.method, decision.eap_type)), decision.accepted,
                         std::string(decision.reason())});
  }
  struct Seen {
    std::string user;
    std::string outer;
    std::string method;
    bool accepted;
    std::string reason;
  };
  std::vector<Seen> decisions;
};

// A user store that misses until told, then answers from memory.
class SlowStore final : public UserStore {
 public:
  Lookup find(std::string_view name) override {
    auto it = users.find(std::string(name));
    if (it == users.end()) return {};
    return {Status::kFound, it->second};
  }
  bool fetch(std::string_view name, Ticket ticket) override {
    fetched.emplace_back(std::string(name), ticket);
    return true;
  }
  std::map<std::string, std::shared_ptr<const auth::SqlUser>> users;
  std::vector<std::pair<std::string, Ticket>> fetched;
};

// The EAP pool as a test drives it: it keeps the steps it is given until
// the test runs them, or refuses them all.
class HoldingStepper final : public EapStepper {
 public:
  bool step(std::shared_ptr<EapStepJob> job, Ticket ticket) override {
    if (refuse) return false;
    held.emplace_back(std::move(job), ticket);
    return true;
  }
  bool refuse = false;
  std::vector<std::pair<std::shared_ptr<EapStepJob>, Ticket>> held;
};

class EapTest : public ::testing::Test {
 protected:
  EapTest() : random_(11) { build({eap::Type::kMd5Challenge}); }

  // Rebuilds the state offering `methods`, the table with `conversations_max`
  // slots, and two workers sharing it.
  void build(std::vector<eap::Type> methods, std::size_t conversations_max = 8,
             std::vector<config::UsersStore> stores = {config::UsersStore::kFiles}) {
    auto dictionary = radius::Dictionary::builtin();
    auto users = config::UsersFile::parse(kUsers, "users", dictionary, gateway_users_limits());
    ASSERT_TRUE(users.has_value());
    auto clients = config::parse_clients(kClients, "clients.conf");
    ASSERT_TRUE(clients.has_value());
    GatewayOptions options;
    options.access.eap.methods = std::move(methods);
    options.access.users_stores = std::move(stores);
    auto state = GatewayState::build({dictionary, clients->clients, std::move(*users), options});
    ASSERT_TRUE(state.has_value()) << (state ? "" : state.error());
    state_ = *state;
    conversations_ =
        std::make_unique<EapConversations>(EapTableOptions{.conversations_max = conversations_max,
                                                           .idle_timeout = Duration::seconds(30),
                                                           .gateway_id = kGatewayId},
                                           kKey);
    for (std::size_t i = 0; i < workers_.size(); ++i) {
      workers_[i] = std::make_unique<RequestHandler>(state_, random_, counters_[i], &observer_,
                                                     AccountingSetup{}, static_cast<std::uint16_t>(i),
                                                     ParkingSetup{.user_store = &store_, .eap = stepper_});
      workers_[i]->set_eap_conversations(conversations_.get());
    }
  }

  // Sends an Access-Request carrying `eap` (split over EAP-Messages) and
  // `state`, from `from`, to worker `worker`; returns what came back.
  std::optional<Reply> send(Bytes eap, std::optional<Bytes> state = std::nullopt, std::size_t worker = 0,
                            Endpoint from = endpoint(1, 40000),
                            std::optional<std::uint32_t> nas_port_type = 15,
                            bool message_authenticator = true, std::string_view user_name = "alice") {
    const std::string_view secret_text = from.address[3] == 2   ? "other-secret"
                                         : from.address[3] == 9 ? "legacy"
                                                                : "testing123";
    const auto secret = *radius::SharedSecret::create(as_bytes(secret_text));
    authenticator_ = radius::make_request_authenticator(random_);
    radius::PacketBuilder builder(request_);
    builder.begin(Code::kAccessRequest, next_id_++, authenticator_);
    if (message_authenticator) builder.reserve_message_authenticator();
    builder.add(attr::kUserName, as_bytes(user_name));
    if (nas_port_type) builder.add_u32(attr::kNasPortType, *nas_port_type);
    eap::add_eap_message(builder, eap);
    if (state) builder.add(attr::kState, *state);
    auto finished = builder.finish();
    EXPECT_TRUE(finished.has_value());
    radius::sign_request(*finished, secret);
    last_request_.assign(finished->begin(), finished->end());
    return deliver(last_request_, worker, from, secret, now_);
  }

  std::optional<Reply> deliver(Bytes request, std::size_t worker, Endpoint from,
                               const radius::SharedSecret& secret, Instant now) {
    const std::size_t n = workers_[worker]->on_datagram(now, Arrival{}, from, request, reply_);
    if (n == 0) return std::nullopt;
    return read(Bytes(reply_.data(), n), secret);
  }

  // The reply, its authenticators checked (Message-Authenticator first).
  Reply read(Bytes wire, const radius::SharedSecret& secret) {
    Reply reply;
    reply.wire.assign(wire.begin(), wire.end());
    auto packet = radius::Packet::parse(reply.wire);
    EXPECT_TRUE(packet.has_value());
    if (!packet) return reply;
    EXPECT_TRUE(radius::verify_response_authenticator(*packet, authenticator_, secret));
    EXPECT_EQ(radius::check_response_message_authenticator(*packet, authenticator_, secret),
              radius::MessageAuthenticatorStatus::kValid);
    EXPECT_EQ((*packet->attributes().begin()).type, attr::kMessageAuthenticator) << "must be first";
    reply.code = packet->code();
    std::array<std::uint8_t, 4096> eap{};
    if (auto assembled = eap::reassemble(*packet, eap))
      reply.eap.assign(assembled->begin(), assembled->end());
    reply.eap_messages = packet->count(attr::kEapMessage);
    if (auto state = packet->find(attr::kState))
      reply.state.emplace(state->value.begin(), state->value.end());
    reply.session_timeout = packet->find_u32(attr::kSessionTimeout);
    for (const radius::Attribute attribute : packet->attributes()) {
      if (attribute.type == attr::kReplyMessage) reply.reply_messages.emplace_back(as_chars(attribute.value));
      if (attribute.type != attr::kVendorSpecific) continue;
      auto vsa = radius::split_vendor_specific(attribute.value);
      if (vsa && vsa->vendor == radius::kVendorMicrosoft && vsa->body.size() >= 2) {
        reply.microsoft[vsa->body[0]].assign(vsa->body.begin() + 2, vsa->body.end());
      }
    }
    return reply;
  }

  // The peer's answer to an EAP-Request/MD5-Challenge.
  std::vector<std::uint8_t> md5_answer(const Reply& challenge, std::string_view password) {
    const eap::Packet request = challenge.eap_parsed();
    EXPECT_EQ(request.type, static_cast<std::uint8_t>(eap::Type::kMd5Challenge));
    EXPECT_EQ(request.type_data.size(), 17u);
    const auto value = eap::md5_response_value(request.identifier, password, request.type_data.subspan(1));
    return eap_packet(eap::Code::kResponse, request.identifier, eap::Type::kMd5Challenge,
                      eap::md5_type_data(value));
  }

  // Identity, then the MD5 answer with `password`: the final reply.
  std::optional<Reply> md5_conversation(std::string_view password, std::string_view user = "alice") {
    const auto challenge = send(identity(3, user), std::nullopt, 0, endpoint(1, 40000), 15, true, user);
    EXPECT_TRUE(challenge.has_value());
    if (!challenge) return std::nullopt;
    EXPECT_EQ(challenge->code, Code::kAccessChallenge);
    return send(md5_answer(*challenge, password), Bytes(*challenge->state), 0, endpoint(1, 40000), 15, true,
                user);
  }

  std::size_t rejects(RejectReason reason) const {
    return counters_[0].rejects[static_cast<std::size_t>(reason)].get() +
           counters_[1].rejects[static_cast<std::size_t>(reason)].get();
  }
  std::size_t drops(DropReason reason) const {
    return counters_[0].drops[static_cast<std::size_t>(reason)].get() +
           counters_[1].drops[static_cast<std::size_t>(reason)].get();
  }

  SeededRandom random_;
  std::shared_ptr<const GatewayState> state_;
  std::unique_ptr<EapConversations> conversations_;
  std::array<GatewayCounters, 2> counters_;
  std::array<std::unique_ptr<RequestHandler>, 2> workers_;
  RecordingObserver observer_;
  SlowStore store_;
  EapStepper* stepper_ = nullptr;  // The EAP pool of the workers build() makes; null: none.
  std::array<std::uint8_t, 4096> request_{};
  std::array<std::uint8_t, 4096> reply_{};
  std::vector<std::uint8_t> last_request_;
  std::array<std::uint8_t, 16> authenticator_{};
  std::uint8_t next_id_ = 1;
  Instant now_ = kNow;
};

TEST_F(EapTest, Md5WithTheRightPasswordIsAccepted) {
  const auto challenge = send(identity(3, "alice"));
  ASSERT_TRUE(challenge.has_value());
  // RFC 2865 §4.4: Access-Challenge with EAP-Message, State, Session-Timeout.
  EXPECT_EQ(challenge->code, Code::kAccessChallenge);
  ASSERT_TRUE(challenge->state.has_value());
  EXPECT_EQ(challenge->state->size(), eap::kStateLength);
  EXPECT_EQ(challenge->session_timeout, 30u);
  EXPECT_TRUE(challenge->reply_messages.empty()) << "no accept attributes in a challenge";
  const eap::Packet request = challenge->eap_parsed();
  EXPECT_EQ(request.code, eap::Code::kRequest);
  EXPECT_EQ(request.identifier, 4);  // The NAS's Identity was 3.
  EXPECT_EQ(conversations_->figures().active, 1u);

  const auto accept = send(md5_answer(*challenge, "wonderland"), Bytes(*challenge->state));
  ASSERT_TRUE(accept.has_value());
  EXPECT_EQ(accept->code, Code::kAccessAccept);
  const eap::Packet success = accept->eap_parsed();
  EXPECT_EQ(success.code, eap::Code::kSuccess);
  EXPECT_EQ(success.identifier, 4);
  // The users file's reply items come with the EAP-Success; EAP-MD5 makes no keys.
  EXPECT_EQ(accept->reply_messages, std::vector<std::string>{"Hello"});
  EXPECT_EQ(accept->session_timeout, 3600u);
  EXPECT_TRUE(accept->microsoft.empty());

  EXPECT_EQ(conversations_->figures().active, 0u);
  EXPECT_EQ(conversations_->figures().started, 1u);
  EXPECT_EQ(counters_[0].access_challenges.get(), 1u);
  EXPECT_EQ(counters_[0].access_accepts.get(), 1u);
  EXPECT_EQ(counters_[0].eap_accepts[eap_method_slot(4)].get(), 1u);
  ASSERT_EQ(observer_.decisions.size(), 1u);
  EXPECT_EQ(observer_.decisions[0].user, "alice");
  EXPECT_EQ(observer_.decisions[0].method, "EAP-MD5");
  EXPECT_TRUE(observer_.decisions[0].accepted);
}

TEST_F(EapTest, Md5WithAWrongPasswordIsRejectedWithEapFailure) {
  const auto reject = md5_conversation("looking-glass");
  ASSERT_TRUE(reject.has_value());
  EXPECT_EQ(reject->code, Code::kAccessReject);
  EXPECT_EQ(reject->eap_parsed().code, eap::Code::kFailure);
  EXPECT_TRUE(reject->reply_messages.empty()) << "alice's Reply-Message would tell that alice exists";
  EXPECT_EQ(rejects(RejectReason::kWrongPassword), 1u);
  EXPECT_EQ(counters_[0].eap_rejects[eap_method_slot(4)].get(), 1u);
  EXPECT_EQ(conversations_->figures().active, 0u);
  ASSERT_EQ(observer_.decisions.size(), 1u);
  EXPECT_EQ(observer_.decisions[0].reason, "wrong_password");
}

TEST_F(EapTest, Md5NeedsACleartextPasswordAndAKnownUser) {
  EXPECT_EQ(md5_conversation("clientPass", "bob")->code, Code::kAccessReject);
  EXPECT_EQ(rejects(RejectReason::kChapNeedsCleartext), 1u);
  EXPECT_EQ(md5_conversation("anything", "mallory")->code, Code::kAccessReject);
  EXPECT_EQ(rejects(RejectReason::kUnknownUser), 1u);
  const auto denied = md5_conversation("anything", "dave");
  EXPECT_EQ(denied->code, Code::kAccessReject);
  EXPECT_EQ(denied->eap_parsed().code, eap::Code::kFailure);
  EXPECT_EQ(denied->reply_messages, std::vector<std::string>{"Denied"});  // Auth-Type := Reject keeps it.
  EXPECT_EQ(rejects(RejectReason::kAuthTypeReject), 1u);
}

TEST_F(EapTest, EapStartAsksForTheIdentity) {
  const auto challenge = send({});
  ASSERT_TRUE(challenge.has_value());
  EXPECT_EQ(challenge->code, Code::kAccessChallenge);
  const eap::Packet request = challenge->eap_parsed();
  EXPECT_EQ(request.type, static_cast<std::uint8_t>(eap::Type::kIdentity));
  // The Identity Response continues the conversation the State names.
  const auto md5 = send(identity(request.identifier, "alice"), Bytes(*challenge->state));
  ASSERT_TRUE(md5.has_value());
  EXPECT_EQ(md5->code, Code::kAccessChallenge);
  EXPECT_EQ(md5->eap_parsed().type, static_cast<std::uint8_t>(eap::Type::kMd5Challenge));
  EXPECT_EQ(*md5->state, *challenge->state);
  const auto accept = send(md5_answer(*md5, "wonderland"), Bytes(*md5->state));
  EXPECT_EQ(accept->code, Code::kAccessAccept);
}

TEST_F(EapTest, Md5IsRefusedOverWirelessNasPortTypes) {
  for (const std::uint32_t wireless : {18u, 19u, 22u, 27u, 36u, 40u}) {
    const auto reject = send(identity(3, "alice"), std::nullopt, 0, endpoint(1, 40000), wireless);
    ASSERT_TRUE(reject.has_value());
    EXPECT_EQ(reject->code, Code::kAccessReject) << wireless;
    EXPECT_EQ(reject->eap_parsed().code, eap::Code::kFailure);
  }
  EXPECT_EQ(rejects(RejectReason::kEapMd5OverWireless), 6u);
  EXPECT_EQ(conversations_->figures().active, 0u);
  // Wired types and requests without NAS-Port-Type are offered EAP-MD5.
  for (const std::optional<std::uint32_t> wired :
       {std::optional<std::uint32_t>(15), std::optional<std::uint32_t>(), std::optional<std::uint32_t>(5)}) {
    EXPECT_EQ(send(identity(3, "alice"), std::nullopt, 0, endpoint(1, 40000), wired)->code,
              Code::kAccessChallenge);
  }
  EXPECT_FALSE(is_wireless_nas_port_type(15));
  EXPECT_FALSE(is_wireless_nas_port_type(44));
  EXPECT_TRUE(is_wireless_nas_port_type(43));
}

TEST_F(EapTest, AnEapRequestWithoutMessageAuthenticatorIsDropped) {
  // RFC 3579 §3.2, even for a client that does not require one otherwise.
  EXPECT_FALSE(send(identity(3, "alice"), std::nullopt, 0, endpoint(1, 40000), 15, false).has_value());
  EXPECT_FALSE(send(identity(3, "alice"), std::nullopt, 0, endpoint(9, 40000), 15, false).has_value());
  EXPECT_EQ(drops(DropReason::kMissingMessageAuthenticator), 2u);
  EXPECT_EQ(conversations_->figures().started, 0u);
}

TEST_F(EapTest, AFollowUpOnAnotherWorkerFromAnotherPortContinues) {
  // The NAS's next Access-Request comes from another source port: the
  // kernel hands it to another worker, which finds the conversation.
  const auto challenge = send(identity(3, "alice"), std::nullopt, 0, endpoint(1, 40000));
  const auto accept =
      send(md5_answer(*challenge, "wonderland"), Bytes(*challenge->state), 1, endpoint(1, 40001));
  ASSERT_TRUE(accept.has_value());
  EXPECT_EQ(accept->code, Code::kAccessAccept);
  EXPECT_EQ(counters_[0].access_challenges.get(), 1u);
  EXPECT_EQ(counters_[1].access_accepts.get(), 1u);
}

TEST_F(EapTest, ConversationsInterleaveIndependently) {
  const auto first = send(identity(3, "alice"), std::nullopt, 0, endpoint(1, 40000));
  const auto second = send(identity(9, "alice"), std::nullopt, 1, endpoint(1, 40002));
  EXPECT_NE(*first->state, *second->state);
  EXPECT_EQ(conversations_->figures().active, 2u);
  const auto second_reject = send(md5_answer(*second, "wrong"), Bytes(*second->state), 0, endpoint(1, 40002));
  const auto first_accept =
      send(md5_answer(*first, "wonderland"), Bytes(*first->state), 1, endpoint(1, 40000));
  EXPECT_EQ(second_reject->code, Code::kAccessReject);
  EXPECT_EQ(first_accept->code, Code::kAccessAccept);
}

TEST_F(EapTest, ATamperedStateIsRefusedWithEapFailure) {
  const auto challenge = send(identity(3, "alice"));
  std::vector<std::uint8_t> tampered = *challenge->state;
  tampered.back() ^= 0x80;
  const auto reject = send(md5_answer(*challenge, "wonderland"), Bytes(tampered));
  ASSERT_TRUE(reject.has_value());
  EXPECT_EQ(reject->code, Code::kAccessReject);
  EXPECT_EQ(reject->eap_parsed().code, eap::Code::kFailure);
  EXPECT_EQ(reject->eap_parsed().identifier, challenge->eap_parsed().identifier);
  EXPECT_EQ(rejects(RejectReason::kEapStateInvalid), 1u);
  // A State of another length is not ours either.
  EXPECT_EQ(send(md5_answer(*challenge, "wonderland"), as_bytes("short"))->code, Code::kAccessReject);
  EXPECT_EQ(rejects(RejectReason::kEapStateInvalid), 2u);
  EXPECT_EQ(conversations_->figures().refused, 2u);
  // The real conversation is untouched.
  EXPECT_EQ(send(md5_answer(*challenge, "wonderland"), Bytes(*challenge->state))->code, Code::kAccessAccept);
}

TEST_F(EapTest, AnotherGatewaysStateIsRefused) {
  const auto challenge = send(identity(3, "alice"));
  const eap::StateCodec other(kGatewayId + 1, kKey);
  const eap::StateBytes theirs = other.mint(0, 0);
  EXPECT_EQ(send(md5_answer(*challenge, "wonderland"), Bytes(theirs))->code, Code::kAccessReject);
  EXPECT_EQ(rejects(RejectReason::kEapStateOtherGateway), 1u);
}

TEST_F(EapTest, AStateReplayedAfterTheConversationEndedIsRefused) {
  const auto challenge = send(identity(3, "alice"));
  const auto answer = md5_answer(*challenge, "wonderland");
  EXPECT_EQ(send(answer, Bytes(*challenge->state))->code, Code::kAccessAccept);
  // The same EAP answer in a new Access-Request (a new Identifier and
  // authenticator, so not a retransmission the duplicate cache answers).
  const auto replay = send(answer, Bytes(*challenge->state));
  ASSERT_TRUE(replay.has_value());
  EXPECT_EQ(replay->code, Code::kAccessReject);
  EXPECT_EQ(rejects(RejectReason::kEapStateUnknown), 1u);
}

TEST_F(EapTest, ARetransmissionGetsTheSameReply) {
  const auto challenge = send(identity(3, "alice"));
  const std::size_t n = workers_[0]->on_datagram(now_, Arrival{}, endpoint(1, 40000), last_request_, reply_);
  EXPECT_EQ(std::vector<std::uint8_t>(reply_.begin(), reply_.begin() + static_cast<std::ptrdiff_t>(n)),
            challenge->wire);
  EXPECT_EQ(conversations_->figures().started, 1u);
}

TEST_F(EapTest, AnIdleConversationExpires) {
  const auto challenge = send(identity(3, "alice"));
  now_ = kNow + Duration::seconds(29);
  workers_[1]->on_tick(now_);
  EXPECT_EQ(conversations_->figures().active, 1u);
  now_ = kNow + Duration::seconds(30);
  workers_[1]->on_tick(now_);
  EXPECT_EQ(conversations_->figures().active, 0u);
  EXPECT_EQ(conversations_->figures().expired, 1u);
  const auto reject = send(md5_answer(*challenge, "wonderland"), Bytes(*challenge->state));
  EXPECT_EQ(reject->code, Code::kAccessReject);
  EXPECT_EQ(rejects(RejectReason::kEapStateUnknown), 1u);
}

TEST_F(EapTest, AResponseWithTheWrongIdentifierIsIgnored) {
  // RFC 3748 §4.1: silently discarded; the conversation goes on.
  const auto challenge = send(identity(3, "alice"));
  auto wrong = md5_answer(*challenge, "wonderland");
  wrong[1] = static_cast<std::uint8_t>(wrong[1] + 5);
  EXPECT_FALSE(send(wrong, Bytes(*challenge->state)).has_value());
  EXPECT_EQ(drops(DropReason::kEapWrongIdentifier), 1u);
  EXPECT_EQ(send(md5_answer(*challenge, "wonderland"), Bytes(*challenge->state))->code, Code::kAccessAccept);
}

TEST_F(EapTest, AnotherNasCannotContinueTheConversation) {
  const auto challenge = send(identity(3, "alice"));
  const auto reject =
      send(md5_answer(*challenge, "wonderland"), Bytes(*challenge->state), 0, endpoint(2, 40000));
  ASSERT_TRUE(reject.has_value());
  EXPECT_EQ(reject->code, Code::kAccessReject);
  EXPECT_EQ(rejects(RejectReason::kEapStateOtherClient), 1u);
  // The NAS that began it still can.
  EXPECT_EQ(send(md5_answer(*challenge, "wonderland"), Bytes(*challenge->state))->code, Code::kAccessAccept);
}

TEST_F(EapTest, NewConversationsAreDroppedAtTheBound) {
  build({eap::Type::kMd5Challenge}, 2);
  const auto first = send(identity(3, "alice"));
  ASSERT_TRUE(send(identity(4, "alice")).has_value());
  EXPECT_FALSE(send(identity(5, "alice")).has_value());
  EXPECT_FALSE(send({}).has_value());
  EXPECT_EQ(drops(DropReason::kEapTableFull), 2u);
  EXPECT_EQ(conversations_->figures().full, 2u);
  // Those in progress finish; then there is room again.
  EXPECT_EQ(send(md5_answer(*first, "wonderland"), Bytes(*first->state))->code, Code::kAccessAccept);
  EXPECT_EQ(send(identity(6, "alice"))->code, Code::kAccessChallenge);
}

TEST_F(EapTest, ANakForAMethodNotOfferedFails) {
  const auto challenge = send(identity(3, "alice"));
  const auto nak =
      eap_packet(eap::Code::kResponse, challenge->eap_parsed().identifier, eap::Type::kNak, {13, 25});
  const auto reject = send(nak, Bytes(*challenge->state));
  ASSERT_TRUE(reject.has_value());
  EXPECT_EQ(reject->code, Code::kAccessReject);
  EXPECT_EQ(reject->eap_parsed().code, eap::Code::kFailure);
  EXPECT_EQ(rejects(RejectReason::kEapNoCommonMethod), 1u);
}

TEST_F(EapTest, LegacyNakMovesToTheNextServerMethod) {
  KeyedFactory factory;
  build({eap::Type::kMd5Challenge, eap::Type::kTls});
  for (auto& worker : workers_) worker->set_eap_methods(&factory);
  // The factory makes no EAP-MD5: EAP-TLS is offered first.
  auto challenge = send(identity(3, "alice"));
  EXPECT_EQ(challenge->eap_parsed().type, static_cast<std::uint8_t>(eap::Type::kTls));
}

TEST_F(EapTest, MalformedEapIsRejected) {
  // Not a Response, does not parse, or a Response other than Identity without a State.
  EXPECT_EQ(send(eap_packet(eap::Code::kRequest, 1, eap::Type::kIdentity))->code, Code::kAccessReject);
  const std::vector<std::uint8_t> truncated{2, 1, 0, 40, 1};
  EXPECT_EQ(send(truncated)->code, Code::kAccessReject);
  EXPECT_EQ(rejects(RejectReason::kEapMalformed), 2u);
  const auto orphan = send(eap_packet(eap::Code::kResponse, 1, eap::Type::kMd5Challenge, {16}));
  EXPECT_EQ(orphan->code, Code::kAccessReject);
  EXPECT_EQ(orphan->eap_parsed().code, eap::Code::kFailure);
  EXPECT_EQ(rejects(RejectReason::kEapNoConversation), 1u);
  // EAP-Start with a State.
  const auto challenge = send(identity(3, "alice"));
  EXPECT_EQ(send({}, Bytes(*challenge->state))->code, Code::kAccessReject);
  EXPECT_EQ(rejects(RejectReason::kEapMalformed), 3u);
}

TEST_F(EapTest, WithoutEapMethodsEapIsNotServed) {
  build({});
  const auto reject = send(identity(3, "alice"));
  ASSERT_TRUE(reject.has_value());
  EXPECT_EQ(reject->code, Code::kAccessReject);
  EXPECT_EQ(rejects(RejectReason::kEapNotEnabled), 1u);
  EXPECT_EQ(conversations_->figures().started, 0u);
}

TEST_F(EapTest, AKeyDerivingMethodsMskBecomesTheMppeKeys) {
  KeyedFactory factory;
  build({eap::Type::kTls});
  for (auto& worker : workers_) worker->set_eap_methods(&factory);
  const auto challenge = send(identity(3, "alice"));
  const auto accept =
      send(eap_packet(eap::Code::kResponse, challenge->eap_parsed().identifier, eap::Type::kTls),
           Bytes(*challenge->state));
  ASSERT_TRUE(accept.has_value());
  EXPECT_EQ(accept->code, Code::kAccessAccept);
  const auto secret = *radius::SharedSecret::create(as_bytes("testing123"));
  std::array<std::uint8_t, 253> out{};
  // RFC 5216 §2.3: MS-MPPE-Recv-Key is the MSK's first 32 octets, Send-Key the next 32.
  for (const auto& [type, first] :
       {std::pair{radius::ms::kMppeRecvKey, 100}, std::pair{radius::ms::kMppeSendKey, 132}}) {
    ASSERT_TRUE(accept->microsoft.contains(type));
    auto key = radius::decrypt_mppe_key(accept->microsoft.at(type), authenticator_, secret, out);
    ASSERT_TRUE(key.has_value());
    ASSERT_EQ(key->size(), 32u);
    for (std::size_t i = 0; i < 32; ++i) EXPECT_EQ((*key)[i], first + i);
  }
  EXPECT_EQ(counters_[0].eap_accepts[eap_method_slot(13)].get(), 1u);
}

TEST_F(EapTest, ALargeEapRequestIsSplitOverEapMessages) {
  KeyedFactory factory;
  factory.size = 1000;
  build({eap::Type::kTls});
  for (auto& worker : workers_) worker->set_eap_methods(&factory);
  const auto challenge = send(identity(3, "alice"));
  ASSERT_TRUE(challenge.has_value());
  EXPECT_EQ(challenge->eap.size(), 1005u);
  EXPECT_EQ(challenge->eap_messages, 4u);  // 253 + 253 + 253 + 246.
  EXPECT_EQ(challenge->eap_parsed().type_data.size(), 1000u);
}

TEST_F(EapTest, AnSqlUserIsLookedUpAndTheConversationResumes) {
  build({eap::Type::kMd5Challenge}, 8, {config::UsersStore::kSql, config::UsersStore::kFiles});
  const auto challenge =
      send(identity(3, "sqluser"), std::nullopt, 0, endpoint(1, 40000), 15, true, "sqluser");
  ASSERT_EQ(challenge->code, Code::kAccessChallenge);
  // The password is not in memory: the request waits for the store.
  EXPECT_FALSE(send(md5_answer(*challenge, "secret-one"), Bytes(*challenge->state), 0, endpoint(1, 40000), 15,
                    true, "sqluser")
                   .has_value());
  ASSERT_EQ(store_.fetched.size(), 1u);
  EXPECT_EQ(store_.fetched[0].first, "sqluser");
  EXPECT_EQ(conversations_->figures().active, 1u);
  auth::SqlUserRows rows;
  rows.check.push_back({.attribute = "Cleartext-Password", .op = ":=", .value = "secret-one"});
  auto user = auth::compile_sql_user("sqluser", rows, radius::Dictionary::builtin());
  ASSERT_TRUE(user.has_value());
  const auto reply = workers_[0]->on_answer(
      now_, Answer{.ticket = store_.fetched[0].second, .kind = AnswerKind::kUserLookup, .user = *user},
      reply_);
  ASSERT_TRUE(reply.has_value());
  const auto secret = *radius::SharedSecret::create(as_bytes("testing123"));
  const Reply accept = read(Bytes(reply_.data(), reply->length), secret);
  EXPECT_EQ(accept.code, Code::kAccessAccept);
  EXPECT_EQ(accept.eap_parsed().code, eap::Code::kSuccess);
  EXPECT_EQ(conversations_->figures().active, 0u);
}

TEST_F(EapTest, TheDecisionLogNamesTheOuterIdentity) {
  KeyedFactory factory;
  build({eap::Type::kTls});
  for (auto& worker : workers_) worker->set_eap_methods(&factory);
  const auto challenge =
      send(identity(3, "anonymous"), std::nullopt, 0, endpoint(1, 40000), 15, true, "anonymous");
  (void)send(eap_packet(eap::Code::kResponse, challenge->eap_parsed().identifier, eap::Type::kTls),
             Bytes(*challenge->state), 0, endpoint(1, 40000), 15, true, "anonymous");
  ASSERT_EQ(observer_.decisions.size(), 1u);
  EXPECT_EQ(observer_.decisions[0].user, "alice");  // The method's decided identity.
  EXPECT_EQ(observer_.decisions[0].outer, "anonymous");
  EXPECT_EQ(observer_.decisions[0].method, "EAP-TLS");
}

// The stand-in of a TLS-based method (Type 13) with `stepper` as the EAP
// pool: the conversation is begun (its Start is made on the worker) and
// its first response is what the tests send next.
class EapPoolTest : public EapTest {
 protected:
  void SetUp() override {
    stepper_ = &stepper;
    build({eap::Type::kTls});
    for (auto& worker : workers_) worker->set_eap_methods(&factory);
    challenge = send(identity(3, "alice"));
    ASSERT_TRUE(challenge.has_value());
    ASSERT_EQ(challenge->code, Code::kAccessChallenge);
    EXPECT_TRUE(stepper.held.empty());
    response = eap_packet(eap::Code::kResponse, challenge->eap_parsed().identifier, eap::Type::kTls);
  }
  // Sends the response from `port` to `worker`; the pool keeps its step.
  void send_response(std::size_t worker = 0, std::uint16_t port = 40000) {
    EXPECT_FALSE(send(response, Bytes(*challenge->state), worker, endpoint(1, port)).has_value());
  }
  // Runs the pool's first step and posts it back to `worker`.
  std::optional<DeferredReply> run_step(std::size_t worker = 0) {
    auto [job, ticket] = stepper.held.front();
    job->run();
    last_job = job;
    return workers_[worker]->on_answer(
        now_, Answer{.ticket = ticket, .kind = AnswerKind::kEapStep, .eap_step = job}, reply_);
  }

  KeyedFactory factory;
  HoldingStepper stepper;
  std::optional<Reply> challenge;
  std::vector<std::uint8_t> response;
  std::shared_ptr<EapStepJob> last_job;
  const radius::SharedSecret secret = *radius::SharedSecret::create(as_bytes("testing123"));
};

// With an EAP pool, the steps of a TLS-based method leave the worker: the
// request is parked until the pool posts the step back. The NAS
// retransmitting meanwhile steps nothing twice: the same datagram is
// coalesced by the duplicate cache, a new Access-Request of the
// conversation finds it held; the late answer is the same reply.
TEST_F(EapPoolTest, ATlsStepWaitsInThePoolAndRetransmissionsDoNotStepItTwice) {
  send_response();
  ASSERT_EQ(stepper.held.size(), 1u);
  EXPECT_EQ(workers_[0]->pending(PendingKind::kEapStep), 1u);
  const std::vector<std::uint8_t> first = last_request_;
  const auto first_authenticator = authenticator_;

  EXPECT_FALSE(deliver(first, 0, endpoint(1, 40000), secret, now_).has_value());
  EXPECT_EQ(drops(DropReason::kDuplicateInProgress), 1u);
  send_response(1, 40001);
  EXPECT_EQ(drops(DropReason::kEapConversationBusy), 1u);
  EXPECT_EQ(stepper.held.size(), 1u);

  const auto deferred = run_step();
  ASSERT_TRUE(deferred.has_value());
  authenticator_ = first_authenticator;
  const Reply accept = read(Bytes(reply_.data(), deferred->length), secret);
  EXPECT_EQ(accept.code, Code::kAccessAccept);
  EXPECT_TRUE(accept.microsoft.contains(radius::ms::kMppeRecvKey));
  EXPECT_EQ(workers_[0]->pending(PendingKind::kEapStep), 0u);
  const auto again = deliver(first, 0, endpoint(1, 40000), secret, now_);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->wire, accept.wire);
}

// A step that comes back after its request gave up: the request was
// dropped (eap_unavailable), and the conversation, whose response the step
// consumed, ends; its State names nothing after.
TEST_F(EapPoolTest, AStepBackAfterItsRequestGaveUpEndsTheConversation) {
  send_response();
  ASSERT_EQ(stepper.held.size(), 1u);
  workers_[0]->on_tick(now_ + Duration::seconds(6));
  EXPECT_EQ(drops(DropReason::kEapUnavailable), 1u);
  EXPECT_EQ(workers_[0]->pending(PendingKind::kEapStep), 0u);
  EXPECT_FALSE(run_step().has_value());
  EXPECT_EQ(last_job->held.conversation, nullptr);
  const auto refused = send(response, Bytes(*challenge->state));
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->code, Code::kAccessReject);
  EXPECT_EQ(rejects(RejectReason::kEapStateUnknown), 1u);
}

// At the pool's bound the request is dropped and its conversation put back
// unchanged: the NAS's retransmission continues it.
TEST_F(EapPoolTest, AStepRefusedAtThePoolsBoundIsDroppedAndTheConversationGoesOn) {
  stepper.refuse = true;
  send_response();
  EXPECT_EQ(drops(DropReason::kEapQueueFull), 1u);
  EXPECT_EQ(workers_[0]->pending(PendingKind::kEapStep), 0u);
  stepper.refuse = false;
  send_response(1, 40002);
  ASSERT_EQ(stepper.held.size(), 1u);
  const auto deferred = run_step(1);
  ASSERT_TRUE(deferred.has_value());
  EXPECT_EQ(read(Bytes(reply_.data(), deferred->length), secret).code, Code::kAccessAccept);
}

}  // namespace
}  // namespace rw::gateway
