#include "gateway/request_handler.h"

#include <array>
#include <cstdlib>
#include <deque>
#include <new>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <map>
#include <set>

#include "accounting/accounting_request_for_test.h"
#include "accounting/entry.h"
#include "auth/chap.h"
#include "auth/mppe.h"
#include "auth/mschap.h"
#include "auth/password.h"
#include "base/random.h"
#include "config/clients_file.h"
#include "config/users_file.h"
#include "policy/policy_file.h"
#include "radius/attribute_crypto.h"
#include "radius/authenticator.h"
#include "radius/md5.h"
#include "radius/packet.h"

// Counts heap allocations while `g_counting` is set. Sanitizer runtimes
// bring their own operator new, so the count is taken in plain builds only.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RW_COUNT_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RW_COUNT_ALLOCATIONS 0
#endif
#endif
#ifndef RW_COUNT_ALLOCATIONS
#define RW_COUNT_ALLOCATIONS 1
#endif

namespace {
thread_local bool g_counting = false;
thread_local std::size_t g_allocations = 0;
}  // namespace

#if RW_COUNT_ALLOCATIONS
#if defined(__GNUC__) && !defined(__clang__)
// g++ 12 sees the replaced operator delete inlined into std::allocator and
// takes malloc/free for a mismatch; they match the replaced operator new.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t size) {
  if (g_counting) ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif

namespace rw::gateway {
namespace {

namespace attr = radius::attr;
namespace ms = radius::ms;
using radius::Code;

constexpr std::string_view kUsers = R"(
alice   Cleartext-Password := "wonderland"
        Reply-Message = "Hello",
        Tunnel-Type:1 = VLAN,
        Tunnel-Medium-Type:1 = IEEE-802,
        Tunnel-Private-Group-Id:1 = "100"
bob     NT-Password := 0x44EBBA8D5312B8D611474411F56989AE
dave    Auth-Type := Reject
        Reply-Message = "Denied",
        Session-Timeout = 10
00-11-22-33-44-55
        Session-Timeout = 60
carol   Cleartext-Password := "one-at-a-time", Simultaneous-Use := 1
        Session-Timeout = 3600
zed     Cleartext-Password := "never", Simultaneous-Use := 0
erin    Crypt-Password := "$5$saltsalt$9yMj07lA8PlT4IBEoaFFjtbTam2B/NppjCQBwku9ur8"
        Session-Timeout = 5
)";

constexpr std::string_view kClients = R"(
client localhost {
  ipaddr = 127.0.0.1
  secret = testing123
}
client legacy {
  ipaddr = 127.0.0.9
  secret = legacy
  require_message_authenticator = no
}
client learner {
  ipaddr = 127.0.0.10
  secret = legacy
  require_message_authenticator = auto
}
)";

