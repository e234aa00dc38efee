// Access-Requests decided from FreeRADIUS's SQL user tables on a real SQLite
// file: PAP, CHAP and MS-CHAPv2 users from radcheck, replies from radreply
// and radgroupreply, the order of the user stores, and a database that
// cannot answer (the request is dropped, never rejected). Lookups take the
// gateway's path: a miss parks the request, the pool answers through the
// answer sink, the handler resumes it.
#include <gtest/gtest.h>

#include <optional>

#include <array>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "auth/chap.h"
#include "auth/mschap.h"
#include "config/clients_file.h"
#include "config/temp_dir_for_test.h"
#include "gateway/request_handler.h"
#include "gateway_shell/sql_user_cache.h"
#include "gateway_shell/sqlite_users_for_test.h"
#include "radius/attribute_crypto.h"
#include "radius/authenticator.h"

namespace rw::gateway_shell {
namespace {

namespace attr = radius::attr;
namespace ms = radius::ms;
using radius::Code;

constexpr std::string_view kClients = "client localhost {\n  ipaddr = 127.0.0.1\n  secret = testing123\n}\n";
const Instant kNow{5'000'000'000};

class SqlAuthenticationTest : public config::TempDirTest {
 protected:
  SqlAuthenticationTest() : random_(1), secret_(*radius::SharedSecret::create(as_bytes("testing123"))) {}

  void SetUp() override {
    TempDirTest::SetUp();
    path_ = (dir_ / "radius.sqlite").string();
    db_.emplace(path_, freeradius_sqlite_schema());
    exec(R"(
      INSERT INTO radcheck (username, attribute, op, value) VALUES ('alice', 'Cleartext-Password', ':=', 'wonderland');
      INSERT INTO radreply (username, attribute, op, value) VALUES ('alice', 'Reply-Message', '=', 'Hello from SQL');
      INSERT INTO radusergroup (username, groupname, priority) VALUES ('alice', 'staff', 1);
      INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ('staff', 'Tunnel-Type', ':=', 'VLAN');
      INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ('staff', 'Tunnel-Medium-Type', ':=', 'IEEE-802');
      INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ('staff', 'Tunnel-Private-Group-Id', ':=', '100');
      INSERT INTO radcheck (username, attribute, op, value) VALUES ('bob', 'NT-Password', ':=', '44EBBA8D5312B8D611474411F56989AE');
      INSERT INTO radcheck (username, attribute, op, value) VALUES ('carol', 'Cleartext-Password', ':=', 'from-sql');
    )");
    start({config::UsersStore::kFiles, config::UsersStore::kSql}, path_);
  }
  void TearDown() override {
    handler_.reset();
    cache_.reset();
    db_.reset();
    TempDirTest::TearDown();
  }
  void exec(const std::string& sql) { db_->exec(sql); }

  void start(std::vector<config::UsersStore> stores, const std::string& database,
             Duration miss_wait = Duration::seconds(30)) {
    handler_.reset();
    cache_.reset();
    auto dictionary = radius::Dictionary::builtin();
    auto users = config::UsersFile::parse("carol Cleartext-Password := \"from-files\"\n", "users", dictionary,
                                          gateway::gateway_users_limits());
    ASSERT_TRUE(users);
    auto clients = config::parse_clients(kClients, "clients.conf");
    ASSERT_TRUE(clients);
    gateway::GatewayOptions options;
    options.access.users_stores = std::move(stores);
    auto state = gateway::GatewayState::build({dictionary, clients->clients, std::move(*users), options});
    ASSERT_TRUE(state) << state.error();
    state_ = *state;
    SqlUserCacheOptions cache_options;
    cache_options.reconnect_backoff = Duration::milliseconds(1);
    cache_ = std::make_unique<SqlUserCache>(
        cache_options, [database] { return open_sqlite_user_source(database); }, dictionary,
        [] { return kNow; });
    // As the UDP server's post_answers would: the answers queue for the worker.
    cache_->set_answer_sink([this](const gateway::Answer& answer) {
      std::lock_guard lock(answers_mutex_);
      answers_.push_back(answer);
      answered_.notify_all();
    });
    handler_ = std::make_unique<gateway::RequestHandler>(
        state_, random_, counters_, nullptr, gateway::AccountingSetup{}, 0,
        gateway::ParkingSetup{.user_store = cache_.get(), .lookup_timeout = miss_wait});
  }

  // The worker's side of the answer path: waits for the cache's answer to a
  // parked request and hands it to the handler.
  std::size_t take_answer() {
    gateway::Answer answer;
    {
      std::unique_lock lock(answers_mutex_);
      if (!answered_.wait_for(lock, std::chrono::seconds(30), [&] { return !answers_.empty(); })) return 0;
      answer = answers_.front();
      answers_.pop_front();
    }
    auto reply = handler_->on_answer(kNow, answer, reply_buffer_);
    return reply ? reply->length : 0;
  }

  radius::PacketBuilder& begin(std::uint8_t identifier, std::string_view user) {
    request_authenticator_ = radius::make_request_authenticator(random_);
    builder_.emplace(request_buffer_);
    builder_->begin(Code::kAccessRequest, identifier, request_authenticator_);
    builder_->reserve_message_authenticator();
    builder_->add(attr::kUserName, as_bytes(user));
    return *builder_;
  }
  std::optional<radius::Packet> send() {
    auto finished = builder_->finish();
    EXPECT_TRUE(finished);
    radius::sign_request(*finished, secret_);
    gateway::Endpoint from;
    from.address = {127, 0, 0, 1};
    from.port = 40000;
    std::size_t n =
        handler_->on_datagram(kNow, gateway::Arrival{.listener = gateway::Listener::kAuthentication}, from,
                              *finished, reply_buffer_);
    // A user not in memory: the request waits for the SQL pool, the worker does not.
    if (n == 0 && handler_->pending(gateway::PendingKind::kUserLookup) > 0) n = take_answer();
    if (n == 0) return std::nullopt;
    const auto& kept = replies_.emplace_back(reply_buffer_.begin(), reply_buffer_.begin() + n);
    auto packet = radius::Packet::parse(kept);
    EXPECT_TRUE(packet);
    EXPECT_TRUE(radius::verify_response_authenticator(*packet, request_authenticator_, secret_));
    return *packet;
  }
  std::optional<radius::Packet> pap(std::string_view user, std::string_view password, std::uint8_t id) {
    begin(id, user);
    std::array<std::uint8_t, 128> hidden{};
    auto value = radius::hide_user_password(as_bytes(password), request_authenticator_, secret_, hidden);
    EXPECT_TRUE(value);
    builder_->add(attr::kUserPassword, *value);
    return send();
  }
  Code code_of(const std::optional<radius::Packet>& packet) {
    EXPECT_TRUE(packet) << "dropped";
    return packet ? packet->code() : Code::kAccountingResponse;
  }

  std::string path_;
  std::optional<SqliteUsersForTest> db_;
  SeededRandom random_;
  radius::SharedSecret secret_;
  gateway::GatewayCounters counters_;
  std::shared_ptr<const gateway::GatewayState> state_;
  std::unique_ptr<SqlUserCache> cache_;
  std::unique_ptr<gateway::RequestHandler> handler_;
  std::mutex answers_mutex_;
  std::condition_variable answered_;
  std::deque<gateway::Answer> answers_;
  std::array<std::uint8_t, radius::kMaxPacketLength> request_buffer_{};
  std::array<std::uint8_t, radius::kMaxPacketLength> reply_buffer_{};
  std::optional<radius::PacketBuilder> builder_;
  std::deque<std::vector<std::uint8_t>> replies_;
  radius::Authenticator request_authenticator_{};
};

TEST_F(SqlAuthenticationTest, PapUserGetsUserAndGroupReplies) {
  auto packet = pap("alice", "wonderland", 1);
  ASSERT_EQ(code_of(packet), Code::kAccessAccept);
  auto message = packet->find(attr::kReplyMessage);
  ASSERT_TRUE(message);
  EXPECT_EQ(as_chars(message->value), "Hello from SQL");
  auto vlan = packet->find(attr::kTunnelPrivateGroupId);
  ASSERT_TRUE(vlan);
  EXPECT_EQ(as_chars(vlan->value), "100");
  EXPECT_TRUE(packet->find(attr::kTunnelType));
}

TEST_F(SqlAuthenticationTest, ASecondRequestIsAnsweredFromMemoryWithoutParking) {
  ASSERT_EQ(code_of(pap("alice", "wonderland", 1)), Code::kAccessAccept);
  EXPECT_EQ(counters_.user_lookups.get(), 1U);
  begin(2, "alice");
  std::array<std::uint8_t, 128> hidden{};
  builder_->add(attr::kUserPassword,
                *radius::hide_user_password(as_bytes("wonderland"), request_authenticator_, secret_, hidden));
  auto finished = builder_->finish();
  radius::sign_request(*finished, secret_);
  gateway::Endpoint from;
  from.address = {127, 0, 0, 1};
  from.port = 40000;
  EXPECT_GT(handler_->on_datagram(kNow, gateway::Arrival{}, from, *finished, reply_buffer_), 0U);
  EXPECT_EQ(counters_.user_lookups.get(), 1U);
}

TEST_F(SqlAuthenticationTest, WrongPasswordAndUnknownUserAreRejected) {
  auto wrong = pap("alice", "looking-glass", 1);
  ASSERT_EQ(code_of(wrong), Code::kAccessReject);
  EXPECT_FALSE(wrong->find(attr::kTunnelPrivateGroupId));
  EXPECT_EQ(code_of(pap("mallory", "x", 2)), Code::kAccessReject);
}

TEST_F(SqlAuthenticationTest, ChapAgainstCleartextPassword) {
  auto& b = begin(3, "alice");
  b.add(attr::kChapPassword, auth::chap_password(7, "wonderland", request_authenticator_));
  EXPECT_EQ(code_of(send()), Code::kAccessAccept);
}

TEST_F(SqlAuthenticationTest, MsChap2AgainstNtPassword) {
  const std::string_view user = "bob";
  const auth::NtHash hash = *auth::nt_password_hash("clientPass");
  const auto peer = auth::ms_chap2_peer_response(0x42, user, hash, random_);
  auto& b = begin(4, user);
  b.add_vendor(radius::kVendorMicrosoft, ms::kChapChallenge, peer.authenticator_challenge);
  b.add_vendor(radius::kVendorMicrosoft, ms::kChap2Response, peer.value);
  auto packet = send();
  ASSERT_EQ(code_of(packet), Code::kAccessAccept);
  const auto success = packet->find_vendor(radius::kVendorMicrosoft, ms::kChap2Success);
  ASSERT_TRUE(success);
  const auto& expected = peer.authenticator_response;
  EXPECT_EQ(as_chars(success->subspan(1)), std::string_view(expected.data(), expected.size()));
}

TEST_F(SqlAuthenticationTest, TheFirstStoreThatKnowsTheUserDecides) {
  EXPECT_EQ(code_of(pap("carol", "from-files", 1)), Code::kAccessAccept);
  EXPECT_EQ(code_of(pap("carol", "from-sql", 2)), Code::kAccessReject);
  start({config::UsersStore::kSql, config::UsersStore::kFiles}, path_);
  EXPECT_EQ(code_of(pap("carol", "from-sql", 3)), Code::kAccessAccept);
  EXPECT_EQ(code_of(pap("carol", "from-files", 4)), Code::kAccessReject);
}

TEST_F(SqlAuthenticationTest, ADatabaseThatCannotAnswerDropsTheRequest) {
  start({config::UsersStore::kFiles, config::UsersStore::kSql}, (dir_ / "missing.sqlite").string(),
        Duration::seconds(5));
  EXPECT_FALSE(pap("alice", "wonderland", 1).has_value());
  EXPECT_EQ(counters_.drops[static_cast<std::size_t>(gateway::DropReason::kUserStoreUnavailable)].get(), 1U);
  EXPECT_EQ(counters_.access_rejects.get(), 0U);
  EXPECT_EQ(handler_->pending(gateway::PendingKind::kUserLookup), 0U);
  // A user of the users file is still decided without SQL.
  EXPECT_EQ(code_of(pap("carol", "from-files", 2)), Code::kAccessAccept);
}

}  // namespace
}  // namespace rw::gateway_shell
