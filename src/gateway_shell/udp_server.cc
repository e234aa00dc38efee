// Socket setup and worker lifecycle of the UDP shell.
#include "gateway_shell/udp_server.h"

#include <netinet/in.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <cstring>
#include <system_error>

#include "base/assert.h"
#include "gateway_shell/udp_worker.h"
#include "io/socket_address.h"

namespace rw::gateway_shell {
namespace {

constexpr gateway::Listener kListeners[] = {gateway::Listener::kAuthentication,
                                            gateway::Listener::kAccounting};

int one_per_cpu() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) > 0) return CPU_COUNT(&cpus);
  const unsigned hardware = std::thread::hardware_concurrency();
  return hardware == 0 ? 1 : static_cast<int>(hardware);
}

Result<void, io::SystemError> set_option(int fd, int level, int name, std::string_view call) {
  const int one = 1;
  if (setsockopt(fd, level, name, &one, sizeof(one)) != 0)
    return fail(io::last_system_error(std::string(call)));
  return {};
}

// Asks for a large receive buffer, so that a burst of requests waits in the
// kernel instead of being dropped while a worker is busy (the default is
// about 208 KiB: ~1,000 datagrams). SO_RCVBUFFORCE passes net.core.rmem_max
// when the process may (CAP_NET_ADMIN); otherwise SO_RCVBUF gets what the
// system allows. Not getting the full size is not an error.
void grow_receive_buffer(int fd) {
  constexpr int kReceiveBufferBytes = 8 << 20;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &kReceiveBufferBytes, sizeof(kReceiveBufferBytes)) != 0) {
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &kReceiveBufferBytes, sizeof(kReceiveBufferBytes));
  }
}

// Opens a UDP socket bound to `local`. With `reuse_port` it joins the
// SO_REUSEPORT group of that address and port.
Result<WorkerSocket, io::SystemError> open_socket(const gateway::Endpoint& local, gateway::Listener listener,
                                                  bool reuse_port) {
  const std::string where = io::to_string(local);
  WorkerSocket socket{.fd = io::FileDescriptor(::socket(local.is_v6 ? AF_INET6 : AF_INET,
                                                        SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)),
                      .listener = listener,
                      .is_v6 = local.is_v6,
                      .wildcard = io::is_wildcard(local)};
  if (!socket.fd.valid()) return fail(io::last_system_error("socket " + where));
  const int fd = socket.fd.get();
  Result<void, io::SystemError> status;
  // `::` must not also take IPv4, or binding 0.0.0.0 beside it would fail.
  if (local.is_v6) status = set_option(fd, IPPROTO_IPV6, IPV6_V6ONLY, "setsockopt IPV6_V6ONLY " + where);
  if (status && reuse_port)
    status = set_option(fd, SOL_SOCKET, SO_REUSEPORT, "setsockopt SO_REUSEPORT " + where);
  if (status && socket.wildcard) {
    status = local.is_v6
                 ? set_option(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, "setsockopt IPV6_RECVPKTINFO " + where)
                 : set_option(fd, IPPROTO_IP, IP_PKTINFO, "setsockopt IP_PKTINFO " + where);
  }
  if (!status) return fail(status.error());
  grow_receive_buffer(fd);
  sockaddr_storage address{};
  const socklen_t length = io::to_sockaddr(local, address);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&address), length) != 0) {
    return fail(io::last_system_error("bind " + where));
  }
  return socket;
}

Result<std::uint16_t, io::SystemError> local_port(const WorkerSocket& socket, const std::string& where) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (getsockname(socket.fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return fail(io::last_system_error("getsockname " + where));
  }
  return io::to_endpoint(address).port;
}

// Opens the SO_REUSEPORT group of one address and listener: one socket per
// worker. For a fixed port, unless `share_ports`, a probe without
// SO_REUSEPORT first makes sure no other process (another radiusward
// included) already holds the port, since the kernel would otherwise let a
// second group member share its traffic.
Result<std::vector<WorkerSocket>, io::SystemError> open_group(gateway::Endpoint local,
                                                              gateway::Listener listener, int workers,
                                                              bool share_ports, BoundListener& bound) {
  if (local.port != 0 && !share_ports) {
    auto probe = open_socket(local, listener, /*reuse_port=*/false);
    if (!probe) return fail(probe.error());
  }
  std::vector<WorkerSocket> group;
  for (int i = 0; i < workers; ++i) {
    auto socket = open_socket(local, listener, /*reuse_port=*/true);
    if (!socket) return fail(socket.error());
    if (i == 0 && local.port == 0) {
      // The kernel chose a free port; the other workers join it.
      auto port = local_port(*socket, io::to_string(local));
      if (!port) return fail(port.error());
      local.port = *port;
    }
    group.push_back(std::move(*socket));
  }
  bound = BoundListener{.local = local, .listener = listener};
  return group;
}

}  // namespace