const Instant kNow{5'000'000'000};

Endpoint endpoint(std::uint8_t last_octet, std::uint16_t port) {
  Endpoint e;
  e.address = {127, 0, 0, last_octet};
  e.port = port;
  return e;
}

class RequestHandlerTest : public ::testing::Test {
 protected:
  RequestHandlerTest() : random_(1), secret_(*radius::SharedSecret::create(as_bytes("testing123"))) {
    GatewayOptions options;
    options.duplicates.answered_max = 64;
    options.duplicates.in_progress_max = 8;
    build_state(options);
    handler_ = std::make_unique<RequestHandler>(state_, random_, counters_, nullptr);
  }

  // Replaces state_ with kUsers and kClients under `options`.
  void build_state(const GatewayOptions& options) {
    auto dictionary = radius::Dictionary::builtin();
    auto users = config::UsersFile::parse(kUsers, "users", dictionary, gateway_users_limits());
    EXPECT_TRUE(users.has_value()) << (users ? "" : users.error().to_string());
    auto clients = config::parse_clients(kClients, "clients.conf");
    EXPECT_TRUE(clients.has_value());
    auto state = GatewayState::build({dictionary, clients->clients, std::move(*users), options});
    EXPECT_TRUE(state.has_value()) << (state ? "" : state.error());
    state_ = *state;
  }

  // Starts an Access-Request with a random authenticator and a Message-Authenticator.
  radius::PacketBuilder& begin(Code code, std::uint8_t identifier, bool message_authenticator = true) {
    request_authenticator_ = radius::make_request_authenticator(random_);
    builder_.emplace(request_buffer_);
    builder_->begin(code, identifier, request_authenticator_);
    if (message_authenticator) builder_->reserve_message_authenticator();
    return *builder_;
  }

  void add_password(std::string_view password) {
    std::array<std::uint8_t, 128> hidden{};
    auto value = radius::hide_user_password(as_bytes(password), request_authenticator_, secret_, hidden);
    ASSERT_TRUE(value.has_value());
    builder_->add(attr::kUserPassword, *value);
  }

  Bytes finish_request() {
    auto finished = builder_->finish();
    EXPECT_TRUE(finished.has_value());
    radius::sign_request(*finished, secret_);
    return *finished;
  }

  // Sends and returns the reply bytes (empty when dropped).
  std::vector<std::uint8_t> send(Bytes request, Listener listener = Listener::kAuthentication,
                                 Endpoint from = endpoint(1, 40000)) {
    const std::size_t n =
        handler_->on_datagram(kNow, Arrival{.listener = listener}, from, request, reply_buffer_);
    return {reply_buffer_.begin(), reply_buffer_.begin() + static_cast<std::ptrdiff_t>(n)};
  }

  // Parses a reply and checks both of its authenticators.
  // The reply bytes are kept alive by the fixture, since a Packet is a view.
  radius::Packet verified(std::vector<std::uint8_t> reply) {
    const std::vector<std::uint8_t>& kept = kept_replies_.emplace_back(std::move(reply));
    auto packet = radius::Packet::parse(kept);
    EXPECT_TRUE(packet.has_value());
    EXPECT_TRUE(radius::verify_response_authenticator(*packet, request_authenticator_, secret_));
    EXPECT_EQ(radius::check_response_message_authenticator(*packet, request_authenticator_, secret_),
              radius::MessageAuthenticatorStatus::kValid);
    EXPECT_EQ((*packet->attributes().begin()).type, attr::kMessageAuthenticator) << "must be first";
    return *packet;
  }

  // Replaces the handler's state with one built from `users` and `options`.
  void rebuild(std::string_view users_text, const GatewayOptions& options) {
    auto dictionary = radius::Dictionary::builtin();
    auto users = config::UsersFile::parse(users_text, "users", dictionary, gateway_users_limits());
    ASSERT_TRUE(users.has_value()) << (users ? "" : users.error().to_string());
    auto clients = config::parse_clients(kClients, "clients.conf");
    auto state = GatewayState::build({dictionary, clients->clients, std::move(*users), options});
    ASSERT_TRUE(state.has_value()) << (state ? "" : state.error());
    state_ = *state;
    handler_ = std::make_unique<RequestHandler>(state_, random_, counters_, nullptr);
  }

  std::vector<std::uint8_t> mab(std::string_view mac, std::uint8_t id) {
    auto& b = begin(Code::kAccessRequest, id);
    b.add(attr::kUserName, as_bytes(mac));
    b.add(attr::kCallingStationId, as_bytes(mac));
    add_password(mac);
    return send(finish_request());
  }

  // An MS-CHAPv2 request whose response was computed from `password`.
  std::vector<std::uint8_t> ms_chap2(std::string_view user, std::string_view password, std::uint8_t id) {
    const auto response =
        auth::ms_chap2_peer_response(0x42, user, *auth::nt_password_hash(password), random_);
    auto& b = begin(Code::kAccessRequest, id);
    b.add(attr::kUserName, as_bytes(user));
    b.add_vendor(radius::kVendorMicrosoft, ms::kChapChallenge, response.authenticator_challenge);
    b.add_vendor(radius::kVendorMicrosoft, ms::kChap2Response, response.value);
    return send(finish_request());
  }

  std::uint64_t drops(DropReason reason) const {
    return counters_.drops[static_cast<std::size_t>(reason)].get();
  }

  // What the handler counted under the client label `label`.
  ClientCounts client_counts(std::string_view label) const {
    std::map<std::string, ClientCounts, std::less<>> totals;
    totals.try_emplace(std::string(label));
    counters_.clients.add_counts_to(totals);
    return totals.begin()->second;
  }

  // A state with kUsers and the clients of `clients_text`, as a reload builds it.
  std::shared_ptr<const GatewayState> state_with_clients(std::string_view clients_text) {
    auto dictionary = radius::Dictionary::builtin();
    auto users = config::UsersFile::parse(kUsers, "users", dictionary, gateway_users_limits());
    auto clients = config::parse_clients(clients_text, "clients.conf");
    EXPECT_TRUE(users.has_value() && clients.has_value());
    auto state = GatewayState::build({dictionary, clients->clients, std::move(*users), state_->options()});
    EXPECT_TRUE(state.has_value()) << (state ? "" : state.error());
    return *state;
  }

  std::vector<std::uint8_t> pap(std::string_view user, std::string_view password, std::uint8_t id = 1) {
    begin(Code::kAccessRequest, id).add(attr::kUserName, as_bytes(user));
    add_password(password);
    return send(finish_request());
  }

  SeededRandom random_;
  radius::SharedSecret secret_;
  GatewayCounters counters_;
  std::shared_ptr<const GatewayState> state_;
  std::unique_ptr<RequestHandler> handler_;
  std::array<std::uint8_t, radius::kMaxPacketLength> request_buffer_{};
  std::array<std::uint8_t, radius::kMaxPacketLength> reply_buffer_{};
  std::optional<radius::PacketBuilder> builder_;
  std::deque<std::vector<std::uint8_t>> kept_replies_;
  radius::Authenticator request_authenticator_{};
};

TEST_F(RequestHandlerTest, PapAcceptCarriesTaggedVlanReply) {
  const auto reply = pap("alice", "wonderland");
  ASSERT_FALSE(reply.empty());
  const radius::Packet packet = verified(reply);
  EXPECT_EQ(packet.code(), Code::kAccessAccept);
  const auto vlan = packet.find(attr::kTunnelPrivateGroupId);
  ASSERT_TRUE(vlan.has_value());
  EXPECT_EQ(std::vector<std::uint8_t>(vlan->value.begin(), vlan->value.end()),
            (std::vector<std::uint8_t>{1, '1', '0', '0'}));
  const auto type = packet.find(attr::kTunnelType);
  ASSERT_TRUE(type.has_value());
  EXPECT_EQ(std::vector<std::uint8_t>(type->value.begin(), type->value.end()),
            (std::vector<std::uint8_t>{1, 0, 0, 13}));
  EXPECT_EQ(counters_.access_accepts.get(), 1u);
}

TEST_F(RequestHandlerTest, PapWrongPasswordRejectsWithoutAcceptAttributes) {
  const radius::Packet packet = verified(pap("alice", "looking-glass"));
  EXPECT_EQ(packet.code(), Code::kAccessReject);
  EXPECT_FALSE(packet.find(attr::kTunnelPrivateGroupId).has_value());
  // alice's Reply-Message is hers: a reject that carried it would tell an
  // attacker that alice exists (docs/security.md "Authentication replies").
  EXPECT_FALSE(packet.find(attr::kReplyMessage).has_value());
  EXPECT_EQ(counters_.access_rejects.get(), 1u);
}

// The attribute types of a reply, without Message-Authenticator (whose
// value differs per reply anyway).
std::vector<std::uint8_t> attribute_types(const radius::Packet& packet) {
  std::vector<std::uint8_t> types;
  for (const radius::Attribute a : packet.attributes()) types.push_back(a.type);
  return types;
}

TEST_F(RequestHandlerTest, KnownAndUnknownUsersGetTheSameReject) {
  const std::string users = std::string(kUsers) + "DEFAULT\n        Reply-Message = \"Welcome\"\n";
  rebuild(users, state_->options());
  const radius::Packet known = verified(pap("alice", "looking-glass", 1));
  const radius::Packet unknown = verified(pap("mallory", "looking-glass", 1));
  EXPECT_EQ(known.code(), Code::kAccessReject);
  EXPECT_EQ(unknown.code(), Code::kAccessReject);
  EXPECT_EQ(known.length(), unknown.length());
  EXPECT_EQ(attribute_types(known), attribute_types(unknown));
  EXPECT_FALSE(unknown.find(attr::kReplyMessage).has_value());
  // An operator's explicit reject still says what it was configured to say.
  const radius::Packet dave = verified(pap("dave", "x", 2));
  ASSERT_TRUE(dave.find(attr::kReplyMessage).has_value());
  EXPECT_EQ(as_chars(dave.find(attr::kReplyMessage)->value), "Denied");
}

TEST_F(RequestHandlerTest, MsChapErrorIsTheSameForUnknownAndKnownUsers) {
  const radius::Packet known = verified(ms_chap2("bob", "not-his-password", 1));
  const radius::Packet unknown = verified(ms_chap2("mallory", "anything", 2));
  for (const radius::Packet* packet : {&known, &unknown}) {
    EXPECT_EQ(packet->code(), Code::kAccessReject);
    const auto error = packet->find_vendor(radius::kVendorMicrosoft, ms::kChapError);
    ASSERT_TRUE(error.has_value());
    // Ident, then "E=691 R=0 C=<32 hex> V=3 M=Authentication failed": only C differs.
    const std::string text(as_chars(error->subspan(1)));
    EXPECT_EQ((*error)[0], 0x42);
    EXPECT_EQ(text.substr(0, 12), "E=691 R=0 C=");
    EXPECT_EQ(text.substr(44), " V=3 M=Authentication failed");
  }
  EXPECT_EQ(known.length(), unknown.length());
  EXPECT_EQ(attribute_types(known), attribute_types(unknown));
}

TEST_F(RequestHandlerTest, UnknownUserRejects) {
  EXPECT_EQ(verified(pap("mallory", "x")).code(), Code::kAccessReject);
}

TEST_F(RequestHandlerTest, PapAgainstNtPassword) {
  EXPECT_EQ(verified(pap("bob", "clientPass")).code(), Code::kAccessAccept);
  EXPECT_EQ(verified(pap("bob", "clientpass", 2)).code(), Code::kAccessReject);
}

TEST_F(RequestHandlerTest, AuthTypeRejectSendsOnlyReplyMessage) {
  const radius::Packet packet = verified(pap("dave", "anything"));
  EXPECT_EQ(packet.code(), Code::kAccessReject);
  EXPECT_TRUE(packet.find(attr::kReplyMessage).has_value());
  EXPECT_FALSE(packet.find(attr::kSessionTimeout).has_value());
}

TEST_F(RequestHandlerTest, ChapWithRequestAuthenticatorAsChallenge) {
  auto& b = begin(Code::kAccessRequest, 3);
  b.add(attr::kUserName, as_bytes("alice"));
  b.add(attr::kChapPassword, auth::chap_password(7, "wonderland", request_authenticator_));
  EXPECT_EQ(verified(send(finish_request())).code(), Code::kAccessAccept);
}

TEST_F(RequestHandlerTest, MsChap2AcceptCarriesSuccessAndDecryptableKeys) {
  const std::string_view user = "bob";
  const auth::NtHash hash = *auth::nt_password_hash("clientPass");
  const auto peer = auth::ms_chap2_peer_response(0x42, user, hash, random_);

  auto& b = begin(Code::kAccessRequest, 4);
  b.add(attr::kUserName, as_bytes(user));
  b.add_vendor(radius::kVendorMicrosoft, ms::kChapChallenge, peer.authenticator_challenge);
  b.add_vendor(radius::kVendorMicrosoft, ms::kChap2Response, peer.value);
  const radius::Packet packet = verified(send(finish_request()));
  ASSERT_EQ(packet.code(), Code::kAccessAccept);

  const auto success = packet.find_vendor(radius::kVendorMicrosoft, ms::kChap2Success);
  ASSERT_TRUE(success.has_value());
  const auto& expected = peer.authenticator_response;
  EXPECT_EQ((*success)[0], 0x42);
  EXPECT_EQ(as_chars(success->subspan(1)), std::string_view(expected.data(), expected.size()));

  const auth::MppeKeys keys = auth::ms_chap2_mppe_keys(hash, peer.nt_response);
  std::array<std::uint8_t, 64> plain{};
  const auto send_key = packet.find_vendor(radius::kVendorMicrosoft, ms::kMppeSendKey);
  ASSERT_TRUE(send_key.has_value());
  auto decrypted = radius::decrypt_mppe_key(*send_key, request_authenticator_, secret_, plain);
  ASSERT_TRUE(decrypted.has_value());
  EXPECT_TRUE(std::equal(decrypted->begin(), decrypted->end(), keys.send_key.begin(), keys.send_key.end()));
}

TEST_F(RequestHandlerTest, MabInAnyNotationMatchesTheCanonicalEntry) {
  for (std::string_view mac : {"00:11:22:33:44:55", "0011.2233.4455", "001122334455", "00-11-22-33-44-55"}) {
    auto& b = begin(Code::kAccessRequest, 5);
    b.add(attr::kUserName, as_bytes(mac));
    b.add(attr::kCallingStationId, as_bytes(mac));
    add_password(mac);
    const radius::Packet packet = verified(send(finish_request()));
    EXPECT_EQ(packet.code(), Code::kAccessAccept) << mac;
    EXPECT_TRUE(packet.find(attr::kSessionTimeout).has_value());
  }
}

TEST_F(RequestHandlerTest, UnlistedMacIsRejectedByDefault) {
  auto& b = begin(Code::kAccessRequest, 6);
  b.add(attr::kUserName, as_bytes("66:77:88:99:aa:bb"));
  b.add(attr::kCallingStationId, as_bytes("66-77-88-99-AA-BB"));
  EXPECT_EQ(verified(send(finish_request())).code(), Code::kAccessReject);
}

// etc/demo/users ends in a catch-all DEFAULT, as many sites do: it lists no
// MAC, so it must not let every MAC in (docs/authentication.md "MAB").
constexpr std::string_view kCatchAllDefault = "DEFAULT\n        Session-Timeout = 30\n";

TEST_F(RequestHandlerTest, CatchAllDefaultDoesNotAdmitUnlistedMacs) {
  rebuild(std::string(kUsers) + std::string(kCatchAllDefault), state_->options());
  ASSERT_EQ(state_->options().access.mab_default, MabDefault::kReject);
  const radius::Packet listed = verified(mab("00-11-22-33-44-55", 1));
  EXPECT_EQ(listed.code(), Code::kAccessAccept);
  const radius::Packet unlisted = verified(mab("66-77-88-99-aa-bb", 2));
  EXPECT_EQ(unlisted.code(), Code::kAccessReject);
  EXPECT_FALSE(unlisted.find(attr::kSessionTimeout).has_value());
}

TEST_F(RequestHandlerTest, NamedMacEntryWhoseChecksFailIsUnlisted) {
  // The MAC's own entry applies only on one NAS; elsewhere only DEFAULT matches.
  const std::string users = "00:11:22:33:44:66 NAS-Identifier == \"lobby\"\n" + std::string(kCatchAllDefault);
  rebuild(users, state_->options());
  EXPECT_EQ(verified(mab("00:11:22:33:44:66", 1)).code(), Code::kAccessReject);
}

TEST_F(RequestHandlerTest, MabDefaultAcceptAdmitsUnlistedMacsWithDefaultReplies) {
  GatewayOptions options = state_->options();
  options.access.mab_default = MabDefault::kAccept;
  rebuild(std::string(kUsers) + std::string(kCatchAllDefault), options);
  const radius::Packet unlisted = verified(mab("66:77:88:99:aa:bb", 1));
  EXPECT_EQ(unlisted.code(), Code::kAccessAccept);
  ASSERT_TRUE(unlisted.find(attr::kSessionTimeout).has_value());
  // The listed MAC still gets its own entry's items (Session-Timeout 60).
  const radius::Packet listed = verified(mab("00:11:22:33:44:55", 2));
  ASSERT_EQ(listed.code(), Code::kAccessAccept);
  EXPECT_EQ(listed.find(attr::kSessionTimeout)->value[3], 60);
}

TEST_F(RequestHandlerTest, ProxyStateIsCopiedInOrder) {
  auto& b = begin(Code::kAccessRequest, 7);
  b.add(attr::kUserName, as_bytes("alice"));
  add_password("wonderland");
  b.add(attr::kProxyState, as_bytes("first"));
  b.add(attr::kProxyState, as_bytes("second"));
  const radius::Packet packet = verified(send(finish_request()));
  std::vector<std::string> states;
  for (const radius::Attribute a : packet.attributes()) {
    if (a.type == attr::kProxyState) states.emplace_back(as_chars(a.value));
  }
  EXPECT_EQ(states, (std::vector<std::string>{"first", "second"}));
}

TEST_F(RequestHandlerTest, RetransmissionGetsTheIdenticalReply) {
  begin(Code::kAccessRequest, 8).add(attr::kUserName, as_bytes("alice"));
  add_password("wonderland");
  const Bytes request = finish_request();
  const auto first = send(request);
  const auto second = send(request);
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first, second);
  EXPECT_EQ(counters_.retransmissions_answered.get(), 1u);
  EXPECT_EQ(counters_.access_accepts.get(), 1u) << "decided once";
}

TEST_F(RequestHandlerTest, MissingMessageAuthenticatorIsDroppedAndCounted) {
  begin(Code::kAccessRequest, 9, /*message_authenticator=*/false).add(attr::kUserName, as_bytes("alice"));
  add_password("wonderland");
  EXPECT_TRUE(send(finish_request()).empty());
  EXPECT_EQ(drops(DropReason::kMissingMessageAuthenticator), 1u);
}

TEST_F(RequestHandlerTest, ClientThatDoesNotRequireMessageAuthenticatorIsServedWithout) {
  secret_ = *radius::SharedSecret::create(as_bytes("legacy"));
  begin(Code::kAccessRequest, 10, /*message_authenticator=*/false).add(attr::kUserName, as_bytes("alice"));
  add_password("wonderland");
  const auto reply = send(finish_request(), Listener::kAuthentication, endpoint(9, 1812));
  EXPECT_EQ(verified(reply).code(), Code::kAccessAccept);
}

TEST_F(RequestHandlerTest, ProxyStateWithoutMessageAuthenticatorIsDroppedEvenWhenNotRequired) {
  secret_ = *radius::SharedSecret::create(as_bytes("legacy"));
  begin(Code::kAccessRequest, 16, /*message_authenticator=*/false).add(attr::kUserName, as_bytes("alice"));
  add_password("wonderland");
  builder_->add(attr::kProxyState, as_bytes("forged"));
  EXPECT_TRUE(send(finish_request(), Listener::kAuthentication, endpoint(9, 1812)).empty());
  EXPECT_EQ(drops(DropReason::kMissingMessageAuthenticator), 1u);
}

