// The authorization policy inside the gateway's request handling: what an
// authenticated request becomes, the reply attributes, the interplay with
// the users file's reply items, the MAB lists, and the rule each decision
// names (docs/policy.md "Semantics").
#include "gateway/authorize.h"

#include <gtest/gtest.h>

#include <vector>

#include "auth/mschap.h"
#include "auth/password.h"
#include "base/random.h"
#include "config/clients_file.h"
#include "config/users_file.h"
#include "gateway/request_handler.h"
#include "policy/policy_file.h"
#include "radius/attribute_crypto.h"
#include "radius/authenticator.h"

namespace rw::gateway {
namespace {

namespace attr = radius::attr;
using radius::Code;

constexpr std::string_view kUsers = R"(
alice   Cleartext-Password := "wonderland"
        Session-Timeout = 60,
        Tunnel-Type:1 = VLAN,
        Tunnel-Medium-Type:1 = IEEE-802,
        Tunnel-Private-Group-Id:1 = "999",
        Class = "users-file"
guest   Cleartext-Password := "guest"
00-11-22-33-44-55
de-ad-be-ef-00-01
)";

constexpr std::string_view kPolicy = R"(
default: reject
groups:
  staff: [alice]
mab:
  allow: ["66:77:88"]
  deny: ["de:ad:be:ef:00:01"]
rules:
  - name: staff-corp
    match: {ssid: corp, group: staff}
    decision: accept
    reply: {vlan: 100, session_timeout: 3600, filter_id: staff}
  - name: corp-is-staff-only
    match: {ssid: corp}
    decision: reject
    reply: {reply_message: "corp is for staff"}
  - name: guest-wifi
    match: {ssid: guest, method: [PAP, CHAP]}
    decision: accept
  - name: devices
    match: {method: MAB}
    decision: accept
    reply: {vlan: devices}
)";

constexpr std::string_view kClients = "client localhost {\n ipaddr = 127.0.0.1\n secret = testing123\n}\n";

class Decisions final : public DecisionObserver {
 public:
  void on_decision(const Decision& decision) override {
    rules.emplace_back(decision.rule);
    reasons.emplace_back(decision.reason());
  }
  std::vector<std::string> rules;
  std::vector<std::string> reasons;
};

class AuthorizeTest : public ::testing::Test {
 protected:
  AuthorizeTest() : random_(7), secret_(*radius::SharedSecret::create(as_bytes("testing123"))) {
    build(kPolicy);
  }

  void build(std::string_view policy_text) {
    auto dictionary = radius::Dictionary::builtin();
    auto users = config::UsersFile::parse(kUsers, "users", dictionary, gateway_users_limits());
    ASSERT_TRUE(users.has_value());
    auto clients = config::parse_clients(kClients, "clients.conf");
    ASSERT_TRUE(clients.has_value());
    auto policy = policy::parse_policy(policy_text, "policy.yaml");
    ASSERT_TRUE(policy.has_value()) << policy.error().front().to_string();
    auto state = GatewayState::build({dictionary, clients->clients, std::move(*users), GatewayOptions{},
                                      std::make_shared<const policy::Policy>(std::move(*policy))});
    ASSERT_TRUE(state.has_value());
    handler_ = std::make_unique<RequestHandler>(*state, random_, counters_, &decisions_);
  }

