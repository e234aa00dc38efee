// Integration tests of the UDP shell on real loopback sockets: workers bound
// to 127.0.0.1 and ::1 on ephemeral ports, an echo handler, and clients that
// send real datagrams and check the replies, the per-source routing, the
// drop of oversized datagrams, the reply source address and shutdown.
#include "gateway_shell/udp_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "io/socket_address.h"

namespace rw::gateway_shell {
namespace {

using gateway::Endpoint;
using gateway::Listener;

// Counts on_tick calls of all workers and lets the test wait for them.
class TickLog {
 public:
  void add() {
    std::lock_guard lock(mutex_);
    ++count_;
    changed_.notify_all();
  }
  // Waits until `count` ticks were seen; false if they never come (the bound
  // only ends a failing test).
  bool wait_for(int count) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(10), [&] { return count_ >= count; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int count_ = 0;
};

// Datagrams starting with "defer" get no reply at once: their ticket is
// published here, and the reply comes when the test posts the answer.
class DeferLog {
 public:
  void add(gateway::Ticket ticket, std::string payload) {
    std::lock_guard lock(mutex_);
    tickets_.emplace_back(ticket, std::move(payload));
    changed_.notify_all();
  }
  // The `n`-th ticket (0-based) and its payload once deferred; nothing if it never comes.
  std::optional<std::pair<gateway::Ticket, std::string>> wait_for(std::size_t n) {
    std::unique_lock lock(mutex_);
    if (!changed_.wait_for(lock, std::chrono::seconds(10), [&] { return tickets_.size() > n; })) return {};
    return tickets_[n];
  }
  std::atomic<int> refused{0};

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::pair<gateway::Ticket, std::string>> tickets_;
};

// Replies "w<worker> <auth|acct> <source> <payload>", cut to the reply buffer.
class EchoHandler final : public gateway::DatagramHandler {
 public:
  EchoHandler(int index, TickLog& ticks, std::atomic<int>& destroyed, DeferLog& deferred)
      : index_(index), ticks_(ticks), destroyed_(destroyed), deferred_(deferred) {}
  ~EchoHandler() override { destroyed_.fetch_add(1); }

  std::size_t on_datagram(Instant now, const gateway::Arrival& arrival, const Endpoint& from, Bytes datagram,
                          MutableBytes reply) override {
    const Listener listener = arrival.listener;
    // The shell's clock never goes backwards.
    if (now < last_now_) return 0;
    last_now_ = now;
    if (as_chars(datagram).starts_with("defer")) {
      const auto slot = static_cast<std::uint16_t>(pending_.size());
      pending_.push_back({arrival, from, std::string(as_chars(datagram))});
      deferred_.add(gateway::make_ticket(static_cast<std::uint16_t>(index_), slot, 0),
                    std::string(as_chars(datagram)));
      return 0;
    }
    std::string text = "w" + std::to_string(index_) +
                       (listener == Listener::kAuthentication ? " auth " : " acct ") + io::to_string(from) +
                       " " + std::string(as_chars(datagram));
    const std::size_t size = std::min(text.size(), reply.size());
    std::copy_n(text.data(), size, reply.data());
    return size;
  }

  void on_tick(Instant now) override {
    if (now < last_now_) return;
    last_now_ = now;
    ticks_.add();
  }

  std::optional<gateway::DeferredReply> on_answer(Instant, const gateway::Answer& answer,
                                                  MutableBytes reply) override {
    if (!answer.committed) {
      deferred_.refused.fetch_add(1);
      return std::nullopt;
    }
    const Pending& pending = pending_.at(gateway::ticket_slot(answer.ticket));
    const std::string text = "answer " + pending.payload;
    std::copy_n(text.data(), text.size(), reply.data());
    return gateway::DeferredReply{.arrival = pending.arrival, .to = pending.from, .length = text.size()};
  }