TEST_F(RequestHandlerTest, AutoClientMustKeepSendingMessageAuthenticatorOnceSeen) {
  secret_ = *radius::SharedSecret::create(as_bytes("legacy"));
  const Endpoint learner = endpoint(10, 1812);
  begin(Code::kAccessRequest, 17, /*message_authenticator=*/false).add(attr::kUserName, as_bytes("alice"));
  add_password("wonderland");
  EXPECT_EQ(verified(send(finish_request(), Listener::kAuthentication, learner)).code(), Code::kAccessAccept);
  begin(Code::kAccessRequest, 18).add(attr::kUserName, as_bytes("alice"));
  add_password("wonderland");
  EXPECT_EQ(verified(send(finish_request(), Listener::kAuthentication, learner)).code(), Code::kAccessAccept);
  begin(Code::kAccessRequest, 19, /*message_authenticator=*/false).add(attr::kUserName, as_bytes("alice"));
  add_password("wonderland");
  EXPECT_TRUE(send(finish_request(), Listener::kAuthentication, learner).empty());
  EXPECT_EQ(drops(DropReason::kMissingMessageAuthenticator), 1u);
}

TEST_F(RequestHandlerTest, WrongSecretIsDroppedAsBadMessageAuthenticator) {
  secret_ = *radius::SharedSecret::create(as_bytes("not-the-secret"));
  EXPECT_TRUE(pap("alice", "wonderland").empty());
  EXPECT_EQ(drops(DropReason::kBadMessageAuthenticator), 1u);
}

TEST_F(RequestHandlerTest, UnknownClientIsDroppedAndCounted) {
  begin(Code::kAccessRequest, 11).add(attr::kUserName, as_bytes("alice"));
  EXPECT_TRUE(send(finish_request(), Listener::kAuthentication, endpoint(2, 1000)).empty());
  EXPECT_EQ(drops(DropReason::kUnknownClient), 1u);
}

TEST_F(RequestHandlerTest, MalformedIsCountedByReason) {
  const std::array<std::uint8_t, 4> short_datagram{1, 2, 0, 4};
  EXPECT_TRUE(send(short_datagram).empty());
  EXPECT_EQ(drops(DropReason::kMalformed), 1u);
  EXPECT_EQ(
      counters_.malformed_by_reason[static_cast<std::size_t>(radius::DecodeError::kDatagramTooShort)].get(),
      1u);
}

TEST_F(RequestHandlerTest, AccessRequestOnAccountingPortIsUnexpected) {
  begin(Code::kAccessRequest, 12).add(attr::kUserName, as_bytes("alice"));
  EXPECT_TRUE(send(finish_request(), Listener::kAccounting).empty());
  EXPECT_EQ(drops(DropReason::kUnexpectedCode), 1u);
}

TEST_F(RequestHandlerTest, StatusServerAnsweredOnBothListeners) {
  begin(Code::kStatusServer, 13);
  const Bytes request = finish_request();
  EXPECT_EQ(verified(send(request)).code(), Code::kAccessAccept);
  EXPECT_EQ(verified(send(request, Listener::kAccounting)).code(), Code::kAccountingResponse);
  EXPECT_EQ(counters_.status_server.get(), 2u);
}

// RFC 6614: a RadSec packet is looked up among the RadSec clients and
// checked with their secret, `radsec`; the UDP clients are not RadSec
// clients, nor the reverse.
TEST_F(RequestHandlerTest, RadSecPacketsUseTheRadSecClientsAndServeEveryCode) {
  auto dictionary = radius::Dictionary::builtin();
  auto users = config::UsersFile::parse(kUsers, "users", dictionary, gateway_users_limits());
  auto clients = config::parse_clients(kClients, "clients.conf");
  config::ClientsLimits radsec_limits;
  radsec_limits.radsec = true;
  auto radsec = config::parse_clients("client proxy {\n ipaddr = 127.0.0.5\n proto = tls\n}\n", "radsec.conf",
                                      radsec_limits);
  ASSERT_TRUE(users && clients && radsec);
  auto state = GatewayState::build({.dictionary = dictionary,
                                    .clients = clients->clients,
                                    .users = std::move(*users),
                                    .options = state_->options(),
                                    .radsec_clients = radsec->clients});
  ASSERT_TRUE(state.has_value()) << state.error();
  EXPECT_EQ((*state)->client_count(), 4u);
  handler_ = std::make_unique<RequestHandler>(*state, random_, counters_, nullptr);
  const Endpoint proxy = endpoint(5, 50000);

  secret_ = *radius::SharedSecret::create(as_bytes("radsec"));
  begin(Code::kAccessRequest, 21).add(attr::kUserName, as_bytes("alice"));
  add_password("wonderland");
  EXPECT_EQ(verified(send(finish_request(), Listener::kRadSec, proxy)).code(), Code::kAccessAccept);
  begin(Code::kStatusServer, 22);
  EXPECT_EQ(verified(send(finish_request(), Listener::kRadSec, proxy)).code(), Code::kAccessAccept);
  EXPECT_EQ(client_counts("proxy").access_accepts, 1u);
  // The same secret over UDP from the same address: no UDP client there.
  begin(Code::kStatusServer, 23);
  EXPECT_TRUE(send(finish_request(), Listener::kAuthentication, proxy).empty());
  EXPECT_EQ(drops(DropReason::kUnknownClient), 1u);
  // A UDP client's address over RadSec: not a RadSec client.
  secret_ = *radius::SharedSecret::create(as_bytes("testing123"));
  begin(Code::kStatusServer, 24);
  EXPECT_TRUE(send(finish_request(), Listener::kRadSec, endpoint(1, 50001)).empty());
  EXPECT_EQ(drops(DropReason::kUnknownClient), 2u);
  // Another secret than `radsec` from the RadSec client fails its check.
  begin(Code::kStatusServer, 25);
  EXPECT_TRUE(send(finish_request(), Listener::kRadSec, proxy).empty());
  EXPECT_EQ(drops(DropReason::kBadMessageAuthenticator), 1u);
}

TEST_F(RequestHandlerTest, StatusServerWithoutMessageAuthenticatorIsDropped) {
  begin(Code::kStatusServer, 14, /*message_authenticator=*/false);
  secret_ = *radius::SharedSecret::create(as_bytes("legacy"));
  EXPECT_TRUE(send(finish_request(), Listener::kAuthentication, endpoint(9, 1812)).empty());
  EXPECT_EQ(drops(DropReason::kMissingMessageAuthenticator), 1u);
}

TEST_F(RequestHandlerTest, AccountingIsValidatedButNotAnswered) {
  builder_.emplace(request_buffer_);
  builder_->begin(Code::kAccountingRequest, 15);
  builder_->add(attr::kUserName, as_bytes("alice"));
  builder_->add_u32(attr::kAcctStatusType, 1);
  auto finished = builder_->finish();
  ASSERT_TRUE(finished.has_value());
  radius::sign_request(*finished, secret_);
  EXPECT_TRUE(send(*finished, Listener::kAccounting).empty());
  EXPECT_EQ(drops(DropReason::kAccountingNotReplicated), 1u);
  (*finished)[finished->size() - 1] ^= 1;
  EXPECT_TRUE(send(*finished, Listener::kAccounting).empty());
  EXPECT_EQ(drops(DropReason::kBadRequestAuthenticator), 1u);
}

// Takes or refuses records as told; remembers what it took.
class RecordingSink final : public AccountingSink {
 public:
  struct Submission {
    accounting::RecordKey key;
    std::vector<std::uint8_t> record;
    Ticket ticket;
  };
  bool submit(const accounting::RecordKey& key, Bytes record, Ticket ticket) override {
    if (refuse) return false;
    submissions.push_back({key, {record.begin(), record.end()}, ticket});
    return true;
  }
  bool refuse = false;
  std::vector<Submission> submissions;
};

class AccountingTest : public RequestHandlerTest {
 protected:
  AccountingTest() { use_sink(sink_); }

  // A new handler (worker 3) that submits to `sink`.
  void use_sink(AccountingSink& sink) {
    handler_ = std::make_unique<RequestHandler>(
        state_, random_, counters_, nullptr,
        AccountingSetup{.sink = &sink,
                        .recipe = std::make_shared<const accounting::KeyRecipe>(
                            accounting::KeyRecipe::freeradius_default()),
                        .deferred_max = 2,
                        .deferred_timeout = Duration::seconds(30)},
        /*worker=*/3);
  }

  // A signed Accounting-Request Start for session `session`, with the given
  // Proxy-States and optionally a Message-Authenticator.
  std::vector<std::uint8_t> accounting_request(std::uint8_t identifier, std::string_view session,
                                               std::vector<std::string_view> proxy_states = {},
                                               bool message_authenticator = false) {
    builder_.emplace(request_buffer_);
    builder_->begin(Code::kAccountingRequest, identifier);
    if (message_authenticator) builder_->reserve_message_authenticator();
    builder_->add(attr::kUserName, as_bytes("alice"));
    builder_->add_u32(attr::kAcctStatusType, 1);
    builder_->add(attr::kAcctSessionId, as_bytes(session));
    for (std::string_view state : proxy_states) builder_->add(attr::kProxyState, as_bytes(state));
    auto finished = builder_->finish();
    EXPECT_TRUE(finished.has_value());
    radius::sign_request(*finished, secret_);
    return {finished->begin(), finished->end()};
  }

  std::vector<std::uint8_t> send_accounting(const std::vector<std::uint8_t>& request, Instant now = kNow) {
    const Arrival arrival{.listener = Listener::kAccounting, .socket = 7, .unix_ms = 1'700'000'000'000};
    const std::size_t n = handler_->on_datagram(now, arrival, endpoint(1, 40001), request, reply_buffer_);
    return {reply_buffer_.begin(), reply_buffer_.begin() + static_cast<std::ptrdiff_t>(n)};
  }

  std::optional<std::vector<std::uint8_t>> answer(Ticket ticket) {
    auto reply = handler_->on_answer(kNow, Answer{.ticket = ticket, .committed = true}, reply_buffer_);
    if (!reply) return std::nullopt;
    EXPECT_EQ(reply->to, endpoint(1, 40001));
    EXPECT_EQ(reply->arrival.socket, 7);
    EXPECT_EQ(reply->arrival.listener, Listener::kAccounting);
    return std::vector<std::uint8_t>(reply_buffer_.begin(),
                                     reply_buffer_.begin() + static_cast<std::ptrdiff_t>(reply->length));
  }

  // The Request Authenticator of a request built by accounting_request.
  static Bytes authenticator_of(const std::vector<std::uint8_t>& request) {
    return Bytes(request.data() + 4, radius::kAuthenticatorLength);
  }

  RecordingSink sink_;
};

TEST_F(AccountingTest, DefersUntilAnsweredThenSendsSignedResponse) {
  const auto request = accounting_request(21, "S1");
  EXPECT_TRUE(send_accounting(request).empty());
  ASSERT_EQ(sink_.submissions.size(), 1u);
  EXPECT_EQ(ticket_worker(sink_.submissions[0].ticket), 3);
  EXPECT_EQ(handler_->deferred_size(), 1u);
  auto record = accounting::decode_record(sink_.submissions[0].record);
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->key, sink_.submissions[0].key);
  EXPECT_EQ(record->client, "localhost");
  EXPECT_EQ(record->received_unix_ms, 1'700'000'000'000);

  auto reply = answer(sink_.submissions[0].ticket);
  ASSERT_TRUE(reply.has_value());
  auto packet = radius::Packet::parse(*reply);
  ASSERT_TRUE(packet.has_value());
  EXPECT_EQ(packet->code(), Code::kAccountingResponse);
  EXPECT_EQ(packet->identifier(), 21);
  // RFC 2866 §3: the Response Authenticator over the request's authenticator.
  EXPECT_TRUE(radius::verify_response_authenticator(*packet, authenticator_of(request), secret_));
  EXPECT_EQ(radius::check_response_message_authenticator(*packet, authenticator_of(request), secret_),
            radius::MessageAuthenticatorStatus::kAbsent);
  EXPECT_EQ(handler_->deferred_size(), 0u);
  EXPECT_EQ(counters_.accounting_responses.get(), 1u);
}

