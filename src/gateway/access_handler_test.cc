// AccessHandler on its own: each decision becomes the right Action (reply
// with its verdict, lookup, verify, count sessions, drop), the plaintext it
// is given is the one checked, and Simultaneous-Use checks are decided from
// the count. No dispatcher, no pending table.
#include "gateway/access_handler.h"

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <optional>
#include <string>

#include "config/clients_file.h"
#include "radius/attribute_crypto.h"
#include "radius/authenticator.h"

namespace rw::gateway {
namespace {

namespace attr = radius::attr;
using radius::Code;

constexpr std::string_view kUsers = R"(
alice   Cleartext-Password := "wonderland"
        Reply-Message = "Hello"
erin    Crypt-Password := "$5$saltsalt$9yMj07lA8PlT4IBEoaFFjtbTam2B/NppjCQBwku9ur8"
carol   Cleartext-Password := "one-at-a-time", Simultaneous-Use := 2
00-11-22-33-44-55
        Session-Timeout = 60
)";
constexpr std::string_view kClients = "client localhost {\n  ipaddr = 127.0.0.1\n  secret = testing123\n}\n";
const Instant kNow{5'000'000'000};

class MissingStore final : public UserStore {
 public:
  Lookup find(std::string_view name) override {
    asked = std::string(name);
    return {};
  }
  bool fetch(std::string_view, Ticket) override { return true; }
  std::string asked;
};

class AccessHandlerTest : public ::testing::Test {
 protected:
  AccessHandlerTest() : random_(3), secret_(*radius::SharedSecret::create(as_bytes("testing123"))) {
    build({config::UsersStore::kFiles});
  }
  void build(std::vector<config::UsersStore> stores) {
    auto dictionary = radius::Dictionary::builtin();
    auto users = config::UsersFile::parse(kUsers, "users", dictionary, gateway_users_limits());
    auto clients = config::parse_clients(kClients, "clients.conf");
    GatewayOptions options;
    options.access.users_stores = std::move(stores);
    state_ = *GatewayState::build({dictionary, clients->clients, std::move(*users), options});
    from_.address = {127, 0, 0, 1};
    from_.port = 1000;
    client_ = state_->find_client(from_);
  }
  // An Access-Request for `user`, with `password` hidden when given.
  radius::Packet request(std::string_view user, std::optional<std::string_view> password,
                         std::optional<std::string_view> calling = std::nullopt) {
    authenticator_ = radius::make_request_authenticator(random_);
    radius::PacketBuilder builder(request_buffer_);
    builder.begin(Code::kAccessRequest, 9, authenticator_);
    builder.reserve_message_authenticator();
    builder.add(attr::kUserName, as_bytes(user));
    std::array<std::uint8_t, 128> hidden{};
    if (password) {
      builder.add(attr::kUserPassword,
                  *radius::hide_user_password(as_bytes(*password), authenticator_, secret_, hidden));
    }
    if (calling) builder.add(attr::kCallingStationId, as_bytes(*calling));
    auto wire = builder.finish();
    radius::sign_request(*wire, secret_);
    return *radius::Packet::parse(*wire);
  }
  Action decide(const radius::Packet& packet, const AccessInputs& inputs) {
    const RequestContext context{.now = kNow,
                                 .arrival = arrival_,
                                 .from = from_,
                                 .packet = packet,
                                 .state = *state_,
                                 .client = *client_,
                                 .secret = state_->secret_of(*client_)};
    return handler_.decide(context, inputs, reply_);
  }
  static AccessInputs with_password(std::string_view password) {
    AccessInputs inputs;
    inputs.password = password;
    return inputs;
  }
  Code code(const Action& action) const {
    EXPECT_EQ(action.kind, Action::Kind::kReply);
    return static_cast<Code>(reply_[0]);
  }

  SeededRandom random_;
  radius::SharedSecret secret_;
  std::shared_ptr<const GatewayState> state_;
  const config::ClientDef* client_ = nullptr;
  Endpoint from_;
  Arrival arrival_;
  radius::Authenticator authenticator_{};
  std::array<std::uint8_t, radius::kMaxPacketLength> request_buffer_{};
  std::array<std::uint8_t, 4096> reply_{};
  AccessHandler handler_{random_};
};

TEST_F(AccessHandlerTest, TheGivenPlaintextIsWhatIsChecked) {
  // The packet's hidden password is not read again: the caller's plaintext decides.
  const radius::Packet packet = request("alice", "wrong-on-the-wire");
  Action action = decide(packet, with_password("wonderland"));
  EXPECT_EQ(code(action), Code::kAccessAccept);
  ASSERT_TRUE(action.verdict);
  EXPECT_TRUE(action.verdict->accepted);
  EXPECT_EQ(action.verdict->method, AuthMethod::kPap);
  action = decide(packet, with_password("guess"));
  EXPECT_EQ(code(action), Code::kAccessReject);
  EXPECT_EQ(action.verdict->reject, RejectReason::kWrongPassword);
}

TEST_F(AccessHandlerTest, RejectReasonsAreNamedByTheEnum) {
  AccessInputs malformed;
  malformed.password_malformed = true;
  EXPECT_EQ(decide(request("alice", "x"), malformed).verdict->reject, RejectReason::kMalformedUserPassword);
  EXPECT_EQ(decide(request("nobody", "x"), with_password("x")).verdict->reject, RejectReason::kUnknownUser);
  EXPECT_EQ(decide(request("alice", std::nullopt), AccessInputs{}).verdict->reject,
            RejectReason::kNoCredentials);
}

TEST_F(AccessHandlerTest, ACryptPasswordIsLeftToThePoolThenDecidedByItsVerdict) {
  const radius::Packet packet = request("erin", "slow-but-safe");
  AccessInputs inputs = with_password("slow-but-safe");
  inputs.crypt_elsewhere = true;
  Action action = decide(packet, inputs);
  ASSERT_EQ(action.kind, Action::Kind::kVerify);
  EXPECT_EQ(action.password, "slow-but-safe");
  EXPECT_EQ(action.crypt_setting.substr(0, 3), "$5$");
  const Answer matched{.kind = AnswerKind::kCryptVerdict, .crypt_matched = true};
  inputs.crypt_verdict = &matched;
  EXPECT_EQ(code(decide(packet, inputs)), Code::kAccessAccept);
  const Answer refused{.kind = AnswerKind::kCryptVerdict, .crypt_error = auth::AuthError::kWrongPassword};
  inputs.crypt_verdict = &refused;
  action = decide(packet, inputs);
  EXPECT_EQ(code(action), Code::kAccessReject);
  EXPECT_EQ(action.verdict->reject, RejectReason::kWrongPassword);
  // Without a pool the check runs here.
  EXPECT_EQ(code(decide(packet, with_password("slow-but-safe"))), Code::kAccessAccept);
}

TEST_F(AccessHandlerTest, AnSqlMissAsksForTheCanonicalNameAndAFailedFetchDrops) {
  build({config::UsersStore::kSql, config::UsersStore::kFiles});
  MissingStore store;
  AccessInputs inputs;
  inputs.user_store = &store;
  const radius::Packet mab = request("00-11-22-33-44-55", "00:11:22:33:44:55", "00-11-22-33-44-55");
  inputs.password = "00:11:22:33:44:55";
  Action action = decide(mab, inputs);
  ASSERT_EQ(action.kind, Action::Kind::kLookup);
  EXPECT_EQ(action.name, "00:11:22:33:44:55");  // The canonical MAC, whatever the NAS's notation.
  const std::shared_ptr<const auth::SqlUser> none;
  inputs.fetched_user = &none;
  action = decide(mab, inputs);
  ASSERT_EQ(action.kind, Action::Kind::kDrop);
  EXPECT_EQ(action.drop, DropReason::kUserStoreUnavailable);
  // A user the store does not know falls through to the users file.
  const auto unknown = std::make_shared<const auth::SqlUser>();
  inputs.fetched_user = &unknown;
  EXPECT_EQ(code(decide(mab, inputs)), Code::kAccessAccept);
}

TEST_F(AccessHandlerTest, SimultaneousUseAsksForACountAndDecidesFromIt) {
  const radius::Packet packet = request("carol", "one-at-a-time");
  const Action action = decide(packet, with_password("one-at-a-time"));
  ASSERT_EQ(action.kind, Action::Kind::kCountSessions);
  EXPECT_EQ(action.name, "carol");
  EXPECT_EQ(action.limit, 2u);
  const std::vector<std::uint8_t> accept(reply_.begin(),
                                         reply_.begin() + static_cast<std::ptrdiff_t>(action.length));
  RequestKey key{.from = from_, .identifier = 9};
  std::copy(authenticator_.begin(), authenticator_.end(), key.authenticator.begin());
  const SessionCheckView check{.key = key,
                               .secret = state_->secret_of(*client_),
                               .policy = SimultaneousUseUnavailable::kReject,
                               .user_name = "carol",
                               .method = AuthMethod::kPap,
                               .limit = 2,
                               .proxy_states = {},
                               .accept = accept};
  Action decided = handler_.decide_check(check, 1, reply_);
  EXPECT_EQ(code(decided), Code::kAccessAccept);
  EXPECT_EQ(decided.length, accept.size());
  decided = handler_.decide_check(check, 2, reply_);
  EXPECT_EQ(code(decided), Code::kAccessReject);
  EXPECT_EQ(decided.verdict->reject, RejectReason::kSimultaneousUse);
  decided = handler_.decide_check(check, std::nullopt, reply_);
  EXPECT_EQ(decided.verdict->reject, RejectReason::kSimultaneousUseUnavailable);
  SessionCheckView drop = check;
  drop.policy = SimultaneousUseUnavailable::kDrop;
  EXPECT_EQ(handler_.decide_check(drop, std::nullopt, reply_).drop, DropReason::kSessionCountUnavailable);
}

}  // namespace
}  // namespace rw::gateway
