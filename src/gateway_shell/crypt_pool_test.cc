// The gateway's request path on real loopback sockets with a user whose
// password is a slow bcrypt hash hammered by one NAS: the crypt(3) pool
// takes the checks off the UDP worker and refuses what its queue cannot
// hold, so a cleartext user and an Accounting-Request sent behind the burst
// are still answered, and the hammered user too, in time. Assertions are on
// answers and counters, never on durations (the bounds only end a failing
// test).
#include "gateway_shell/crypt_pool.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <vector>

#include "accounting/accounting_request_for_test.h"
#include "base/random.h"
#include "config/clients_file.h"
#include "gateway/request_handler.h"
#include "gateway_shell/udp_server.h"
#include "io/socket_address.h"
#include "radius/attribute_crypto.h"
#include "radius/authenticator.h"

namespace rw::gateway_shell {
namespace {

namespace attr = radius::attr;
using radius::Code;

// bcrypt at cost 12 of "hammer-me": hundreds of milliseconds per check.
constexpr std::string_view kUsers = R"(
hammer  Crypt-Password := "$2b$12$Sr1S.QZKzsNbM7grdvtHw.fm9Kxc/hwaa7fK2BGviOz2j0NCF9sKa"
clear   Cleartext-Password := "open"
)";
constexpr std::string_view kClients = "client localhost {\n  ipaddr = 127.0.0.1\n  secret = testing123\n}\n";

// Commits every record at once, through the server's answer path.
class ImmediateSink final : public gateway::AccountingSink {
 public:
  bool submit(const accounting::RecordKey&, Bytes, gateway::Ticket ticket) override {
    UdpServer* udp = server.load();
    if (udp == nullptr) return false;
    const AnswerNotice answer{.ticket = ticket, .committed = true};
    udp->post_answers(gateway::ticket_worker(ticket), std::span(&answer, 1));
    return true;
  }
  std::atomic<UdpServer*> server{nullptr};
};

class Nas {
 public:
  explicit Nas(gateway::Endpoint server) : secret_(*radius::SharedSecret::create(as_bytes("testing123"))) {
    fd_ = io::FileDescriptor(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    sockaddr_storage storage{};
    const socklen_t length = io::to_sockaddr(server, storage);
    EXPECT_EQ(connect(fd_.get(), reinterpret_cast<const sockaddr*>(&storage), length), 0);
  }
  void pap(std::uint8_t id, std::string_view user, std::string_view password) {
    std::array<std::uint8_t, radius::kMaxPacketLength> buffer{};
    radius::PacketBuilder builder(buffer);
    const radius::Authenticator authenticator = radius::make_request_authenticator(random_);
    builder.begin(Code::kAccessRequest, id, authenticator);
    builder.reserve_message_authenticator();
    builder.add(attr::kUserName, as_bytes(user));
    std::array<std::uint8_t, 128> hidden{};
    builder.add(attr::kUserPassword,
                *radius::hide_user_password(as_bytes(password), authenticator, secret_, hidden));
    auto wire = builder.finish();
    radius::sign_request(*wire, secret_);
    send(*wire);
  }
  void send(Bytes datagram) {
    EXPECT_EQ(::send(fd_.get(), datagram.data(), datagram.size(), 0), static_cast<ssize_t>(datagram.size()));
  }
  // The Code of the next reply, or nothing within the failure bound.
  std::optional<Code> receive() {
    pollfd ready{.fd = fd_.get(), .events = POLLIN, .revents = 0};
    if (poll(&ready, 1, 60'000) != 1) return std::nullopt;
    std::array<std::uint8_t, 4096> buffer{};
    const ssize_t size = recv(fd_.get(), buffer.data(), buffer.size(), 0);
    if (size < 20) return std::nullopt;
    return static_cast<Code>(buffer[0]);
  }

 private:
  SeededRandom random_{7};
  radius::SharedSecret secret_;
  io::FileDescriptor fd_;
};

TEST(CryptPool, ABurstOfSlowHashesDoesNotStallOtherRequests) {
  auto dictionary = radius::Dictionary::builtin();
  auto users = config::UsersFile::parse(kUsers, "users", dictionary, gateway::gateway_users_limits());
  ASSERT_TRUE(users);
  auto clients = config::parse_clients(kClients, "clients.conf");
  ASSERT_TRUE(clients);
  auto state = gateway::GatewayState::build({dictionary, clients->clients, std::move(*users), {}});
  ASSERT_TRUE(state) << state.error();

  SeededRandom random(1);
  ImmediateSink sink;
  gateway::RequestHandlerFactory factory(
      *state, random, nullptr,
      gateway::AccountingSetup{.sink = &sink,
                               .recipe = std::make_shared<const accounting::KeyRecipe>(
                                   accounting::KeyRecipe::freeradius_default())});
  std::atomic<UdpServer*> udp_for_answers{nullptr};
  // Stopped before the server is destroyed: its threads post to the server.
  std::optional<CryptPool> pool;
  pool.emplace(CryptPoolOptions{.threads = 1, .queue_max = 2}, [&](const gateway::Answer& answer) {
    if (UdpServer* udp = udp_for_answers.load()) {
      udp->post_answers(gateway::ticket_worker(answer.ticket), std::span(&answer, 1));
    }
  });
  factory.set_parking(gateway::ParkingSetup{.crypt = &*pool});
  UdpServerOptions options{
      .listen = {gateway::Endpoint{.address = {127, 0, 0, 1}}}, .auth_port = 0, .acct_port = 0, .workers = 1};
  auto server = UdpServer::start(options, factory);
  ASSERT_TRUE(server) << server.error().to_string();
  udp_for_answers.store(server->get());
  sink.server.store(server->get());
  gateway::Endpoint auth = (*server)->listeners()[0].local;
  gateway::Endpoint acct = (*server)->listeners()[1].local;

  // One NAS hammers the bcrypt user; others send a cleartext user and
  // accounting right behind the burst, to the same single worker.
  Nas hammering(auth);
  for (std::uint8_t id = 0; id < 40; ++id) hammering.pap(id, "hammer", "hammer-me");
  Nas cleartext(auth);
  cleartext.pap(1, "clear", "open");
  Nas accounting(acct);
  const accounting::testing::AccountingRequest request(accounting::testing::RequestSpec{});
  accounting.send(request.packet().wire());

  EXPECT_EQ(cleartext.receive(), Code::kAccessAccept);
  EXPECT_EQ(accounting.receive(), Code::kAccountingResponse);
  // The pool did check the hammered user: what its queue held is accepted.
  EXPECT_EQ(hammering.receive(), Code::kAccessAccept);

  (*server)->stop();
  udp_for_answers.store(nullptr);
  sink.server.store(nullptr);
  const gateway::GatewayCounters& counters = *factory.counters().at(0);
  EXPECT_GT(counters.drops[static_cast<std::size_t>(gateway::DropReason::kCryptQueueFull)].get(), 0u);
  EXPECT_GE(counters.crypt_checks.get(), 1u);
  EXPECT_LE(counters.crypt_checks.get(), 40u);
  EXPECT_GT(pool->stats().refused, 0u);
  pool.reset();
}

}  // namespace
}  // namespace rw::gateway_shell