TEST_F(AccountingTest, RetransmissionWhilePendingIsCoalesced) {
  const auto request = accounting_request(22, "S2");
  EXPECT_TRUE(send_accounting(request).empty());
  EXPECT_TRUE(send_accounting(request).empty());
  EXPECT_TRUE(send_accounting(request).empty());
  EXPECT_EQ(sink_.submissions.size(), 1u);
  EXPECT_EQ(drops(DropReason::kDuplicateInProgress), 2u);
}

TEST_F(AccountingTest, RetransmissionAfterAnswerGetsIdenticalBytes) {
  const auto request = accounting_request(23, "S3");
  EXPECT_TRUE(send_accounting(request).empty());
  auto reply = answer(sink_.submissions.at(0).ticket);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(send_accounting(request), *reply);
  EXPECT_EQ(sink_.submissions.size(), 1u);
  EXPECT_EQ(counters_.retransmissions_answered.get(), 1u);
}

TEST_F(AccountingTest, RefusedSubmitIsForgottenAndRetriedOnRetransmission) {
  const auto request = accounting_request(24, "S4");
  sink_.refuse = true;
  EXPECT_TRUE(send_accounting(request).empty());
  EXPECT_EQ(drops(DropReason::kAccountingRefused), 1u);
  EXPECT_EQ(handler_->deferred_size(), 0u);
  sink_.refuse = false;
  EXPECT_TRUE(send_accounting(request).empty());
  EXPECT_EQ(sink_.submissions.size(), 1u);
  EXPECT_EQ(handler_->deferred_size(), 1u);
}

TEST_F(AccountingTest, RefusalAfterTakingFreesTheRequestForItsRetransmission) {
  const auto request = accounting_request(25, "S5");
  EXPECT_TRUE(send_accounting(request).empty());
  (void)handler_->on_answer(kNow, Answer{.ticket = sink_.submissions.at(0).ticket}, reply_buffer_);
  EXPECT_EQ(handler_->deferred_size(), 0u);
  EXPECT_TRUE(send_accounting(request).empty());
  EXPECT_EQ(sink_.submissions.size(), 2u);
  EXPECT_FALSE(answer(sink_.submissions[0].ticket).has_value()) << "the first ticket is stale";
  EXPECT_TRUE(answer(sink_.submissions[1].ticket).has_value());
}

TEST_F(AccountingTest, StaleTicketIsIgnored) {
  EXPECT_TRUE(send_accounting(accounting_request(26, "S6")).empty());
  const Ticket first = sink_.submissions.at(0).ticket;
  ASSERT_TRUE(answer(first).has_value());
  // The slot is reused by the next request; the old ticket must not answer it.
  EXPECT_TRUE(send_accounting(accounting_request(27, "S7")).empty());
  ASSERT_EQ(ticket_slot(sink_.submissions.at(1).ticket), ticket_slot(first));
  EXPECT_FALSE(answer(first).has_value());
  (void)handler_->on_answer(kNow, Answer{.ticket = first}, reply_buffer_);
  EXPECT_EQ(handler_->deferred_size(), 1u);
  EXPECT_FALSE(answer(make_ticket(4, ticket_slot(first), ticket_generation(first) + 1)).has_value())
      << "another worker's ticket";
  EXPECT_EQ(counters_.accounting_stale.get(), 3u);
  EXPECT_TRUE(answer(sink_.submissions[1].ticket).has_value());
}

TEST_F(AccountingTest, ProxyStatesAreCopiedInOrderAndMessageAuthenticatorSigned) {
  const auto request = accounting_request(28, "S8", {"first", "second"}, /*message_authenticator=*/true);
  EXPECT_TRUE(send_accounting(request).empty());
  auto record = accounting::decode_record(sink_.submissions.at(0).record);
  ASSERT_TRUE(record.has_value());
  EXPECT_FALSE(record->find(attr::kProxyState).has_value()) << "Proxy-State is hop-by-hop";
  auto reply = answer(sink_.submissions[0].ticket);
  ASSERT_TRUE(reply.has_value());
  auto packet = radius::Packet::parse(*reply);
  ASSERT_TRUE(packet.has_value());
  EXPECT_TRUE(radius::verify_response_authenticator(*packet, authenticator_of(request), secret_));
  EXPECT_EQ(radius::check_response_message_authenticator(*packet, authenticator_of(request), secret_),
            radius::MessageAuthenticatorStatus::kValid);
  std::vector<std::string> states;
  for (const radius::Attribute attribute : packet->attributes()) {
    if (attribute.type == attr::kProxyState) states.emplace_back(as_chars(attribute.value));
  }
  EXPECT_EQ(states, (std::vector<std::string>{"first", "second"}));
}

TEST_F(AccountingTest, BadMessageAuthenticatorIsDropped) {
  auto request = accounting_request(29, "S9", {}, /*message_authenticator=*/true);
  // Corrupt the HMAC, then re-sign only the Request Authenticator.
  request[radius::kHeaderLength + 2] ^= 1;
  std::fill(request.begin() + 4, request.begin() + 20, 0);
  radius::Md5 md5;
  md5.update(request);
  md5.update(secret_.bytes());
  const auto digest = md5.finish();
  std::copy(digest.begin(), digest.end(), request.begin() + 4);
  EXPECT_TRUE(send_accounting(request).empty());
  EXPECT_EQ(drops(DropReason::kBadMessageAuthenticator), 1u);
  EXPECT_TRUE(sink_.submissions.empty());
}

TEST_F(AccountingTest, FullTableDropsAndExpiryFreesSlots) {
  EXPECT_TRUE(send_accounting(accounting_request(30, "A")).empty());
  EXPECT_TRUE(send_accounting(accounting_request(31, "B")).empty());
  const auto third = accounting_request(32, "C");
  EXPECT_TRUE(send_accounting(third).empty());
  EXPECT_EQ(drops(DropReason::kAccountingTableFull), 1u);
  EXPECT_EQ(sink_.submissions.size(), 2u);
  handler_->on_tick(kNow + Duration::seconds(31));
  EXPECT_EQ(handler_->deferred_size(), 0u);
  EXPECT_EQ(counters_.accounting_expired.get(), 2u);
  EXPECT_FALSE(answer(sink_.submissions[0].ticket).has_value());
  EXPECT_TRUE(send_accounting(third, kNow + Duration::seconds(31)).empty());
  EXPECT_EQ(sink_.submissions.size(), 3u);
}

TEST_F(AccountingTest, RequestWithoutSessionIdMakesNoRecord) {
  builder_.emplace(request_buffer_);
  builder_->begin(Code::kAccountingRequest, 33);
  builder_->add_u32(attr::kAcctStatusType, 1);
  auto finished = builder_->finish();
  ASSERT_TRUE(finished.has_value());
  radius::sign_request(*finished, secret_);
  EXPECT_TRUE(send_accounting({finished->begin(), finished->end()}).empty());
  EXPECT_EQ(drops(DropReason::kAccountingInvalid), 1u);
  EXPECT_TRUE(sink_.submissions.empty());
}

// Client counters (docs/admin_api.md "/metrics"): every answer and every
// drop after the client was matched also counts under the client's label.
TEST_F(RequestHandlerTest, AnswersAndDropsAreCountedUnderTheClientsLabel) {
  EXPECT_FALSE(pap("alice", "wonderland", 1).empty());
  EXPECT_FALSE(pap("alice", "wrong", 2).empty());
  begin(Code::kStatusServer, 3);
  EXPECT_FALSE(send(finish_request()).empty());
  begin(Code::kAccessRequest, 4, /*message_authenticator=*/false).add(attr::kUserName, as_bytes("alice"));
  add_password("wonderland");
  EXPECT_TRUE(send(finish_request()).empty());
  const std::array<std::uint8_t, 4> short_datagram{1, 2, 0, 4};
  EXPECT_TRUE(send(short_datagram).empty());
  secret_ = *radius::SharedSecret::create(as_bytes("legacy"));
  begin(Code::kAccessRequest, 5, /*message_authenticator=*/false).add(attr::kUserName, as_bytes("alice"));
  add_password("wonderland");
  EXPECT_FALSE(send(finish_request(), Listener::kAuthentication, endpoint(9, 1812)).empty());
  // No client: counted by reason only.
  EXPECT_TRUE(send(short_datagram, Listener::kAuthentication, endpoint(2, 1000)).empty());
  begin(Code::kAccessRequest, 6).add(attr::kUserName, as_bytes("alice"));
  EXPECT_TRUE(send(finish_request(), Listener::kAuthentication, endpoint(2, 1000)).empty());

  const ClientCounts localhost = client_counts("localhost");
  EXPECT_EQ(localhost.access_accepts, 1u);
  EXPECT_EQ(localhost.access_rejects, 1u);
  EXPECT_EQ(localhost.status_server, 1u);
  EXPECT_EQ(localhost.drops[static_cast<std::size_t>(DropReason::kMissingMessageAuthenticator)], 1u);
  EXPECT_EQ(localhost.drops[static_cast<std::size_t>(DropReason::kMalformed)], 1u);
  const ClientCounts legacy = client_counts("legacy");
  EXPECT_EQ(legacy.access_accepts, 1u);
  EXPECT_EQ(legacy.access_rejects, 0u);
  EXPECT_EQ(drops(DropReason::kMalformed), 2u);
  EXPECT_EQ(drops(DropReason::kUnknownClient), 1u);
  for (const char* label : {"localhost", "legacy", "learner"}) {
    EXPECT_EQ(client_counts(label).drops[static_cast<std::size_t>(DropReason::kUnknownClient)], 0u) << label;
  }
  EXPECT_EQ(counters_.clients.size(), 2u) << "learner never sent: it has no row";
}

TEST_F(RequestHandlerTest, ClientCountsFollowTheLabelAcrossReloads) {
  EXPECT_FALSE(pap("alice", "wonderland", 1).empty());
  // The client moves to another index, and a new client comes: the count goes on.
  handler_->set_state(
      state_with_clients("client fresh {\n ipaddr = 127.0.0.2\n secret = other\n}\n"
                         "client localhost {\n ipaddr = 127.0.0.1\n secret = testing123\n}\n"));
  EXPECT_FALSE(pap("alice", "wonderland", 2).empty());
  EXPECT_EQ(client_counts("localhost").access_accepts, 2u);
  EXPECT_EQ(client_counts("fresh").access_accepts, 0u);
  // Renamed: the new label starts from zero; the old one keeps its count.
  handler_->set_state(state_with_clients(
      "client localhost {\n ipaddr = 127.0.0.1\n secret = testing123\n shortname = edge-1\n}\n"));
  EXPECT_FALSE(pap("alice", "wonderland", 3).empty());
  EXPECT_EQ(client_counts("edge-1").access_accepts, 1u);
  EXPECT_EQ(client_counts("localhost").access_accepts, 2u);
  // Back under its old label: it continues from where it stopped.
  handler_->set_state(
      state_with_clients("client localhost {\n ipaddr = 127.0.0.1\n secret = testing123\n}\n"));
  EXPECT_FALSE(pap("alice", "wonderland", 4).empty());
  EXPECT_EQ(client_counts("localhost").access_accepts, 3u);
  EXPECT_EQ(counters_.access_accepts.get(), 4u);
}

