// The gateway's EAP conversations shared by worker threads, as the UDP
// server runs them: each thread owns its RequestHandler, all share one
// EapConversations; conversations begun on one thread are finished on
// another (a NAS's follow-up from another source port lands on another
// worker), while every thread's tick expires and the admin thread reads
// the figures. Under ThreadSanitizer (make tsan) nothing races.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <thread>
#include <vector>

#include "base/random.h"
#include "config/clients_file.h"
#include "config/users_file.h"
#include "eap/eap_message.h"
#include "eap/md5_method.h"
#include "eap/packet.h"
#include "gateway/eap_conversations.h"
#include "gateway/request_handler.h"
#include "radius/authenticator.h"

namespace rw::gateway_shell {
namespace {

namespace attr = radius::attr;

constexpr int kThreads = 4;
constexpr int kConversations = 50;  // Per thread.

struct Challenge {
  std::vector<std::uint8_t> state;
  std::uint8_t identifier = 0;
  std::vector<std::uint8_t> challenge;
  bool right_password = false;
};

class Worker {
 public:
  Worker(std::shared_ptr<const gateway::GatewayState> state, gateway::EapConversations& conversations,
         int index)
      : random_(static_cast<std::uint64_t>(index) + 100),
        handler_(std::move(state), random_, counters_, nullptr, gateway::AccountingSetup{},
                 static_cast<std::uint16_t>(index)),
        secret_(*radius::SharedSecret::create(as_bytes("testing123"))),
        port_(static_cast<std::uint16_t>(40000 + index)) {
    handler_.set_eap_conversations(&conversations);
  }

  // Sends `eap` (and `state`) and returns the reply's packet, if any.
  std::optional<std::vector<std::uint8_t>> send(Instant now, Bytes eap, Bytes state) {
    std::array<std::uint8_t, 4096> request{};
    std::array<std::uint8_t, 4096> reply{};
    radius::PacketBuilder builder(request);
    const auto authenticator = radius::make_request_authenticator(random_);
    builder.begin(radius::Code::kAccessRequest, next_id_++, authenticator);
    builder.reserve_message_authenticator();
    builder.add(attr::kUserName, as_bytes("alice"));
    builder.add_u32(attr::kNasPortType, 15);
    eap::add_eap_message(builder, eap);
    if (!state.empty()) builder.add(attr::kState, state);
    auto finished = builder.finish();
    radius::sign_request(*finished, secret_);
    gateway::Endpoint from;
    from.address = {127, 0, 0, 1};
    from.port = port_;
    const std::size_t n = handler_.on_datagram(now, gateway::Arrival{}, from, *finished, reply);
    handler_.on_tick(now);
    if (n == 0) return std::nullopt;
    return std::vector<std::uint8_t>(reply.begin(), reply.begin() + static_cast<std::ptrdiff_t>(n));
  }

  std::optional<Challenge> begin(Instant now, int n) {
    const std::vector<std::uint8_t> identity{2, 1, 0, 10, 1, 'a', 'l', 'i', 'c', 'e'};
    const auto reply = send(now, identity, {});
    if (!reply) return std::nullopt;
    auto packet = radius::Packet::parse(*reply);
    if (!packet || packet->code() != radius::Code::kAccessChallenge) return std::nullopt;
    std::array<std::uint8_t, 4096> buffer{};
    auto assembled = eap::reassemble(*packet, buffer);
    auto request = eap::parse(*assembled);
    Challenge out;
    out.state.assign(packet->find(attr::kState)->value.begin(), packet->find(attr::kState)->value.end());
    out.identifier = request->identifier;
    out.challenge.assign(request->type_data.begin() + 1, request->type_data.end());
    out.right_password = n % 5 != 0;
    return out;
  }

  // The code of the final reply.
  std::optional<radius::Code> finish(Instant now, const Challenge& challenge) {
    const auto value = eap::md5_response_value(
        challenge.identifier, challenge.right_password ? "wonderland" : "wrong", challenge.challenge);
    std::array<std::uint8_t, 64> buffer{};
    const auto type_data = eap::md5_type_data(value);
    const Bytes response = eap::write(eap::Packet{.code = eap::Code::kResponse,
                                                  .identifier = challenge.identifier,
                                                  .type = static_cast<std::uint8_t>(eap::Type::kMd5Challenge),
                                                  .type_data = type_data},
                                      buffer);
    const auto reply = send(now, response, challenge.state);
    if (!reply) return std::nullopt;
    return static_cast<radius::Code>((*reply)[0]);
  }

  gateway::GatewayCounters counters_;

 private:
  SeededRandom random_;
  gateway::RequestHandler handler_;
  radius::SharedSecret secret_;
  std::uint16_t port_;
  std::uint8_t next_id_ = 0;
};

TEST(EapWorkers, ConversationsBegunOnOneWorkerFinishOnAnother) {
  auto dictionary = radius::Dictionary::builtin();
  auto users = config::UsersFile::parse("alice Cleartext-Password := \"wonderland\"\n", "users", dictionary,
                                        gateway::gateway_users_limits());
  auto clients =
      config::parse_clients("client nas { ipaddr = 127.0.0.1\n secret = testing123 }\n", "clients");
  gateway::GatewayOptions options;
  options.access.eap.methods = {eap::Type::kMd5Challenge};
  auto state = gateway::GatewayState::build({dictionary, clients->clients, std::move(*users), options});
  ASSERT_TRUE(state.has_value());
  SeededRandom key(9);
  gateway::EapConversations conversations(gateway::EapTableOptions{.conversations_max = 1024}, key);
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < kThreads; ++i) workers.push_back(std::make_unique<Worker>(*state, conversations, i));

  std::array<std::vector<Challenge>, kThreads> begun;
  std::atomic<int> ready{0};
  std::atomic<bool> done{false};
  std::array<int, kThreads> accepted{};
  std::array<int, kThreads> rejected{};
  const Instant now{1'000'000'000};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int n = 0; n < kConversations; ++n) {
        if (auto challenge = workers[t]->begin(now, n)) begun[t].push_back(*challenge);
      }
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();
      // The next thread's conversations, on this thread's worker.
      for (const Challenge& challenge : begun[(t + 1) % kThreads]) {
        const auto code = workers[t]->finish(now, challenge);
        if (code == radius::Code::kAccessAccept) ++accepted[t];
        if (code == radius::Code::kAccessReject) ++rejected[t];
      }
    });
  }
  std::thread admin([&] {
    while (!done.load()) (void)conversations.figures();
  });
  for (std::thread& thread : threads) thread.join();
  done.store(true);
  admin.join();

  int accepts = 0;
  int rejects = 0;
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(begun[t].size(), static_cast<std::size_t>(kConversations));
    accepts += accepted[t];
    rejects += rejected[t];
  }
  EXPECT_EQ(accepts, kThreads * kConversations * 4 / 5);
  EXPECT_EQ(rejects, kThreads * kConversations / 5);
  const gateway::EapFigures figures = conversations.figures();
  EXPECT_EQ(figures.active, 0u);
  EXPECT_EQ(figures.started, static_cast<std::uint64_t>(kThreads * kConversations));
}

}  // namespace
}  // namespace rw::gateway_shell
