// Throughput of the UDP shell alone: client sockets on loopback send batches
// of 100-byte datagrams to the workers, whose handler echoes them, and wait
// for every reply. Measures the shell's per-datagram cost (system calls,
// batching, dispatch) with a handler that does nearly nothing; the kernel's
// loopback path is part of what is measured.
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>
#include <vector>

#include "gateway_shell/udp_server.h"
#include "io/socket_address.h"

namespace rw::gateway_shell {
namespace {

class EchoHandler final : public gateway::DatagramHandler {
 public:
  std::size_t on_datagram(Instant, const gateway::Arrival&, const gateway::Endpoint&, Bytes datagram,
                          MutableBytes reply) override {
    std::memcpy(reply.data(), datagram.data(), datagram.size());
    return datagram.size();
  }
  void on_tick(Instant) override {}
};

class EchoFactory final : public gateway::DatagramHandlerFactory {
 public:
  std::unique_ptr<gateway::DatagramHandler> make_handler(int) override {
    return std::make_unique<EchoHandler>();
  }
};

constexpr unsigned kBatch = 32;
constexpr std::size_t kDatagramBytes = 100;

// A client socket connected to the server with one batch of datagrams ready.
struct Client {
  io::FileDescriptor fd;
  std::vector<std::uint8_t> buffers = std::vector<std::uint8_t>(kBatch * 4096);
  std::vector<iovec> iov = std::vector<iovec>(kBatch);
  std::vector<mmsghdr> messages = std::vector<mmsghdr>(kBatch);

  explicit Client(const gateway::Endpoint& server) {
    fd = io::FileDescriptor(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    sockaddr_storage storage{};
    const socklen_t length = io::to_sockaddr(server, storage);
    (void)connect(fd.get(), reinterpret_cast<const sockaddr*>(&storage), length);
    timeval timeout{.tv_sec = 2, .tv_usec = 0};
    setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  }

  void prepare(std::size_t size) {
    for (unsigned i = 0; i < kBatch; ++i) {
      iov[i] = iovec{buffers.data() + i * 4096, size};
      messages[i] = mmsghdr{};
      messages[i].msg_hdr.msg_iov = &iov[i];
      messages[i].msg_hdr.msg_iovlen = 1;
    }
  }

  bool send_batch() {
    prepare(kDatagramBytes);
    return sendmmsg(fd.get(), messages.data(), kBatch, 0) == static_cast<int>(kBatch);
  }

  bool receive_batch() {
    unsigned received = 0;
    while (received < kBatch) {
      prepare(4096);
      const int got =
          recvmmsg(fd.get(), messages.data() + received, kBatch - received, MSG_WAITFORONE, nullptr);
      if (got <= 0) return false;
      received += static_cast<unsigned>(got);
    }
    return true;
  }
};

// Arguments: workers, client sockets.
void BM_LoopbackEcho(benchmark::State& state) {
  EchoFactory factory;
  gateway::Endpoint local;
  inet_pton(AF_INET, "127.0.0.1", local.address.data());
  auto server = UdpServer::start(
      {.listen = {local}, .auth_port = 0, .acct_port = 0, .workers = static_cast<int>(state.range(0))},
      factory);
  if (!server) {
    state.SkipWithError(server.error().to_string().c_str());
    return;
  }
  local.port = (*server)->bound_port(0, gateway::Listener::kAuthentication);
  std::vector<Client> clients;
  clients.reserve(static_cast<std::size_t>(state.range(1)));
  for (int i = 0; i < state.range(1); ++i) clients.emplace_back(local);

  for (auto _ : state) {
    bool complete = true;
    for (Client& client : clients) complete = complete && client.send_batch();
    for (Client& client : clients) complete = complete && client.receive_batch();
    if (!complete) {
      state.SkipWithError("a datagram or reply was lost");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * state.range(1) * kBatch);
  (*server)->stop();
  state.counters["oversized"] = static_cast<double>(total((*server)->counters()).oversized_dropped);
}
BENCHMARK(BM_LoopbackEcho)->Args({1, 1})->Args({1, 4})->Args({2, 4})->Args({2, 8})->UseRealTime();

}  // namespace
}  // namespace rw::gateway_shell