// Rows follow the clients that send: none for a configured client before
// its first packet; the first packet adds its row and counts, later ones
// count in the same row, and a reload that keeps the label keeps the row
// (docs/benchmarking.md "Gateway memory by client").
TEST_F(RequestHandlerTest, AClientsRowIsMadeOnItsFirstPacketAndKeptAcrossReloads) {
  EXPECT_EQ(counters_.clients.size(), 0u) << "three clients configured, none has sent";
  EXPECT_FALSE(pap("alice", "wonderland", 1).empty());
  EXPECT_EQ(counters_.clients.size(), 1u);
  EXPECT_EQ(client_counts("localhost").access_accepts, 1u);
  EXPECT_FALSE(pap("alice", "wrong", 2).empty());
  EXPECT_EQ(client_counts("localhost").access_rejects, 1u);
  EXPECT_EQ(counters_.clients.size(), 1u) << "one row per client, not one per packet";
  handler_->set_state(state_with_clients(kClients));
  EXPECT_EQ(counters_.clients.size(), 1u) << "a reload adds no row";
  EXPECT_FALSE(pap("alice", "wonderland", 3).empty());
  EXPECT_EQ(client_counts("localhost").access_accepts, 2u);
  EXPECT_EQ(counters_.clients.size(), 1u);
  secret_ = *radius::SharedSecret::create(as_bytes("legacy"));
  begin(Code::kAccessRequest, 4, /*message_authenticator=*/false).add(attr::kUserName, as_bytes("alice"));
  add_password("wonderland");
  EXPECT_FALSE(send(finish_request(), Listener::kAuthentication, endpoint(9, 1812)).empty());
  EXPECT_EQ(counters_.clients.size(), 2u);
  EXPECT_EQ(client_counts("legacy").access_accepts, 1u);
  EXPECT_EQ(client_counts("learner").access_accepts, 0u);
}

TEST_F(AccountingTest, AResponseIsCountedUnderTheClientTheRequestCameFromAfterAReload) {
  EXPECT_TRUE(send_accounting(accounting_request(34, "S34")).empty());
  handler_->set_state(state_with_clients(
      "client localhost {\n ipaddr = 127.0.0.1\n secret = testing123\n shortname = renamed\n}\n"));
  ASSERT_TRUE(answer(sink_.submissions.at(0).ticket).has_value());
  EXPECT_EQ(client_counts("localhost").accounting_responses, 1u);
  EXPECT_EQ(client_counts("renamed").accounting_responses, 0u);
  // A drop of a parked request counts the same way: a refused record.
  EXPECT_TRUE(send_accounting(accounting_request(35, "S35")).empty());
  (void)handler_->on_answer(kNow, Answer{.ticket = sink_.submissions.at(1).ticket}, reply_buffer_);
  EXPECT_EQ(client_counts("renamed").drops[static_cast<std::size_t>(DropReason::kAccountingRefused)], 1u);
}

// Copies each record into a buffer it owns, as the submission client does,
// and allocates nothing doing so.
class FixedBufferSink final : public AccountingSink {
 public:
  bool submit(const accounting::RecordKey&, Bytes record, Ticket ticket) override {
    std::copy(record.begin(), record.end(), buffer.begin());
    size = record.size();
    last = ticket;
    return true;
  }
  std::array<std::uint8_t, accounting::kRecordLengthMax> buffer{};
  std::size_t size = 0;
  Ticket last = 0;
};

// The accounting path allocates nothing either (issue 15, docs/accounting.md
// "Gateway accounting path"): the record, its encoding, the session text and
// the pending request reuse the worker's buffers, for requests of every
// shape — larger than the warm-up one, with Proxy-States, with a
// Message-Authenticator, with FreeRADIUS's Class shortcut — through the
// Accounting-Response after the commit.
TEST_F(AccountingTest, AccountingPathAllocatesNothing) {
  if (!RW_COUNT_ALLOCATIONS) GTEST_SKIP() << "allocation counting needs the plain operator new";
  FixedBufferSink sink;
  use_sink(sink);
  const Arrival arrival{.listener = Listener::kAccounting, .socket = 7, .unix_ms = 1'700'000'000'000};
  // Warm up with the smallest request and the most Proxy-State: whatever
  // sizes itself lazily does it here, and a pending slot keeps the capacity
  // of its Proxy-State buffer (copy_proxy_state_tlvs).
  const std::string proxy_state(200, 'p');
  const auto warm_up = accounting_request(1, "S", {proxy_state});
  ASSERT_EQ(handler_->on_datagram(kNow, arrival, endpoint(1, 40001), warm_up, reply_buffer_), 0u);
  ASSERT_TRUE(handler_->on_answer(kNow, Answer{.ticket = sink.last, .committed = true}, reply_buffer_));
  std::vector<std::vector<std::uint8_t>> requests;
  for (std::uint8_t n = 2; n < 10; ++n) {
    accounting::testing::RequestSpec spec = accounting::testing::broadband_start(n);
    spec.status_type = accounting::status::kInterimUpdate;
    spec.session_time_s = n * 60u;
    spec.calling_station_id = "AA-BB-CC-DD-EE-" + std::to_string(10 + n);
    spec.proxy_state = n % 2 == 0 ? proxy_state : "";
    spec.message_authenticator = n % 3 == 0;
    spec.class_value = n % 4 == 0 ? "ai:0123456789abcdef0123456789abcdef" : std::string(120, 'c');
    const accounting::testing::AccountingRequest request(spec);
    const Bytes wire = request.packet().wire();
    requests.emplace_back(wire.begin(), wire.end());
  }
  std::size_t answered = 0;
  g_allocations = 0;
  g_counting = true;
  for (const auto& request : requests) {
    EXPECT_EQ(handler_->on_datagram(kNow, arrival, endpoint(1, 40001), request, reply_buffer_), 0u);
    answered +=
        handler_->on_answer(kNow, Answer{.ticket = sink.last, .committed = true}, reply_buffer_).has_value();
  }
  g_counting = false;
  EXPECT_EQ(answered, requests.size());
  for (std::size_t r = 0; r < kDropReasonCount; ++r) EXPECT_EQ(drops(static_cast<DropReason>(r)), 0u) << r;
  EXPECT_EQ(counters_.accounting_responses.get(), requests.size() + 1);
  EXPECT_EQ(g_allocations, 0u);
  // What was submitted is the record make_record builds.
  auto record = accounting::decode_record(Bytes(sink.buffer.data(), sink.size));
  ASSERT_TRUE(record.has_value());
  auto expected = accounting::make_record(*radius::Packet::parse(requests.back()), "localhost",
                                          arrival.unix_ms, accounting::KeyRecipe::freeradius_default());
  ASSERT_TRUE(expected.has_value());
  EXPECT_EQ(*record, *expected);
}

// The packet path allocates nothing (docs/design.md invariant 4).
TEST_F(RequestHandlerTest, PacketPathAllocatesNothing) {
  if (!RW_COUNT_ALLOCATIONS) GTEST_SKIP() << "allocation counting needs the plain operator new";
  // Warm up: the first request of a kind may size lazily built tables.
  ASSERT_FALSE(pap("alice", "wonderland", 30).empty());
  std::vector<std::vector<std::uint8_t>> requests;
  for (std::uint8_t id = 31; id < 36; ++id) {
    begin(Code::kAccessRequest, id).add(attr::kUserName, as_bytes(id % 2 == 0 ? "alice" : "bob"));
    add_password(id % 3 == 0 ? "wrong" : (id % 2 == 0 ? "wonderland" : "clientPass"));
    const Bytes request = finish_request();
    requests.emplace_back(request.begin(), request.end());
  }
  begin(Code::kStatusServer, 40);
  const Bytes status = finish_request();
  requests.emplace_back(status.begin(), status.end());
  std::size_t answered = 0;
  g_allocations = 0;
  g_counting = true;
  for (const auto& request : requests) {
    answered += handler_->on_datagram(kNow, Arrival{}, endpoint(1, 40000), request, reply_buffer_) > 0;
    answered += handler_->on_datagram(kNow, Arrival{}, endpoint(1, 40000), request, reply_buffer_) > 0;
  }
  g_counting = false;
  EXPECT_EQ(answered, 2 * requests.size());
  EXPECT_EQ(g_allocations, 0u);
  // An explain selector in force that selects none of them costs no allocation either.
  ExplainSwitch control;
  control.publish(std::make_shared<const ExplainFilter>(ExplainFilter{
      .selectors = {ExplainSelector{.id = 1, .user = "nobody", .until = kNow + Duration::seconds(60)}}}));
  handler_->set_explain({&control, nullptr});
  ASSERT_FALSE(pap("alice", "wonderland", 36).empty());  // Takes the worker's copy of the filter.
  g_allocations = 0;
  g_counting = true;
  for (const auto& request : requests) {
    answered += handler_->on_datagram(kNow, Arrival{}, endpoint(1, 40000), request, reply_buffer_) > 0;
  }
  g_counting = false;
  EXPECT_EQ(answered, 3 * requests.size());
  EXPECT_EQ(g_allocations, 0u);
  // The instrument itself: an allocation in the window is seen.
  g_counting = true;
  auto probe = std::make_unique<std::array<char, 1000>>();
  g_counting = false;
  volatile char* sink = probe->data();
  (void)sink;
  EXPECT_EQ(g_allocations, 1u);
}

// The authorization policy (docs/policy.md) sits on the packet path: its
// rules decide from views of the request, allocating nothing.
TEST_F(RequestHandlerTest, PacketPathWithAPolicyAllocatesNothing) {
  if (!RW_COUNT_ALLOCATIONS) GTEST_SKIP() << "allocation counting needs the plain operator new";
  auto policy = policy::parse_policy(R"(
groups: {staff: [alice, bob]}
mab: {deny: ["de:ad:be:ef:00:01"]}
rules:
  - {name: night, match: {time: "22:00-06:00"}, decision: reject}
  - {name: staff, match: {group: staff, client: "local*", mac: "00:11:22"}, decision: accept,
     reply: {vlan: 100, session_timeout: 60, filter_id: staff}}
default: reject
)",
                                     "policy.yaml");
  ASSERT_TRUE(policy.has_value());
  auto dictionary = radius::Dictionary::builtin();
  auto users = config::UsersFile::parse(kUsers, "users", dictionary, gateway_users_limits());
  auto clients = config::parse_clients(kClients, "clients.conf");
  auto state = GatewayState::build({dictionary, clients->clients, std::move(*users), GatewayOptions{},
                                    std::make_shared<const policy::Policy>(std::move(*policy))});
  ASSERT_TRUE(state.has_value());
  handler_ = std::make_unique<RequestHandler>(*state, random_, counters_, nullptr);
  std::vector<std::vector<std::uint8_t>> requests;
  for (std::uint8_t id = 1; id < 7; ++id) {
    auto& b = begin(Code::kAccessRequest, id);
    b.add(attr::kUserName, as_bytes(id % 2 == 0 ? "alice" : "bob"));
    b.add(attr::kCallingStationId, as_bytes(id % 3 == 0 ? "00-11-22-33-44-55" : "66-77-88-99-aa-bb"));
    b.add(attr::kCalledStationId, as_bytes("00-11-22-33-44-55:corp"));
    add_password(id % 2 == 0 ? "wonderland" : "clientPass");
    const Bytes request = finish_request();
    requests.emplace_back(request.begin(), request.end());
  }
  const Arrival noon{.unix_ms = 1'796'212'800'000};  // 2026-12-02 12:00 UTC.
  ASSERT_GT(handler_->on_datagram(kNow, noon, endpoint(1, 40000), requests[0], reply_buffer_),
            0u);  // Warm up.
  std::size_t accepted = 0;
  g_allocations = 0;
  g_counting = true;
  for (const auto& request : requests) {
    const std::size_t n = handler_->on_datagram(kNow, noon, endpoint(1, 40001), request, reply_buffer_);
    accepted += n > 0 && reply_buffer_[0] == static_cast<std::uint8_t>(Code::kAccessAccept);
  }
  g_counting = false;
  EXPECT_EQ(accepted, 2u);  // The two with an OUI of 00:11:22; the others fall to the default.
  EXPECT_EQ(g_allocations, 0u);
}