 private:
  struct Pending {
    gateway::Arrival arrival;
    Endpoint from;
    std::string payload;
  };
  int index_;
  TickLog& ticks_;
  std::atomic<int>& destroyed_;
  DeferLog& deferred_;
  std::vector<Pending> pending_;
  Instant last_now_{};
};

class EchoFactory final : public gateway::DatagramHandlerFactory {
 public:
  std::unique_ptr<gateway::DatagramHandler> make_handler(int worker_index) override {
    ++made;
    return std::make_unique<EchoHandler>(worker_index, ticks, destroyed, deferred);
  }
  int made = 0;
  TickLog ticks;
  DeferLog deferred;
  std::atomic<int> destroyed{0};
};

Endpoint address(std::string_view text) {
  Endpoint endpoint;
  const std::string terminated(text);
  if (inet_pton(AF_INET, terminated.c_str(), endpoint.address.data()) != 1) {
    endpoint.is_v6 = true;
    EXPECT_EQ(inet_pton(AF_INET6, terminated.c_str(), endpoint.address.data()), 1) << text;
  }
  return endpoint;
}

// A NAS: a UDP socket connected to one server address, so that it only
// accepts replies whose source is exactly that address and port.
class Client {
 public:
  explicit Client(Endpoint server) {
    fd_ = io::FileDescriptor(::socket(server.is_v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    EXPECT_TRUE(fd_.valid());
    sockaddr_storage storage{};
    const socklen_t length = io::to_sockaddr(server, storage);
    EXPECT_EQ(connect(fd_.get(), reinterpret_cast<const sockaddr*>(&storage), length), 0) << strerror(errno);
  }

  void send(std::string_view payload) {
    EXPECT_EQ(::send(fd_.get(), payload.data(), payload.size(), 0), static_cast<ssize_t>(payload.size()))
        << strerror(errno);
  }

  // The next reply, or nothing within a generous bound (a failing test,
  // never a timing assumption of a passing one).
  std::optional<std::string> receive() {
    pollfd ready{.fd = fd_.get(), .events = POLLIN, .revents = 0};
    if (poll(&ready, 1, 5000) != 1) return std::nullopt;
    char buffer[8192];
    const ssize_t size = recv(fd_.get(), buffer, sizeof(buffer), 0);
    if (size < 0) return std::nullopt;
    return std::string(buffer, static_cast<std::size_t>(size));
  }

  std::optional<std::string> exchange(std::string_view payload) {
    send(payload);
    return receive();
  }

  // This socket's own address, as the server sees it.
  std::string local() const {
    sockaddr_storage storage{};
    socklen_t length = sizeof(storage);
    EXPECT_EQ(getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&storage), &length), 0);
    return io::to_string(io::to_endpoint(storage));
  }