  // Sends an Access-Request from `user` with `password`, the SSID `ssid`
  // and Calling-Station-Id `mac`; returns the reply.
  radius::Packet send(std::string_view user, std::string_view password, std::string_view ssid,
                      std::string_view mac = "aa-bb-cc-dd-ee-ff") {
    const auto authenticator = radius::make_request_authenticator(random_);
    radius::PacketBuilder builder(request_);
    builder.begin(Code::kAccessRequest, ++identifier_, authenticator);
    builder.reserve_message_authenticator();
    builder.add(attr::kUserName, as_bytes(user));
    std::array<std::uint8_t, 128> hidden{};
    builder.add(attr::kUserPassword,
                *radius::hide_user_password(as_bytes(password), authenticator, secret_, hidden));
    const std::string called = "00-11-22-33-44-55:" + std::string(ssid);
    builder.add(attr::kCalledStationId, as_bytes(called));
    builder.add(attr::kCallingStationId, as_bytes(mac));
    auto request = builder.finish();
    EXPECT_TRUE(request.has_value());
    radius::sign_request(*request, secret_);
    Endpoint from{.address = {127, 0, 0, 1}, .port = 40000};
    const std::size_t n = handler_->on_datagram(Instant{1'000'000'000}, Arrival{.unix_ms = 1'796'207'400'000},
                                                from, *request, reply_);
    replies_.emplace_back(reply_.begin(), reply_.begin() + static_cast<std::ptrdiff_t>(n));
    auto packet = radius::Packet::parse(replies_.back());
    EXPECT_TRUE(packet.has_value());
    return *packet;
  }

  radius::Packet mab(std::string_view mac) { return send(mac, mac, "wired", mac); }

  static std::vector<std::vector<std::uint8_t>> all(const radius::Packet& packet, std::uint8_t type) {
    std::vector<std::vector<std::uint8_t>> values;
    for (const radius::Attribute attribute : packet.attributes()) {
      if (attribute.type == type) values.emplace_back(attribute.value.begin(), attribute.value.end());
    }
    return values;
  }

  SeededRandom random_;
  radius::SharedSecret secret_;
  GatewayCounters counters_;
  Decisions decisions_;
  std::unique_ptr<RequestHandler> handler_;
  std::array<std::uint8_t, 4096> request_{};
  std::array<std::uint8_t, 4096> reply_{};
  std::vector<std::vector<std::uint8_t>> replies_;
  std::uint8_t identifier_ = 0;
};

using Bytes8 = std::vector<std::uint8_t>;

TEST_F(AuthorizeTest, AcceptRuleSendsTheVlanTripleInPlaceOfTheUsersFiles) {
  const radius::Packet reply = send("alice", "wonderland", "corp");
  ASSERT_EQ(reply.code(), Code::kAccessAccept);
  // RFC 3580 §3.31 with tag 1 (RFC 2868 §3.1): VLAN (13), IEEE-802 (6), "100".
  EXPECT_EQ(all(reply, attr::kTunnelType), (std::vector<Bytes8>{{1, 0, 0, 13}}));
  EXPECT_EQ(all(reply, attr::kTunnelMediumType), (std::vector<Bytes8>{{1, 0, 0, 6}}));
  EXPECT_EQ(all(reply, attr::kTunnelPrivateGroupId), (std::vector<Bytes8>{{1, '1', '0', '0'}}));
  EXPECT_EQ(all(reply, attr::kSessionTimeout), (std::vector<Bytes8>{{0, 0, 0x0e, 0x10}}));
  EXPECT_EQ(all(reply, attr::kFilterId), (std::vector<Bytes8>{{'s', 't', 'a', 'f', 'f'}}));
  // What the policy does not set, the users file still sends.
  EXPECT_EQ(all(reply, attr::kClass).size(), 1u);
  EXPECT_EQ(decisions_.rules.back(), "staff-corp");
}

TEST_F(AuthorizeTest, RejectRuleTurnsAnAuthenticatedUserAwayAndSaysWhy) {
  const radius::Packet reply = send("guest", "guest", "corp");
  ASSERT_EQ(reply.code(), Code::kAccessReject);
  EXPECT_EQ(
      all(reply, attr::kReplyMessage),
      (std::vector<Bytes8>{Bytes8(std::begin("corp is for staff"), std::end("corp is for staff") - 1)}));
  EXPECT_EQ(decisions_.rules.back(), "corp-is-staff-only");
  EXPECT_EQ(decisions_.reasons.back(), "policy_reject");
  EXPECT_EQ(counters_.rejects[static_cast<std::size_t>(RejectReason::kPolicyReject)].get(), 1u);
}

TEST_F(AuthorizeTest, PolicyRejectOfMsChapSendsNoSuccessNorKeys) {
  // guest's correct MS-CHAPv2 response, from an SSID only staff may use.
  const auto response =
      auth::ms_chap2_peer_response(0x42, "guest", *auth::nt_password_hash("guest"), random_);
  const auto authenticator = radius::make_request_authenticator(random_);
  radius::PacketBuilder builder(request_);
  builder.begin(Code::kAccessRequest, ++identifier_, authenticator);
  builder.reserve_message_authenticator();
  builder.add(attr::kUserName, as_bytes("guest"));
  builder.add(attr::kCalledStationId, as_bytes("00-11-22-33-44-55:corp"));
  builder.add_vendor(radius::kVendorMicrosoft, radius::ms::kChapChallenge, response.authenticator_challenge);
  builder.add_vendor(radius::kVendorMicrosoft, radius::ms::kChap2Response, response.value);
  auto request = builder.finish();
  ASSERT_TRUE(request.has_value());
  radius::sign_request(*request, secret_);
  const std::size_t n =
      handler_->on_datagram(Instant{1'000'000'000}, Arrival{},
                            Endpoint{.address = {127, 0, 0, 1}, .port = 40000}, *request, reply_);
  const auto reply = radius::Packet::parse(Bytes(reply_.data(), n));
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->code(), Code::kAccessReject);
  EXPECT_FALSE(reply->find_vendor(radius::kVendorMicrosoft, radius::ms::kChap2Success));
  EXPECT_FALSE(reply->find_vendor(radius::kVendorMicrosoft, radius::ms::kMppeSendKey));
  EXPECT_TRUE(reply->find_vendor(radius::kVendorMicrosoft, radius::ms::kChapError));
  EXPECT_EQ(decisions_.rules.back(), "corp-is-staff-only");
}

TEST_F(AuthorizeTest, AuthenticationFailuresNeverReachThePolicy) {
  const radius::Packet reply = send("alice", "wrong", "corp");
  ASSERT_EQ(reply.code(), Code::kAccessReject);
  EXPECT_TRUE(all(reply, attr::kTunnelType).empty());
  EXPECT_EQ(decisions_.rules.back(), "");
  EXPECT_EQ(decisions_.reasons.back(), "wrong_password");
}

TEST_F(AuthorizeTest, NoMatchingRuleFallsToTheDefault) {
  const radius::Packet reply = send("alice", "wonderland", "lab");
  EXPECT_EQ(reply.code(), Code::kAccessReject);
  EXPECT_TRUE(all(reply, attr::kReplyMessage).empty());
  EXPECT_EQ(decisions_.rules.back(), "default");
  EXPECT_EQ(send("guest", "guest", "guest").code(), Code::kAccessAccept);
  EXPECT_EQ(decisions_.rules.back(), "guest-wifi");
}

TEST_F(AuthorizeTest, AcceptWithoutReplyKeepsTheUsersFileItems) {
  build("rules: [{name: all, decision: accept}]\n");
  const radius::Packet reply = send("alice", "wonderland", "corp");
  ASSERT_EQ(reply.code(), Code::kAccessAccept);
  EXPECT_EQ(all(reply, attr::kTunnelPrivateGroupId), (std::vector<Bytes8>{{1, '9', '9', '9'}}));
  EXPECT_EQ(decisions_.rules.back(), "all");
}

TEST_F(AuthorizeTest, MabDenyListRejectsAListedMac) {
  EXPECT_EQ(mab("de-ad-be-ef-00-01").code(), Code::kAccessReject);
  EXPECT_EQ(decisions_.rules.back(), "mab.deny");
  EXPECT_EQ(decisions_.reasons.back(), "policy_reject");
  const radius::Packet listed = mab("00-11-22-33-44-55");
  ASSERT_EQ(listed.code(), Code::kAccessAccept);
  EXPECT_EQ(all(listed, attr::kTunnelPrivateGroupId),
            (std::vector<Bytes8>{{1, 'd', 'e', 'v', 'i', 'c', 'e', 's'}}));
  EXPECT_EQ(decisions_.rules.back(), "devices");
}

TEST_F(AuthorizeTest, MabAllowListAdmitsUnlistedMacsOfItsOui) {
  EXPECT_EQ(mab("66-77-88-00-00-01").code(), Code::kAccessAccept);
  EXPECT_EQ(decisions_.reasons.back(), "mab_allow_list");
  EXPECT_EQ(decisions_.rules.back(), "devices");
  EXPECT_EQ(mab("66-77-89-00-00-01").code(), Code::kAccessReject);
  EXPECT_EQ(decisions_.reasons.back(), "unlisted_mac");
}

TEST(Authorize, PolicySetsOnlyTheAttributesItsReplyNames) {
  const auto dictionary = radius::Dictionary::builtin();
  policy::Reply reply{.vlan = "10"};
  EXPECT_TRUE(policy_sets(&reply, *dictionary->find("Tunnel-Medium-Type")));
  EXPECT_FALSE(policy_sets(&reply, *dictionary->find("Session-Timeout")));
  EXPECT_FALSE(policy_sets(nullptr, *dictionary->find("Tunnel-Type")));
}

}  // namespace
}  // namespace rw::gateway