TEST_F(RequestHandlerTest, RandomDatagramsNeverCrashOrAnswer) {
  SeededRandom noise(99);
  std::array<std::uint8_t, 600> datagram{};
  for (int i = 0; i < 2000; ++i) {
    const std::size_t length = noise.below(datagram.size());
    noise.fill(MutableBytes(datagram.data(), length));
    if (length >= 4) {
      datagram[0] = static_cast<std::uint8_t>(1 + noise.below(12));
      datagram[2] = static_cast<std::uint8_t>(length >> 8);
      datagram[3] = static_cast<std::uint8_t>(length);
    }
    EXPECT_TRUE(send(Bytes(datagram.data(), length)).empty());
  }
}

}  // namespace
}  // namespace rw::gateway

namespace rw::gateway {
namespace {

// A store that must not be asked: users of the users file are decided
// without it when `files` comes first.
class UnreachableStore final : public UserStore {
 public:
  Lookup find(std::string_view) override {
    ++asked;
    return {};
  }
  bool fetch(std::string_view, Ticket) override { return false; }
  int asked = 0;
};

class FilesBeforeSqlTest : public RequestHandlerTest {
 protected:
  FilesBeforeSqlTest() {
    GatewayOptions options = state_->options();
    options.access.users_stores = {config::UsersStore::kFiles, config::UsersStore::kSql};
    build_state(options);
    handler_ = std::make_unique<RequestHandler>(state_, random_, counters_, nullptr);
    handler_->set_user_store(&store_);
  }
  UnreachableStore store_;
};

TEST_F(FilesBeforeSqlTest, UsersFileUsersNeverReachSqlAndAllocateNothing) {
  if (!RW_COUNT_ALLOCATIONS) GTEST_SKIP() << "allocation counting needs the plain operator new";
  ASSERT_FALSE(pap("alice", "wonderland", 30).empty());  // Warm up, as PacketPathAllocatesNothing.
  std::vector<std::vector<std::uint8_t>> requests;
  for (std::uint8_t id = 1; id < 5; ++id) {
    begin(Code::kAccessRequest, id).add(attr::kUserName, as_bytes("alice"));
    add_password(id % 2 == 0 ? "wonderland" : "wrong");
    const Bytes request = finish_request();
    requests.emplace_back(request.begin(), request.end());
  }
  std::size_t answered = 0;
  g_allocations = 0;
  g_counting = true;
  for (const auto& request : requests) {
    answered += handler_->on_datagram(kNow, Arrival{}, endpoint(1, 40000), request, reply_buffer_) > 0;
  }
  g_counting = false;
  EXPECT_EQ(answered, requests.size());
  EXPECT_EQ(g_allocations, 0u);
  EXPECT_EQ(store_.asked, 0);
}

TEST_F(FilesBeforeSqlTest, AStoreThatCannotAnswerDropsInsteadOfRejecting) {
  const auto reply = pap("mallory", "x");
  EXPECT_TRUE(reply.empty());
  EXPECT_EQ(store_.asked, 1);
  EXPECT_EQ(drops(DropReason::kUserStoreUnavailable), 1u);
  EXPECT_EQ(counters_.access_rejects.get(), 0u);
}

// Records Simultaneous-Use queries; refuses them when told.
class CountingSink final : public AccountingSink {
 public:
  struct Query {
    std::string user_name;
    Ticket ticket;
  };
  bool submit(const accounting::RecordKey&, Bytes, Ticket) override { return false; }
  bool count_sessions(std::string_view user_name, Ticket ticket) override {
    if (refuse) return false;
    queries.push_back({std::string(user_name), ticket});
    return true;
  }
  bool refuse = false;
  std::vector<Query> queries;
};

class RecordingObserver final : public DecisionObserver {
 public:
  void on_decision(const Decision& decision) override {
    std::string rule(decision.rule_file);
    if (decision.rule_line > 0) rule += ":" + std::to_string(decision.rule_line);
    decisions.push_back({std::string(decision.user_name), decision.accepted, std::string(decision.reason()),
                         std::move(rule)});
  }
  struct Entry {
    std::string user_name;
    bool accepted;
    std::string reason;
    std::string rule;  // "file:line" of the users entry that decided, or empty.
  };
  std::vector<Entry> decisions;
};

class SimultaneousUseTest : public RequestHandlerTest {
 protected:
  SimultaneousUseTest() { rebuild(SimultaneousUseUnavailable::kReject, /*with_sink=*/true); }

  void rebuild(SimultaneousUseUnavailable policy, bool with_sink) {
    GatewayOptions options = state_->options();
    options.access.simultaneous_use_unavailable = policy;
    options.access.session_query_timeout = Duration::seconds(1);
    options.access.session_checks_max = 2;
    auto users =
        config::UsersFile::parse(kUsers, "users", radius::Dictionary::builtin(), gateway_users_limits());
    auto clients = config::parse_clients(kClients, "clients.conf");
    auto state =
        GatewayState::build({radius::Dictionary::builtin(), clients->clients, std::move(*users), options});
    ASSERT_TRUE(state.has_value());
    state_ = *state;
    AccountingSetup setup;
    if (with_sink) {
      setup.sink = &sink_;
      setup.recipe =
          std::make_shared<const accounting::KeyRecipe>(accounting::KeyRecipe::freeradius_default());
    }
    handler_ = std::make_unique<RequestHandler>(state_, random_, counters_, &observer_, setup, /*worker=*/2);
  }

  // An Access-Request for carol with the right password, optionally with Proxy-States.
  std::vector<std::uint8_t> carol_request(std::uint8_t id, std::vector<std::string_view> proxy_states = {}) {
    begin(Code::kAccessRequest, id).add(attr::kUserName, as_bytes("carol"));
    add_password("one-at-a-time");
    for (std::string_view state : proxy_states) builder_->add(attr::kProxyState, as_bytes(state));
    const Bytes request = finish_request();
    return {request.begin(), request.end()};
  }

  std::optional<std::vector<std::uint8_t>> count(Ticket ticket, std::optional<std::uint32_t> open_sessions,
                                                 Instant now = kNow) {
    auto reply = handler_->on_answer(
        now, Answer{.ticket = ticket, .kind = AnswerKind::kSessionCount, .open_sessions = open_sessions},
        reply_buffer_);
    if (!reply) return std::nullopt;
    EXPECT_EQ(reply->to, endpoint(1, 40000));
    return std::vector<std::uint8_t>(reply_buffer_.begin(),
                                     reply_buffer_.begin() + static_cast<std::ptrdiff_t>(reply->length));
  }

  std::optional<std::vector<std::uint8_t>> timed(Instant now) {
    auto reply = handler_->next_timed_reply(now, reply_buffer_);
    if (!reply) return std::nullopt;
    return std::vector<std::uint8_t>(reply_buffer_.begin(),
                                     reply_buffer_.begin() + static_cast<std::ptrdiff_t>(reply->length));
  }

  static std::string reply_message(const radius::Packet& packet) {
    auto message = packet.find(attr::kReplyMessage);
    return message ? std::string(as_chars(message->value)) : std::string();
  }

