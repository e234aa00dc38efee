// The UDP exchange of ctl disconnect and ctl coa (dynamic_sender.h).
#include "app/dynamic_sender.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <optional>

#include "io/clock.h"
#include "io/csprng.h"
#include "io/file_descriptor.h"
#include "io/socket_address.h"

namespace rw::app {
namespace {

// One request in flight. Identifiers are unique within a batch of at most
// 256, so an answer is matched by its identifier and then its source.
struct Exchange {
  std::size_t target = 0;
  gateway::Endpoint to;
  std::vector<std::uint8_t> request;
  int tries = 0;
  Duration wait;
  Instant deadline;
  bool done = false;
  std::string refused;  // why the last answer that did not verify was refused
};

constexpr std::size_t kBatchMax = 256;

io::FileDescriptor open_socket(bool is_v6) {
  return io::FileDescriptor(::socket(is_v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
}

// Sends one try; a send error ends the exchange with that error.
void send_try(int fd, Exchange& exchange, const Instant now, SendOutcome& outcome) {
  sockaddr_storage storage{};
  const socklen_t length = io::to_sockaddr(exchange.to, storage);
  ++exchange.tries;
  if (::sendto(fd, exchange.request.data(), exchange.request.size(), 0, reinterpret_cast<sockaddr*>(&storage),
               length) < 0) {
    outcome.line += std::string(" error: cannot send: ") + std::strerror(errno);
    exchange.done = true;
    return;
  }
  exchange.deadline = now + exchange.wait;
}

void run_batch(radius::DynamicKind kind, std::span<const admin::DynamicTarget> targets,
               std::span<const radius::ChangeAttribute> changes, const SendOptions& options,
               const radius::Dictionary& dictionary, std::span<const std::size_t> batch,
               std::vector<SendOutcome>& outcomes) {
  std::array<io::FileDescriptor, 2> sockets;  // [0] IPv4, [1] IPv6
  std::vector<Exchange> exchanges;
  std::array<std::uint8_t, 1> first{};
  io::thread_csprng().fill(first);
  const Instant now = io::monotonic_now();
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const admin::DynamicTarget& target = targets[batch[i]];
    SendOutcome& outcome = outcomes[batch[i]];
    io::FileDescriptor& sender = sockets[target.is_v6 ? 1 : 0];
    if (!sender.valid()) sender = open_socket(target.is_v6);
    if (!sender.valid()) {
      outcome.line += std::string(" error: cannot open a UDP socket: ") + std::strerror(errno);
      continue;
    }
    Exchange exchange;
    exchange.target = batch[i];
    exchange.to = gateway::Endpoint{target.address, target.is_v6, target.port};
    exchange.request.resize(radius::kMaxPacketLength);
    auto secret = radius::SharedSecret::create(target.client->secret_bytes());
    if (!secret) {
      outcome.line +=
          " error: the client's secret is unusable: " + std::string(radius::to_string(secret.error()));
      continue;
    }
    const auto identifier = static_cast<std::uint8_t>(first[0] + i);
    auto length =
        radius::build_dynamic_request(exchange.request, kind, identifier, target.identity, changes, *secret);
    if (!length) {
      outcome.line += " error: cannot build the request: " + std::string(radius::to_string(length.error()));
      continue;
    }
    exchange.request.resize(*length);
    exchange.wait = options.first_wait;
    send_try(sender.get(), exchange, now, outcome);
    if (!exchange.done) exchanges.push_back(std::move(exchange));
  }

  std::array<std::uint8_t, radius::kMaxPacketLength> datagram{};
  for (;;) {
    const Instant now_loop = io::monotonic_now();
    std::optional<Instant> next;
    for (Exchange& exchange : exchanges) {
      if (exchange.done || exchange.deadline > now_loop) {
        if (!exchange.done && (!next || exchange.deadline < *next)) next = exchange.deadline;
        continue;
      }
      SendOutcome& outcome = outcomes[exchange.target];
      if (exchange.tries >= options.tries) {
        outcome.line +=
            " timeout after " + std::to_string(exchange.tries) + (exchange.tries == 1 ? " try" : " tries");
        if (!exchange.refused.empty()) outcome.line += " (last answer refused: " + exchange.refused + ")";
        exchange.done = true;
        continue;
      }
      exchange.wait = exchange.wait + exchange.wait;
      send_try(sockets[exchange.to.is_v6 ? 1 : 0].get(), exchange, now_loop, outcome);
      if (!exchange.done && (!next || exchange.deadline < *next)) next = exchange.deadline;
    }
    if (!next) return;
    std::array<pollfd, 2> polled{};
    for (std::size_t s = 0; s < 2; ++s)
      polled[s] = pollfd{sockets[s].valid() ? sockets[s].get() : -1, POLLIN, 0};
    const std::int64_t wait_ms = std::max<std::int64_t>(0, (*next - now_loop).ns / 1'000'000 + 1);
    if (::poll(polled.data(), polled.size(), static_cast<int>(wait_ms)) <= 0) continue;
    for (std::size_t s = 0; s < 2; ++s) {
      if ((polled[s].revents & POLLIN) == 0) continue;
      sockaddr_storage from{};
      socklen_t from_length = sizeof from;
      const ssize_t received = ::recvfrom(sockets[s].get(), datagram.data(), datagram.size(), MSG_DONTWAIT,
                                          reinterpret_cast<sockaddr*>(&from), &from_length);
      if (received < static_cast<ssize_t>(radius::kHeaderLength)) continue;
      const gateway::Endpoint source = io::to_endpoint(from);
      auto exchange = std::find_if(exchanges.begin(), exchanges.end(), [&](const Exchange& e) {
        return !e.done && e.to == source && e.request[1] == datagram[1];
      });
      if (exchange == exchanges.end()) continue;  // late, duplicate, or from elsewhere
      const admin::DynamicTarget& target = targets[exchange->target];
      auto secret = radius::SharedSecret::create(target.client->secret_bytes());
      auto reply = radius::read_dynamic_reply(Bytes(datagram.data(), static_cast<std::size_t>(received)),
                                              kind, exchange->request, *secret);
      if (!reply) {
        exchange->refused = std::string(radius::to_string(reply.error()));
        continue;
      }
      SendOutcome& outcome = outcomes[exchange->target];
      outcome.line += " " + radius::describe(*reply, dictionary);
      outcome.acknowledged = reply->acknowledged;
      exchange->done = true;
    }
  }
}

}  // namespace

std::vector<SendOutcome> send_dynamic_requests(radius::DynamicKind kind,
                                               std::span<const admin::DynamicTarget> targets,
                                               std::span<const radius::ChangeAttribute> changes,
                                               const SendOptions& options,
                                               const radius::Dictionary& dictionary) {
  std::vector<SendOutcome> outcomes(targets.size());
  std::vector<std::size_t> batch;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    outcomes[i].line = admin::outcome_prefix(targets[i]);
    if (targets[i].client == nullptr) {
      outcomes[i].line += " error: " + targets[i].problem;
      continue;
    }
    batch.push_back(i);
    if (batch.size() == kBatchMax) {
      run_batch(kind, targets, changes, options, dictionary, batch, outcomes);
      batch.clear();
    }
  }
  if (!batch.empty()) run_batch(kind, targets, changes, options, dictionary, batch, outcomes);
  return outcomes;
}

}  // namespace rw::app