UdpServerOptions udp_server_options(const config::GatewayConfig& config) {
  UdpServerOptions options{.auth_port = config.auth_port,
                           .acct_port = config.acct_port,
                           .share_ports = config.share_ports,
                           .workers = config.workers};
  for (const config::ListenAddress& address : config.listen) {
    gateway::Endpoint local{.address = address.bytes, .is_v6 = address.is_v6};
    options.listen.push_back(local);
  }
  return options;
}

UdpServer::UdpServer() = default;

UdpServer::~UdpServer() { stop(); }

Result<std::unique_ptr<UdpServer>, io::SystemError> UdpServer::start(
    const UdpServerOptions& options, gateway::DatagramHandlerFactory& factory) {
  RW_ASSERT(!options.listen.empty());
  const int workers = options.workers > 0 ? options.workers : one_per_cpu();
  std::unique_ptr<UdpServer> server(new UdpServer());
  server->wakeup_ = io::FileDescriptor(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!server->wakeup_.valid()) return fail(io::last_system_error("eventfd"));

  // sockets[w] holds worker w's sockets.
  std::vector<std::vector<WorkerSocket>> sockets(static_cast<std::size_t>(workers));
  for (gateway::Endpoint local : options.listen) {
    for (gateway::Listener listener : kListeners) {
      local.port = listener == gateway::Listener::kAuthentication ? options.auth_port : options.acct_port;
      BoundListener bound;
      auto group = open_group(local, listener, workers, options.share_ports, bound);
      if (!group) return fail(group.error());
      server->listeners_.push_back(bound);
      for (int w = 0; w < workers; ++w) sockets[w].push_back(std::move((*group)[w]));
    }
  }

  for (int w = 0; w < workers; ++w) {
    auto worker =
        UdpWorker::create(w, std::move(sockets[w]), factory.make_handler(w), server->wakeup_.get(), options);
    if (!worker) return fail(worker.error());
    server->workers_.push_back(std::move(*worker));
  }
  for (auto& worker : server->workers_) {
    try {
      server->threads_.emplace_back([raw = worker.get()] { raw->run(); });
    } catch (const std::system_error& error) {
      // The threads already started are stopped by ~UdpServer.
      return fail(io::SystemError{"pthread_create", error.code().value()});
    }
  }
  return server;
}

void UdpServer::stop() {
  if (threads_.empty()) return;
  const std::uint64_t one = 1;
  if (write(wakeup_.get(), &one, sizeof(one)) != static_cast<ssize_t>(sizeof(one))) {
    die(io::last_system_error("write eventfd"));
  }
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

void UdpServer::post_answers(int worker, std::span<const AnswerNotice> answers) {
  if (worker < 0 || static_cast<std::size_t>(worker) >= workers_.size()) return;
  workers_[static_cast<std::size_t>(worker)]->post_answers(answers);
}

std::uint16_t UdpServer::bound_port(std::size_t index, gateway::Listener listener) const {
  const std::size_t slot = index * 2 + (listener == gateway::Listener::kAccounting ? 1 : 0);
  RW_ASSERT(slot < listeners_.size());
  return listeners_[slot].local.port;
}

std::vector<WorkerCounters> UdpServer::counters() const {
  std::vector<WorkerCounters> out;
  for (const auto& worker : workers_) out.push_back(worker->counters());
  return out;
}

io::HistogramSnapshot UdpServer::latency(gateway::Listener listener) const {
  io::HistogramSnapshot sum;
  for (const auto& worker : workers_) sum.add(worker->latency(listener));
  return sum;
}

WorkerCounters total(const std::vector<WorkerCounters>& counters) {
  WorkerCounters sum;
  for (const WorkerCounters& c : counters) {
    sum.received += c.received;
    sum.sent += c.sent;
    sum.oversized_dropped += c.oversized_dropped;
    sum.send_errors += c.send_errors;
    sum.receive_errors += c.receive_errors;
    sum.deferred_sent += c.deferred_sent;
  }
  return sum;
}

std::string to_string(const WorkerCounters& counters) {
  return fmt::format(
      "received {} sent {} oversized_dropped {} send_errors {} receive_errors {} deferred_sent {}",
      counters.received, counters.sent, counters.oversized_dropped, counters.send_errors,
      counters.receive_errors, counters.deferred_sent);
}

void log_counters(const std::vector<WorkerCounters>& counters) {
  for (std::size_t i = 0; i < counters.size(); ++i) spdlog::info("worker {}: {}", i, to_string(counters[i]));
  spdlog::info("all workers: {}", to_string(total(counters)));
}

}  // namespace rw::gateway_shell