  CountingSink sink_;
  RecordingObserver observer_;
};

TEST_F(SimultaneousUseTest, UsersWithoutTheItemAreAnsweredWithoutAQuery) {
  const radius::Packet packet = verified(pap("alice", "wonderland"));
  EXPECT_EQ(packet.code(), Code::kAccessAccept);
  EXPECT_TRUE(sink_.queries.empty());
  EXPECT_EQ(counters_.session_checks.get(), 0u);
}

TEST_F(SimultaneousUseTest, DecisionsNameTheUsersEntryThatDecided) {
  (void)pap("alice", "wonderland");
  (void)pap("dave", "anything", 2);
  (void)pap("nobody", "anything", 3);
  ASSERT_EQ(observer_.decisions.size(), 3u);
  EXPECT_EQ(observer_.decisions[0].rule, "users:2");
  EXPECT_EQ(observer_.decisions[1].rule, "users:8");
  EXPECT_EQ(observer_.decisions[1].reason, "auth_type_reject");
  EXPECT_EQ(observer_.decisions[2].rule, "");
  EXPECT_EQ(observer_.decisions[2].reason, "unknown_user");
}

TEST_F(SimultaneousUseTest, AWrongPasswordIsRejectedWithoutAQuery) {
  EXPECT_EQ(verified(pap("carol", "wrong")).code(), Code::kAccessReject);
  EXPECT_TRUE(sink_.queries.empty());
}

TEST_F(SimultaneousUseTest, BelowTheLimitSendsTheAcceptBuiltAtTheCheck) {
  EXPECT_TRUE(send(carol_request(40)).empty());
  ASSERT_EQ(sink_.queries.size(), 1u);
  EXPECT_EQ(sink_.queries[0].user_name, "carol");
  EXPECT_EQ(ticket_worker(sink_.queries[0].ticket), 2);
  EXPECT_EQ(handler_->session_checks_size(), 1u);
  EXPECT_TRUE(observer_.decisions.empty());  // Not decided yet.
  auto reply = count(sink_.queries[0].ticket, 0);
  ASSERT_TRUE(reply.has_value());
  const radius::Packet packet = verified(*reply);
  EXPECT_EQ(packet.code(), Code::kAccessAccept);
  EXPECT_TRUE(packet.find(attr::kSessionTimeout).has_value());
  EXPECT_EQ(handler_->session_checks_size(), 0u);
  ASSERT_EQ(observer_.decisions.size(), 1u);
  EXPECT_TRUE(observer_.decisions[0].accepted);
  EXPECT_EQ(counters_.access_accepts.get(), 1u);
}

TEST_F(SimultaneousUseTest, AtTheLimitRejectsWithFreeRadiusReplyMessage) {
  const auto request = carol_request(41, {"first", "second"});
  EXPECT_TRUE(send(request).empty());
  auto reply = count(sink_.queries.at(0).ticket, 1);
  ASSERT_TRUE(reply.has_value());
  const radius::Packet packet = verified(*reply);
  EXPECT_EQ(packet.code(), Code::kAccessReject);
  EXPECT_EQ(reply_message(packet), "You are already logged in - access denied");
  EXPECT_FALSE(packet.find(attr::kSessionTimeout).has_value());
  // RFC 2865 §5.33: Proxy-State copied unmodified, in order.
  std::vector<std::string> states;
  for (const radius::Attribute attribute : packet.attributes()) {
    if (attribute.type == attr::kProxyState) states.emplace_back(as_chars(attribute.value));
  }
  EXPECT_EQ(states, (std::vector<std::string>{"first", "second"}));
  ASSERT_EQ(observer_.decisions.size(), 1u);
  EXPECT_FALSE(observer_.decisions[0].accepted);
  EXPECT_EQ(observer_.decisions[0].reason, "simultaneous_use");
  EXPECT_EQ(counters_.simultaneous_use_rejects.get(), 1u);
  EXPECT_EQ(counters_.access_rejects.get(), 1u);
  // A retransmission now gets the identical reply from the duplicate cache.
  EXPECT_EQ(send(request), *reply);
  EXPECT_EQ(sink_.queries.size(), 1u);
}

TEST_F(SimultaneousUseTest, RetransmissionsWhileCountingAreCoalesced) {
  const auto request = carol_request(42);
  EXPECT_TRUE(send(request).empty());
  EXPECT_TRUE(send(request).empty());
  EXPECT_TRUE(send(request).empty());
  EXPECT_EQ(sink_.queries.size(), 1u);
  EXPECT_EQ(drops(DropReason::kDuplicateInProgress), 2u);
}

TEST_F(SimultaneousUseTest, NoCountWithinTheTimeoutRejectsByDefault) {
  EXPECT_TRUE(send(carol_request(43)).empty());
  EXPECT_FALSE(timed(kNow + Duration::milliseconds(999)).has_value());
  auto reply = timed(kNow + Duration::seconds(1));
  ASSERT_TRUE(reply.has_value());
  const radius::Packet packet = verified(*reply);
  EXPECT_EQ(packet.code(), Code::kAccessReject);
  EXPECT_EQ(reply_message(packet), "");  // Not "already logged in": nobody knows.
  EXPECT_EQ(observer_.decisions.at(0).reason, "simultaneous_use_unavailable");
  EXPECT_EQ(counters_.session_checks_unavailable.get(), 1u);
  EXPECT_EQ(counters_.simultaneous_use_rejects.get(), 0u);
  EXPECT_FALSE(timed(kNow + Duration::seconds(2)).has_value());
  // The count that comes late is stale.
  EXPECT_FALSE(count(sink_.queries.at(0).ticket, 0).has_value());
  EXPECT_EQ(counters_.session_checks_stale.get(), 1u);
}

TEST_F(SimultaneousUseTest, UnavailablePolicyAcceptSendsTheAccept) {
  rebuild(SimultaneousUseUnavailable::kAccept, true);
  EXPECT_TRUE(send(carol_request(44)).empty());
  auto reply = count(sink_.queries.at(0).ticket, std::nullopt);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(verified(*reply).code(), Code::kAccessAccept);
  EXPECT_EQ(observer_.decisions.at(0).reason, "simultaneous_use_unavailable");
}

TEST_F(SimultaneousUseTest, UnavailablePolicyDropLetsTheRetransmissionAskAgain) {
  rebuild(SimultaneousUseUnavailable::kDrop, true);
  const auto request = carol_request(45);
  EXPECT_TRUE(send(request).empty());
  EXPECT_FALSE(timed(kNow + Duration::seconds(1)).has_value());
  EXPECT_EQ(drops(DropReason::kSessionCountUnavailable), 1u);
  EXPECT_EQ(handler_->session_checks_size(), 0u);
  EXPECT_TRUE(send(request).empty());
  EXPECT_EQ(sink_.queries.size(), 2u);
}

TEST_F(SimultaneousUseTest, WithoutAccountingThePolicyDecidesAtOnce) {
  rebuild(SimultaneousUseUnavailable::kReject, /*with_sink=*/false);
  const radius::Packet packet = verified(send(carol_request(46)));
  EXPECT_EQ(packet.code(), Code::kAccessReject);
  EXPECT_EQ(counters_.session_checks_unavailable.get(), 1u);
  rebuild(SimultaneousUseUnavailable::kAccept, /*with_sink=*/false);
  EXPECT_EQ(verified(send(carol_request(47))).code(), Code::kAccessAccept);
}

TEST_F(SimultaneousUseTest, ARefusedQueryDecidesAtOnce) {
  sink_.refuse = true;
  EXPECT_EQ(verified(send(carol_request(48))).code(), Code::kAccessReject);
  EXPECT_EQ(handler_->session_checks_size(), 0u);
}

TEST_F(SimultaneousUseTest, LimitZeroRejectsWithoutAsking) {
  const radius::Packet packet = verified(pap("zed", "never"));
  EXPECT_EQ(packet.code(), Code::kAccessReject);
  EXPECT_EQ(reply_message(packet), "You are already logged in - access denied");
  EXPECT_TRUE(sink_.queries.empty());
}

TEST_F(SimultaneousUseTest, AFullTableDropsAndTheNasRetries) {
  EXPECT_TRUE(send(carol_request(50)).empty());
  EXPECT_TRUE(send(carol_request(51)).empty());
  const auto third = carol_request(52);
  EXPECT_TRUE(send(third).empty());
  EXPECT_EQ(drops(DropReason::kSessionCheckTableFull), 1u);
  EXPECT_EQ(sink_.queries.size(), 2u);
  ASSERT_TRUE(count(sink_.queries[0].ticket, 0).has_value());
  EXPECT_TRUE(send(third).empty());  // The retransmission finds a free slot.
  EXPECT_EQ(sink_.queries.size(), 3u);
}

TEST_F(RequestHandlerTest, RejectsAreCountedByTheirReasonAndCryptChecksRunInlineWithoutAPool) {
  EXPECT_EQ(verified(pap("alice", "looking-glass")).code(), Code::kAccessReject);
  EXPECT_EQ(verified(pap("nobody", "x", 2)).code(), Code::kAccessReject);
  EXPECT_EQ(verified(pap("erin", "slow-but-safe", 3)).code(), Code::kAccessAccept);
  EXPECT_EQ(counters_.rejects[static_cast<std::size_t>(RejectReason::kWrongPassword)].get(), 1u);
  EXPECT_EQ(counters_.rejects[static_cast<std::size_t>(RejectReason::kUnknownUser)].get(), 1u);
  EXPECT_EQ(counters_.access_rejects.get(), 2u);
  EXPECT_EQ(to_string(RejectReason::kWrongPassword), "wrong_password");
  EXPECT_EQ(to_string(DropReason::kCryptQueueFull), "crypt_queue_full");
}

TEST(ReasonsTest, EveryReasonHasItsOwnName) {
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < kRejectReasonCount; ++i) names.insert(to_string(static_cast<RejectReason>(i)));
  EXPECT_EQ(names.size(), kRejectReasonCount);
  names.clear();
  for (std::size_t i = 0; i < kDropReasonCount; ++i) names.insert(to_string(static_cast<DropReason>(i)));
  EXPECT_EQ(names.size(), kDropReasonCount);
  EXPECT_EQ(names.count("unknown"), 0u);
}

// An SQL store that holds what it was told and records fetches; a crypt(3)
// pool that records checks. The answers are handed to the handler by the
// test, as the shell would post them.
class ParkingStore final : public UserStore {
 public:
  Lookup find(std::string_view name) override {
    auto it = users.find(std::string(name));
    if (it == users.end()) return {};
    return {Status::kFound, it->second};
  }
  bool fetch(std::string_view name, Ticket ticket) override {
    if (refuse) return false;
    fetched.emplace_back(std::string(name), ticket);
    return true;
  }
  std::map<std::string, std::shared_ptr<const auth::SqlUser>> users;
  std::vector<std::pair<std::string, Ticket>> fetched;
  bool refuse = false;
};

class RecordingCrypt final : public CryptVerifier {
 public:
  bool verify(std::string_view setting, std::string_view password, Ticket ticket) override {
    if (full) return false;
    checks.push_back({std::string(setting), std::string(password), ticket});
    return true;
  }
  struct Check {
    std::string setting;
    std::string password;
    Ticket ticket;
  };
  std::vector<Check> checks;
  bool full = false;
};

class ParkedTest : public RequestHandlerTest {
 protected:
  ParkedTest() {
    GatewayOptions options = state_->options();
    options.access.users_stores = {config::UsersStore::kSql, config::UsersStore::kFiles};
    build_state(options);
    handler_ = std::make_unique<RequestHandler>(state_, random_, counters_, &observer_, AccountingSetup{}, 0,
                                                ParkingSetup{.user_store = &store_,
                                                             .crypt = &crypt_,
                                                             .lookup_timeout = Duration::milliseconds(20),
                                                             .crypt_timeout = Duration::seconds(2),
                                                             .parked_max = 2});
  }
  std::shared_ptr<const auth::SqlUser> sql_user(std::string_view name, std::string_view password) {
    auth::SqlUserRows rows;
    rows.check.push_back({.attribute = "Cleartext-Password", .op = ":=", .value = std::string(password)});
    auto user = auth::compile_sql_user(name, rows, radius::Dictionary::builtin());
    EXPECT_TRUE(user.has_value());
    return user ? *user : nullptr;
  }
  std::vector<std::uint8_t> answer(const Answer& a, Instant now = kNow) {
    auto reply = handler_->on_answer(now, a, reply_buffer_);
    if (!reply) return {};
    return {reply_buffer_.begin(), reply_buffer_.begin() + static_cast<std::ptrdiff_t>(reply->length)};
  }