 private:
  io::FileDescriptor fd_;
};

std::unique_ptr<UdpServer> start(UdpServerOptions options, EchoFactory& factory) {
  auto server = UdpServer::start(options, factory);
  EXPECT_TRUE(server.has_value()) << server.error().to_string();
  return server ? std::move(*server) : nullptr;
}

Endpoint with_port(Endpoint endpoint, std::uint16_t port) {
  endpoint.port = port;
  return endpoint;
}

std::string worker_of(const std::string& reply) { return reply.substr(0, reply.find(' ')); }

TEST(UdpServer, EchoesOnIpv4AndIpv6ForBothListeners) {
  EchoFactory factory;
  auto server =
      start({.listen = {address("127.0.0.1"), address("::1")}, .auth_port = 0, .acct_port = 0, .workers = 2},
            factory);
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(server->worker_count(), 2);
  EXPECT_EQ(factory.made, 2);
  ASSERT_EQ(server->listeners().size(), 4u);
  for (std::size_t i = 0; i < 2; ++i) {
    for (Listener listener : {Listener::kAuthentication, Listener::kAccounting}) {
      const std::uint16_t port = server->bound_port(i, listener);
      ASSERT_NE(port, 0);
      Client client(with_port(address(i == 0 ? "127.0.0.1" : "::1"), port));
      const std::string kind = listener == Listener::kAuthentication ? "auth" : "acct";
      std::optional<std::string> reply = client.exchange("hello");
      ASSERT_TRUE(reply.has_value()) << kind << " " << i;
      EXPECT_EQ(reply->substr(reply->find(' ') + 1), kind + " " + client.local() + " hello");
    }
  }
  server->stop();
  const WorkerCounters sum = total(server->counters());
  EXPECT_EQ(sum.received, 4u);
  EXPECT_EQ(sum.sent, 4u);
  EXPECT_EQ(sum.oversized_dropped, 0u);
  EXPECT_EQ(sum.send_errors, 0u);
  // Every reply sent has its latency, on the listener its request came to.
  for (Listener listener : {Listener::kAuthentication, Listener::kAccounting}) {
    const io::HistogramSnapshot latency = server->latency(listener);
    EXPECT_EQ(latency.count(), 2u);
    EXPECT_LT(latency.sum, 5'000'000u);  // Microseconds: well under the 5 s bucket.
  }
}

TEST(UdpServer, RoutesEachSourceToOneWorker) {
  EchoFactory factory;
  auto server =
      start({.listen = {address("127.0.0.1")}, .auth_port = 0, .acct_port = 0, .workers = 4}, factory);
  ASSERT_NE(server, nullptr);
  const Endpoint target = with_port(address("127.0.0.1"), server->bound_port(0, Listener::kAuthentication));
  std::set<std::string> workers_seen;
  for (int source = 0; source < 32; ++source) {
    Client client(target);
    std::set<std::string> workers_of_source;
    // Retransmissions from one source port must reach the same worker, where
    // its duplicate cache lives (RFC 5080 §2.2.2).
    for (int attempt = 0; attempt < 6; ++attempt) {
      std::optional<std::string> reply = client.exchange("retransmission");
      ASSERT_TRUE(reply.has_value());
      workers_of_source.insert(worker_of(*reply));
    }
    EXPECT_EQ(workers_of_source.size(), 1u) << "source " << source;
    workers_seen.insert(workers_of_source.begin(), workers_of_source.end());
  }
  // The kernel hashes the 4-tuple: 32 sources over 4 workers all landing on
  // one worker would mean SO_REUSEPORT is not in effect (chance 4^-31).
  EXPECT_GE(workers_seen.size(), 2u);
}

TEST(UdpServer, DropsAndCountsOversizedDatagrams) {
  EchoFactory factory;
  auto server =
      start({.listen = {address("127.0.0.1")}, .auth_port = 0, .acct_port = 0, .workers = 1}, factory);
  ASSERT_NE(server, nullptr);
  Client client(with_port(address("127.0.0.1"), server->bound_port(0, Listener::kAuthentication)));
  client.send(std::string(kDatagramBytesMax + 1, 'x'));
  // RFC 2865 §3: 4096 octets is still a valid size.
  std::optional<std::string> largest = client.exchange(std::string(kDatagramBytesMax, 'y'));
  ASSERT_TRUE(largest.has_value());
  EXPECT_EQ(largest->back(), 'y');
  // Datagrams from one source are read in order, so the reply to this one
  // shows the oversized one was already handled (and not answered).
  std::optional<std::string> reply = client.exchange("after");
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->substr(reply->size() - 5), "after");
  server->stop();
  const WorkerCounters counters = server->counters().at(0);
  EXPECT_EQ(counters.received, 3u);
  EXPECT_EQ(counters.oversized_dropped, 1u);
  EXPECT_EQ(counters.sent, 2u);
}

TEST(UdpServer, RepliesFromTheAddressTheRequestWasSentTo) {
  EchoFactory factory;
  auto server = start(
      {.listen = {address("0.0.0.0"), address("::")}, .auth_port = 0, .acct_port = 0, .workers = 2}, factory);
  ASSERT_NE(server, nullptr);
  // All of 127.0.0.0/8 is local on Linux. Without IP_PKTINFO the kernel would
  // answer a request sent to 127.0.0.2 from 127.0.0.1, and the connected
  // client would never see the reply.
  for (std::string_view local : {"127.0.0.1", "127.0.0.2", "127.0.0.3"}) {
    Client client(with_port(address(local), server->bound_port(0, Listener::kAuthentication)));
    EXPECT_TRUE(client.exchange("ping").has_value()) << local;
  }
  Client client(with_port(address("::1"), server->bound_port(1, Listener::kAccounting)));
  EXPECT_TRUE(client.exchange("ping").has_value());
}

TEST(UdpServer, SendsPostedAnswersFromTheAddressTheRequestWasSentTo) {
  EchoFactory factory;
  // Wildcard sockets: the deferred reply must carry the request's destination
  // as its source, or the connected clients below would not accept it.
  auto server = start(
      {.listen = {address("0.0.0.0"), address("::")}, .auth_port = 0, .acct_port = 0, .workers = 1}, factory);
  ASSERT_NE(server, nullptr);
  Client v4(with_port(address("127.0.0.1"), server->bound_port(0, Listener::kAccounting)));
  Client v6(with_port(address("::1"), server->bound_port(1, Listener::kAccounting)));
  v4.send("defer-v4");
  v6.send("defer-v6");
  v4.send("defer-refused");
  std::vector<AnswerNotice> answers;
  for (std::size_t i = 0; i < 3; ++i) {
    auto deferred = factory.deferred.wait_for(i);
    ASSERT_TRUE(deferred.has_value());
    answers.push_back({.ticket = deferred->first, .committed = deferred->second != "defer-refused"});
  }
  server->post_answers(0, answers);
  std::optional<std::string> first = v4.receive();
  std::optional<std::string> second = v6.receive();
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(*first, "answer defer-v4");
  EXPECT_EQ(*second, "answer defer-v6");
  server->stop();
  EXPECT_EQ(factory.deferred.refused.load(), 1);
  EXPECT_EQ(total(server->counters()).deferred_sent, 2u);
  // A deferred reply's latency runs from its request's arrival to its send.
  EXPECT_EQ(server->latency(Listener::kAccounting).count(), 2u);
  EXPECT_EQ(server->latency(Listener::kAuthentication).count(), 0u);
}

TEST(UdpServer, CallsOnTickWhileIdle) {
  EchoFactory factory;
  auto server = start({.listen = {address("127.0.0.1")},
                       .auth_port = 0,
                       .acct_port = 0,
                       .workers = 2,
                       .tick_interval = Duration::milliseconds(1)},
                      factory);
  ASSERT_NE(server, nullptr);
  // Waits for progress, not for a duration.
  EXPECT_TRUE(factory.ticks.wait_for(10));
}

TEST(UdpServer, StopJoinsWorkersAndDestroysHandlers) {
  EchoFactory factory;
  auto server = start({.listen = {address("::1")}, .auth_port = 0, .acct_port = 0, .workers = 3}, factory);
  ASSERT_NE(server, nullptr);
  Client client(with_port(address("::1"), server->bound_port(0, Listener::kAccounting)));
  ASSERT_TRUE(client.exchange("before stop").has_value());
  server->stop();
  server->stop();  // Idempotent.
  EXPECT_EQ(total(server->counters()).sent, 1u);
  EXPECT_EQ(factory.destroyed.load(), 0);
  server.reset();
  EXPECT_EQ(factory.destroyed.load(), 3);
  // The sockets are closed: nothing answers any more.
  client.send("after stop");
  EXPECT_FALSE(client.receive().has_value());
}

TEST(UdpServer, ReportsAPortInUseWithCallAndAddress) {
  // Another process (here: a plain socket) holds 127.0.0.1:P.
  io::FileDescriptor holder(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  sockaddr_storage storage{};
  socklen_t length = io::to_sockaddr(address("127.0.0.1"), storage);
  ASSERT_EQ(bind(holder.get(), reinterpret_cast<const sockaddr*>(&storage), length), 0);
  length = sizeof(storage);
  ASSERT_EQ(getsockname(holder.get(), reinterpret_cast<sockaddr*>(&storage), &length), 0);
  const std::uint16_t port = io::to_endpoint(storage).port;

  EchoFactory factory;
  auto server =
      UdpServer::start({.listen = {address("127.0.0.1")}, .auth_port = port, .acct_port = 0}, factory);
  ASSERT_FALSE(server.has_value());
  EXPECT_EQ(server.error().to_string(),
            "bind 127.0.0.1:" + std::to_string(port) + ": Address already in use");
}

TEST(UdpServer, RefusesToShareAPortWithAnotherServer) {
  EchoFactory factory;
  auto first =
      start({.listen = {address("127.0.0.1")}, .auth_port = 0, .acct_port = 0, .workers = 2}, factory);
  ASSERT_NE(first, nullptr);
  const std::uint16_t port = first->bound_port(0, Listener::kAuthentication);
  // Both would use SO_REUSEPORT; the probe bind keeps the second one out
  // instead of letting it silently take half of the traffic.
  EchoFactory second_factory;
  auto second = UdpServer::start(
      {.listen = {address("127.0.0.1")}, .auth_port = port, .acct_port = 0, .workers = 2}, second_factory);
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().to_string(),
            "bind 127.0.0.1:" + std::to_string(port) + ": Address already in use");
}

TEST(UdpServer, SharesAPortWhenBothServersAskForIt) {
  EchoFactory factory;
  auto first = start(
      {.listen = {address("127.0.0.1")}, .auth_port = 0, .acct_port = 0, .share_ports = true, .workers = 1},
      factory);
  ASSERT_NE(first, nullptr);
  const std::uint16_t port = first->bound_port(0, Listener::kAuthentication);
  EchoFactory second_factory;
  auto second = UdpServer::start({.listen = {address("127.0.0.1")},
                                  .auth_port = port,
                                  .acct_port = 0,
                                  .share_ports = true,
                                  .workers = 1},
                                 second_factory);
  ASSERT_TRUE(second.has_value()) << second.error().to_string();
  EXPECT_EQ((*second)->bound_port(0, Listener::kAuthentication), port);
}

TEST(UdpServerOptions, FollowTheGatewayConfig) {
  auto config = config::parse_gateway_config(
      "listen: [192.0.2.1, '2001:db8::1']\nauth_port: 1645\nacct_port: 1646\nworkers: 3\n"
      "users_file: u\nclients_file: c\n",
      "gw.yaml");
  ASSERT_TRUE(config.has_value());
  const UdpServerOptions options = udp_server_options(*config);
  ASSERT_EQ(options.listen.size(), 2u);
  EXPECT_EQ(io::to_string(options.listen[0]), "192.0.2.1:0");
  EXPECT_EQ(io::to_string(options.listen[1]), "[2001:db8::1]:0");
  EXPECT_EQ(options.auth_port, 1645);
  EXPECT_EQ(options.acct_port, 1646);
  EXPECT_EQ(options.workers, 3);
  EXPECT_EQ(options.batch_size, 32u);
}

}  // namespace
}  // namespace rw::gateway_shell