  ParkingStore store_;
  RecordingCrypt crypt_;
  class Observer final : public DecisionObserver {
   public:
    void on_decision(const Decision& decision) override { reasons.emplace_back(decision.reason()); }
    std::vector<std::string> reasons;
  } observer_;
};

TEST_F(ParkedTest, AMissParksTheRequestAndTheAnswerDecidesIt) {
  EXPECT_TRUE(pap("sqluser", "secret-one").empty());
  ASSERT_EQ(store_.fetched.size(), 1u);
  EXPECT_EQ(store_.fetched[0].first, "sqluser");
  EXPECT_EQ(handler_->pending(PendingKind::kUserLookup), 1u);
  // The NAS's retransmission meanwhile is coalesced, not fetched again.
  EXPECT_TRUE(send(finish_request()).empty());
  EXPECT_EQ(store_.fetched.size(), 1u);
  const auto reply = answer(Answer{.ticket = store_.fetched[0].second,
                                   .kind = AnswerKind::kUserLookup,
                                   .user = sql_user("sqluser", "secret-one")});
  ASSERT_FALSE(reply.empty());
  EXPECT_EQ(verified(reply).code(), Code::kAccessAccept);
  EXPECT_EQ(handler_->pending(PendingKind::kUserLookup), 0u);
  EXPECT_EQ(counters_.user_lookups.get(), 1u);
  // A second answer for the same ticket is stale.
  EXPECT_TRUE(answer(Answer{.ticket = store_.fetched[0].second, .kind = AnswerKind::kUserLookup}).empty());
  EXPECT_EQ(counters_.parked_stale.get(), 1u);
}

TEST_F(ParkedTest, TheWrongPasswordIsRejectedWithItsReasonAfterTheLookup) {
  EXPECT_TRUE(pap("sqluser", "guess").empty());
  const auto reply = answer(Answer{.ticket = store_.fetched.at(0).second,
                                   .kind = AnswerKind::kUserLookup,
                                   .user = sql_user("sqluser", "secret-one")});
  EXPECT_EQ(verified(reply).code(), Code::kAccessReject);
  ASSERT_EQ(observer_.reasons.size(), 1u);
  EXPECT_EQ(observer_.reasons[0], "wrong_password");
}

TEST_F(ParkedTest, ADatabaseThatCannotAnswerOrIsTooSlowDropsNeverRejects) {
  EXPECT_TRUE(pap("sqluser", "secret-one").empty());
  EXPECT_TRUE(answer(Answer{.ticket = store_.fetched.at(0).second, .kind = AnswerKind::kUserLookup}).empty());
  EXPECT_EQ(drops(DropReason::kUserStoreUnavailable), 1u);
  // Too slow: past lookup_timeout the request is forgotten, its answer stale.
  EXPECT_TRUE(pap("sqluser", "secret-one", 2).empty());
  handler_->on_tick(kNow + Duration::milliseconds(21));
  EXPECT_EQ(drops(DropReason::kUserStoreUnavailable), 2u);
  EXPECT_EQ(handler_->pending(PendingKind::kUserLookup), 0u);
  EXPECT_TRUE(answer(Answer{.ticket = store_.fetched.at(1).second,
                            .kind = AnswerKind::kUserLookup,
                            .user = sql_user("sqluser", "secret-one")})
                  .empty());
  EXPECT_EQ(counters_.access_rejects.get(), 0u);
  // The store refusing to queue is the same drop.
  store_.refuse = true;
  EXPECT_TRUE(pap("sqluser", "secret-one", 3).empty());
  EXPECT_EQ(drops(DropReason::kUserStoreUnavailable), 3u);
}

TEST_F(ParkedTest, AtMostParkedMaxWaitAtOnce) {
  EXPECT_TRUE(pap("u1", "x", 1).empty());
  EXPECT_TRUE(pap("u2", "x", 2).empty());
  EXPECT_TRUE(pap("u3", "x", 3).empty());
  EXPECT_EQ(store_.fetched.size(), 2u);
  EXPECT_EQ(drops(DropReason::kParkedTableFull), 1u);
}

TEST_F(ParkedTest, CryptPasswordsGoToThePoolWithThePlaintextUnhiddenOnce) {
  store_.users["erin"] = std::make_shared<const auth::SqlUser>();  // Not in SQL: the users file decides.
  EXPECT_TRUE(pap("erin", "slow-but-safe").empty());
  ASSERT_EQ(crypt_.checks.size(), 1u);
  EXPECT_EQ(crypt_.checks[0].password, "slow-but-safe");
  EXPECT_EQ(crypt_.checks[0].setting.substr(0, 3), "$5$");
  EXPECT_EQ(handler_->pending(PendingKind::kCryptCheck), 1u);
  auto reply = answer(
      Answer{.ticket = crypt_.checks[0].ticket, .kind = AnswerKind::kCryptVerdict, .crypt_matched = true});
  const radius::Packet accept = verified(reply);
  EXPECT_EQ(accept.code(), Code::kAccessAccept);
  EXPECT_TRUE(accept.find(attr::kSessionTimeout).has_value());  // The users-file reply items.

  EXPECT_TRUE(pap("erin", "guess", 2).empty());
  reply = answer(Answer{.ticket = crypt_.checks.at(1).ticket,
                        .kind = AnswerKind::kCryptVerdict,
                        .crypt_error = auth::AuthError::kWrongPassword});
  EXPECT_EQ(verified(reply).code(), Code::kAccessReject);
  EXPECT_EQ(counters_.rejects[static_cast<std::size_t>(RejectReason::kWrongPassword)].get(), 1u);
  EXPECT_EQ(handler_->pending(PendingKind::kCryptCheck), 0u);
}

TEST_F(ParkedTest, AFullCryptQueueDropsAndCleartextUsersNeverWaitForIt) {
  store_.users["erin"] = std::make_shared<const auth::SqlUser>();
  store_.users["alice"] = std::make_shared<const auth::SqlUser>();
  crypt_.full = true;
  EXPECT_TRUE(pap("erin", "slow-but-safe").empty());
  EXPECT_EQ(drops(DropReason::kCryptQueueFull), 1u);
  EXPECT_EQ(verified(pap("alice", "wonderland", 2)).code(), Code::kAccessAccept);
  EXPECT_TRUE(crypt_.checks.empty());
}

TEST_F(ParkedTest, ALookupThenACryptCheckKeepOneSlotAndOneTicket) {
  EXPECT_TRUE(pap("erin", "slow-but-safe").empty());
  ASSERT_EQ(store_.fetched.size(), 1u);
  EXPECT_TRUE(answer(Answer{.ticket = store_.fetched[0].second,
                            .kind = AnswerKind::kUserLookup,
                            .user = std::make_shared<const auth::SqlUser>()})
                  .empty());
  ASSERT_EQ(crypt_.checks.size(), 1u);
  EXPECT_EQ(crypt_.checks[0].ticket, store_.fetched[0].second);
  EXPECT_EQ(handler_->pending(PendingKind::kUserLookup), 0u);
  EXPECT_EQ(handler_->pending(PendingKind::kCryptCheck), 1u);
  const auto reply = answer(
      Answer{.ticket = crypt_.checks[0].ticket, .kind = AnswerKind::kCryptVerdict, .crypt_matched = true});
  EXPECT_EQ(verified(reply).code(), Code::kAccessAccept);
}

// The explain log (docs/operations.md "Explain log"): followed requests
// leave a trace of each step; others leave none.
class TraceRecorder final : public ExplainObserver {
 public:
  void on_trace(ExplainTrace trace) override { traces.push_back(std::move(trace)); }
  std::vector<ExplainTrace> traces;
};

class ExplainTest : public RequestHandlerTest {
 protected:
  void follow(ExplainSelector selector) {
    selector.id = 7;
    selector.until = kNow + Duration::seconds(60);
    control_.publish(std::make_shared<const ExplainFilter>(ExplainFilter{.selectors = {selector}}));
    handler_->set_explain({&control_, &observer_});
  }
  // Every step of the only trace, one per line, then "=> outcome".
  std::string only_trace() {
    EXPECT_EQ(observer_.traces.size(), 1u);
    if (observer_.traces.size() != 1) return {};
    std::string text;
    for (const std::string& step : observer_.traces[0].steps) text += step + "\n";
    return text + "=> " + observer_.traces[0].outcome;
  }
  ExplainSwitch control_;
  TraceRecorder observer_;
};

TEST_F(ExplainTest, AcceptShowsClientEntryMethodAndReplyWithoutThePassword) {
  follow({.user = "alice"});
  EXPECT_EQ(verified(pap("alice", "wonderland")).code(), Code::kAccessAccept);
  const std::string trace = only_trace();
  EXPECT_NE(trace.find("client: localhost\n"), std::string::npos) << trace;
  EXPECT_NE(trace.find("duplicate cache: new request"), std::string::npos) << trace;
  EXPECT_NE(trace.find("Message-Authenticator: valid"), std::string::npos) << trace;
  EXPECT_NE(trace.find("user store: users file"), std::string::npos) << trace;
  EXPECT_NE(trace.find("entries applied: users:2 (alice)"), std::string::npos) << trace;
  EXPECT_NE(trace.find("control: Cleartext-Password := <masked>"), std::string::npos) << trace;
  EXPECT_NE(trace.find("method: PAP"), std::string::npos) << trace;
  EXPECT_NE(trace.find("Tunnel-Private-Group-Id:1 = 100"), std::string::npos) << trace;
  EXPECT_NE(trace.find("=> Access-Accept"), std::string::npos) << trace;
  EXPECT_EQ(trace.find("wonderland"), std::string::npos) << "a password in a trace: " << trace;
  EXPECT_EQ(observer_.traces[0].selector, 7u);
  EXPECT_EQ(observer_.traces[0].user, "alice");
  EXPECT_EQ(observer_.traces[0].client, "localhost");
}

TEST_F(ExplainTest, RejectSaysWhyAndOtherUsersAreNotFollowed) {
  follow({.user = "alice"});
  EXPECT_FALSE(pap("bob", "whatever", 2).empty());
  EXPECT_TRUE(observer_.traces.empty());
  EXPECT_EQ(verified(pap("alice", "wrong", 3)).code(), Code::kAccessReject);
  const std::string trace = only_trace();
  EXPECT_NE(trace.find("rejected: wrong_password"), std::string::npos) << trace;
  EXPECT_NE(trace.find("=> Access-Reject"), std::string::npos) << trace;
}

TEST_F(ExplainTest, RetransmissionIsExplainedAsAnsweredFromTheCache) {
  follow({.user = "alice"});
  begin(Code::kAccessRequest, 4).add(attr::kUserName, as_bytes("alice"));
  add_password("wonderland");
  const Bytes request = finish_request();
  const std::vector<std::uint8_t> copy(request.begin(), request.end());
  EXPECT_FALSE(send(copy).empty());
  EXPECT_FALSE(send(copy).empty());
  ASSERT_EQ(observer_.traces.size(), 2u);
  EXPECT_EQ(observer_.traces[1].outcome, "Access-Accept (the cached reply, again)");
}

TEST_F(ExplainTest, DropsByNasAddressSayWhy) {
  follow({.nas = "127.0.0.99", .nas_address = endpoint(99, 0)});
  begin(Code::kAccessRequest, 5).add(attr::kUserName, as_bytes("alice"));
  add_password("wonderland");
  EXPECT_TRUE(send(finish_request(), Listener::kAuthentication, endpoint(99, 40000)).empty());
  const std::string trace = only_trace();
  EXPECT_NE(trace.find("client: none matches the source address"), std::string::npos) << trace;
  EXPECT_NE(trace.find("=> dropped: unknown_client"), std::string::npos) << trace;
}

TEST_F(ExplainTest, BadMessageAuthenticatorIsExplainedByClientName) {
  follow({.nas = "localhost"});
  begin(Code::kAccessRequest, 6).add(attr::kUserName, as_bytes("alice"));
  add_password("wonderland");
  auto finished = builder_->finish();
  ASSERT_TRUE(finished.has_value());
  radius::sign_request(*finished, *radius::SharedSecret::create(as_bytes("not-the-secret")));
  EXPECT_TRUE(send(*finished).empty());
  const std::string trace = only_trace();
  EXPECT_NE(trace.find("=> dropped: bad_message_authenticator"), std::string::npos) << trace;
}

TEST_F(ExplainTest, MacSelectorMatchesAnyNotation) {
  follow({.mac = "00:11:22:33:44:55"});
  EXPECT_EQ(verified(mab("00-11-22-33-44-55", 8)).code(), Code::kAccessAccept);
  const std::string trace = only_trace();
  EXPECT_NE(trace.find("MAB: looked up as 00:11:22:33:44:55"), std::string::npos) << trace;
  EXPECT_NE(trace.find("Session-Timeout = 60"), std::string::npos) << trace;
}

TEST_F(ExplainTest, ExpiredSelectorFollowsNothing) {
  ExplainSelector selector{.id = 1, .user = "alice", .until = kNow};
  control_.publish(std::make_shared<const ExplainFilter>(ExplainFilter{.selectors = {selector}}));
  handler_->set_explain({&control_, &observer_});
  EXPECT_FALSE(pap("alice", "wonderland").empty());
  EXPECT_TRUE(observer_.traces.empty());
}

TEST_F(AccountingTest, FollowedAccountingIsExplainedUntilItsCommit) {
  ExplainSwitch control;
  TraceRecorder observer;
  control.publish(std::make_shared<const ExplainFilter>(ExplainFilter{
      .selectors = {ExplainSelector{.id = 3, .nas = "localhost", .until = kNow + Duration::seconds(60)}}}));
  handler_->set_explain({&control, &observer});
  EXPECT_TRUE(send_accounting(accounting_request(40, "S40")).empty());
  EXPECT_TRUE(observer.traces.empty()) << "ends with its commit";
  ASSERT_EQ(sink_.submissions.size(), 1u);
  ASSERT_TRUE(answer(sink_.submissions[0].ticket).has_value());
  ASSERT_EQ(observer.traces.size(), 1u);
  const ExplainTrace& trace = observer.traces[0];
  EXPECT_EQ(trace.outcome, "Accounting-Response");
  EXPECT_NE(std::find(trace.steps.begin(), trace.steps.end(), "accounting: committed on a majority"),
            trace.steps.end());
}

}  // namespace
}  // namespace rw::gateway
