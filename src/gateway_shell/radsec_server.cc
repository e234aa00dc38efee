// The RadSec listener's loop: accept, TLS handshakes, Length framing, the
// handler, replies and deferred replies, deadlines. One epoll instance,
// level-triggered; every socket is non-blocking, and no call waits on a peer.
#include "gateway_shell/radsec_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>

#include "base/assert.h"
#include "gateway_shell/certificate_names.h"
#include "io/clock.h"
#include "io/socket_address.h"

namespace rw::gateway_shell {
namespace {

// epoll data.u64 of the eventfds and listening sockets; connection ids count
// up from 1 and never reach these.
constexpr std::uint64_t kStopToken = ~std::uint64_t{0};
constexpr std::uint64_t kAnswersToken = ~std::uint64_t{0} - 1;
constexpr std::uint64_t kListenBase = std::uint64_t{1} << 62;
// Connections accepted per wakeup of one listening socket.
constexpr int kAcceptsPerWakeup = 64;
// TLS records read per connection before the others get a turn.
constexpr int kReadsPerTurn = 8;
// The reply buffer the DatagramHandler seam promises (gateway/datagram.h).
constexpr std::size_t kReplyBytes = 4096;
// One TLS record's worth of plaintext.
constexpr std::size_t kReadBytes = 16 * 1024;
// How long accepting pauses when the process is out of file descriptors.
constexpr Duration kAcceptPause = Duration::milliseconds(100);
// Queued connections the kernel holds for accept.
constexpr int kBacklog = 512;

Result<io::FileDescriptor, io::SystemError> listen_on(gateway::Endpoint& local, std::uint16_t port) {
  local.port = port;
  const std::string where = io::to_string(local);
  io::FileDescriptor fd(
      ::socket(local.is_v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return fail(io::last_system_error("socket " + where));
  const int one = 1;
  if (setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0)
    return fail(io::last_system_error("setsockopt SO_REUSEADDR " + where));
  // `::` must not also take IPv4, or listening on 0.0.0.0 beside it would fail.
  if (local.is_v6 && setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) != 0)
    return fail(io::last_system_error("setsockopt IPV6_V6ONLY " + where));
  sockaddr_storage address{};
  const socklen_t length = io::to_sockaddr(local, address);
  if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0)
    return fail(io::last_system_error("bind " + where));
  if (::listen(fd.get(), kBacklog) != 0) return fail(io::last_system_error("listen " + where));
  socklen_t bound_length = sizeof address;
  if (getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &bound_length) != 0)
    return fail(io::last_system_error("getsockname " + where));
  local.port = io::to_endpoint(address).port;
  return fd;
}

}  // namespace

RadSecServerOptions radsec_server_options(const config::GatewayConfig& config) {
  RW_ASSERT(config.radsec.has_value());
  const config::RadSecConfig& radsec = *config.radsec;
  RadSecServerOptions options{.port = radsec.port,
                              .handshake_timeout = radsec.handshake_timeout,
                              .idle_timeout = radsec.idle_timeout,
                              .connections_max = radsec.connections_max,
                              .client_connections_max = radsec.client_connections_max,
                              .buffered_bytes_max = radsec.buffered_bytes_max};
  for (const config::ListenAddress& address : radsec.listen.empty() ? config.listen : radsec.listen) {
    options.listen.push_back(gateway::Endpoint{.address = address.bytes, .is_v6 = address.is_v6});
  }
  return options;
}

std::string_view to_string(RadSecRefusal refusal) {
  switch (refusal) {
    case RadSecRefusal::kUnknownClient:
      return "unknown_client";
    case RadSecRefusal::kTooManyConnections:
      return "too_many_connections";
    case RadSecRefusal::kTooManyClientConnections:
      return "too_many_client_connections";
    case RadSecRefusal::kHandshakeFailed:
      return "handshake_failed";
    case RadSecRefusal::kHandshakeTimeout:
      return "handshake_timeout";
    case RadSecRefusal::kCertificateMismatch:
      return "certificate_mismatch";
    case RadSecRefusal::kCount:
      break;
  }
  return "unknown";
}

std::string_view to_string(RadSecClose reason) {
  switch (reason) {
    case RadSecClose::kPeerClosed:
      return "peer_closed";
    case RadSecClose::kIdleTimeout:
      return "idle_timeout";
    case RadSecClose::kBadLength:
      return "bad_length";
    case RadSecClose::kError:
      return "error";
    case RadSecClose::kCount:
      break;
  }
  return "unknown";
}

struct RadSecServer::Connection {
  std::uint64_t id = 0;
  io::FileDescriptor fd;
  // Declared after fd: freed before the socket closes.
  std::unique_ptr<io::TlsStream> tls;
  gateway::Endpoint peer{};
  std::string client;
  std::string certificate_name;  // RadSecPeer::certificate_name.
  bool established = false;
  // The handshake deadline, then the idle deadline.
  Instant deadline{};
  radius::StreamReader reader;
  // Replies not yet written; out_sent of them are.
  std::vector<std::uint8_t> out;
  std::size_t out_sent = 0;
  // Reading stopped at buffered_bytes_max.
  bool paused = false;
  // The last TLS call waits for the socket to turn writable.
  bool want_write = false;
  std::uint32_t interest = 0;
  std::optional<RadSecRefusal> refused{};
  std::optional<RadSecClose> closed{};

  [[nodiscard]] bool closing() const { return refused.has_value() || closed.has_value(); }
  [[nodiscard]] std::size_t buffered() const { return out.size() - out_sent; }
};

RadSecServer::RadSecServer(RadSecServerOptions options, std::unique_ptr<gateway::DatagramHandler> handler,
                           int worker, RadSecClientLookup lookup)
    : options_(std::move(options)),
      handler_(std::move(handler)),
      worker_(worker),
      lookup_(std::move(lookup)),
      read_buffer_(kReadBytes),
      reply_buffer_(kReplyBytes) {}

Result<std::unique_ptr<RadSecServer>, io::SystemError> RadSecServer::start(
    RadSecServerOptions options, std::unique_ptr<gateway::DatagramHandler> handler, int worker,
    RadSecClientLookup lookup) {
  RW_ASSERT(!options.listen.empty() && options.tls != nullptr && handler != nullptr);
  RW_ASSERT(options.connections_max > 0 && options.client_connections_max > 0);
  std::unique_ptr<RadSecServer> server(
      new RadSecServer(std::move(options), std::move(handler), worker, std::move(lookup)));
  server->epoll_ = io::FileDescriptor(epoll_create1(EPOLL_CLOEXEC));
  if (!server->epoll_.valid()) return fail(io::last_system_error("epoll_create1"));
  server->stop_event_ = io::FileDescriptor(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!server->stop_event_.valid()) return fail(io::last_system_error("eventfd"));
  auto answers = AnswerMailbox::create(1024);
  if (!answers) return fail(answers.error());
  server->answers_ = std::move(*answers);
  const auto watch = [&](int fd, std::uint64_t token) -> Result<void, io::SystemError> {
    epoll_event event{.events = EPOLLIN, .data = {.u64 = token}};
    if (epoll_ctl(server->epoll_.get(), EPOLL_CTL_ADD, fd, &event) != 0)
      return fail(io::last_system_error("epoll_ctl"));
    return {};
  };
  if (auto watched = watch(server->stop_event_.get(), kStopToken); !watched) return fail(watched.error());
  if (auto watched = watch(server->answers_->fd(), kAnswersToken); !watched) return fail(watched.error());
  for (gateway::Endpoint local : server->options_.listen) {
    auto fd = listen_on(local, server->options_.port);
    if (!fd) return fail(fd.error());
    if (auto watched = watch(fd->get(), kListenBase + server->listen_sockets_.size()); !watched)
      return fail(watched.error());
    server->listen_sockets_.push_back(std::move(*fd));
    server->listeners_.push_back(local);
  }
  server->thread_ = std::thread([raw = server.get()] { raw->run(); });
  return server;
}

RadSecServer::~RadSecServer() { stop(); }

void RadSecServer::stop() {
  if (!thread_.joinable()) return;
  const std::uint64_t one = 1;
  (void)!write(stop_event_.get(), &one, sizeof one);
  thread_.join();
  // Connections are closed by the thread on its way out.
}

RadSecCounters RadSecServer::counters() const {
  RadSecCounters counters{
      .accepted = accepted_.load(std::memory_order_relaxed),
      .established = established_.load(std::memory_order_relaxed),
      .open = open_.load(std::memory_order_relaxed),
      .packets_in = packets_in_.load(std::memory_order_relaxed),
      .packets_out = packets_out_.load(std::memory_order_relaxed),
      .replies_orphaned = replies_orphaned_.load(std::memory_order_relaxed),
      .accept_errors = accept_errors_.load(std::memory_order_relaxed),
  };
  for (std::size_t i = 0; i < refused_.size(); ++i)
    counters.refused[i] = refused_[i].load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < closed_.size(); ++i)
    counters.closed[i] = closed_[i].load(std::memory_order_relaxed);
  return counters;
}

void RadSecServer::post_answers(std::span<const AnswerNotice> answers) { answers_->post(answers); }

void RadSecServer::run() {
  pthread_setname_np(pthread_self(), "rw-radsec");
  constexpr int kEventsMax = 64;
  epoll_event events[kEventsMax];
  next_tick_ = io::monotonic_now() + options_.tick_interval;
  for (;;) {
    const Duration until_tick = next_tick_ - io::monotonic_now();
    std::int64_t timeout_ms = until_tick.ns <= 0 ? 0 : (until_tick.ns + 999'999) / 1'000'000;
    if (!again_.empty()) timeout_ms = 0;
    const int ready = epoll_wait(epoll_.get(), events, kEventsMax, static_cast<int>(timeout_ms));
    if (ready < 0) {
      if (errno == EINTR) continue;
      die(io::last_system_error("epoll_wait"));
    }
    bool stopping = false;
    for (int i = 0; i < ready; ++i) stopping = stopping || events[i].data.u64 == kStopToken;
    if (stopping) break;
    Instant now = io::monotonic_now();
    // Served again: what the last turn left in the TLS layer.
    std::vector<std::uint64_t> again;
    again.swap(again_);
    for (const std::uint64_t id : again) on_ready(id, EPOLLIN, now);
    for (int i = 0; i < ready; ++i) {
      const std::uint64_t token = events[i].data.u64;
      if (token == kAnswersToken) {
        take_answers(now);
      } else if (token >= kListenBase) {
        accept_from(static_cast<std::size_t>(token - kListenBase), now);
      } else {
        on_ready(token, events[i].events, now);
      }
    }
    now = io::monotonic_now();
    if (now >= next_tick_) tick(now);
  }
  for (auto& [id, connection] : connections_) {
    connection->tls->close_notify();
    close_connection(*connection);
  }
  connections_.clear();
}

void RadSecServer::refuse(RadSecRefusal refusal) { add(refused_[static_cast<std::size_t>(refusal)]); }

void RadSecServer::accept_from(std::size_t listener, Instant now) {
  const int listen_fd = listen_sockets_[listener].get();
  for (int i = 0; i < kAcceptsPerWakeup; ++i) {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    const int accepted =
        accept4(listen_fd, reinterpret_cast<sockaddr*>(&address), &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (accepted < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      // Out of file descriptors or memory: the connection stays queued in
      // the kernel; accepting resumes after a pause rather than spinning.
      const int error = errno;
      add(accept_errors_);
      spdlog::warn("radsec: accept on {}: {}", io::to_string(listeners_[listener]), std::strerror(error));
      pause_accepting(now);
      return;
    }
    io::FileDescriptor fd(accepted);
    const gateway::Endpoint peer = io::to_endpoint(address);
    // The cheap refusals first, before any TLS work.
    std::optional<RadSecPeer> client = lookup_(peer);
    if (!client) {
      refuse(RadSecRefusal::kUnknownClient);
      continue;
    }
    if (connections_.size() >= options_.connections_max) {
      refuse(RadSecRefusal::kTooManyConnections);
      continue;
    }
    std::size_t& of_client = client_connections_[client->client];
    if (of_client >= options_.client_connections_max) {
      refuse(RadSecRefusal::kTooManyClientConnections);
      continue;
    }
    auto tls = io::TlsStream::attach(client->tls != nullptr ? client->tls : options_.tls, fd.get(),
                                     io::TlsRole::kServer);
    if (!tls) {
      if (of_client == 0) client_connections_.erase(client->client);
      refuse(RadSecRefusal::kHandshakeFailed);
      spdlog::warn("radsec: {}: {}", io::to_string(peer), tls.error().to_string());
      continue;
    }
    const int one = 1;
    // Replies are small and each one is awaited: no Nagle delay.
    (void)setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto connection = std::make_unique<Connection>();
    connection->id = next_id_++;
    connection->fd = std::move(fd);
    connection->tls = std::move(*tls);
    connection->peer = peer;
    connection->client = std::move(client->client);
    connection->certificate_name = std::move(client->certificate_name);
    connection->deadline = now + options_.handshake_timeout;
    connection->interest = EPOLLIN;
    epoll_event event{.events = EPOLLIN, .data = {.u64 = connection->id}};
    if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, connection->fd.get(), &event) != 0) {
      die(io::last_system_error("epoll_ctl"));
    }
    ++of_client;
    add(accepted_);
    add(open_);
    connections_.emplace(connection->id, std::move(connection));
  }
}

void RadSecServer::pause_accepting(Instant now) {
  if (accepting_paused_until_) return;
  accepting_paused_until_ = now + kAcceptPause;
  for (const io::FileDescriptor& fd : listen_sockets_)
    (void)epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd.get(), nullptr);
}

void RadSecServer::resume_accepting() {
  accepting_paused_until_.reset();
  for (std::size_t i = 0; i < listen_sockets_.size(); ++i) {
    epoll_event event{.events = EPOLLIN, .data = {.u64 = kListenBase + i}};
    if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, listen_sockets_[i].get(), &event) != 0)
      die(io::last_system_error("epoll_ctl"));
  }
}

void RadSecServer::on_ready(std::uint64_t id, std::uint32_t events, Instant now) {
  const auto found = connections_.find(id);
  if (found == connections_.end()) return;  // Closed earlier in this turn.
  Connection& connection = *found->second;
  if (!connection.established) {
    drive_handshake(connection, now);
  } else {
    if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0) read_packets(connection, now);
    if (!connection.closing()) flush(connection);
  }
  if (!connection.closing()) update_interest(connection);
  reap(id);
}

void RadSecServer::drive_handshake(Connection& connection, Instant now) {
  switch (connection.tls->handshake()) {
    case io::TlsStream::Status::kDone:
      if (!certificate_names_entry(connection)) return;
      connection.established = true;
      connection.want_write = false;
      connection.deadline = now + options_.idle_timeout;
      add(established_);
      spdlog::debug("radsec: {} ({}) connected", io::to_string(connection.peer), connection.client);
      // Requests may have come in the same records as the handshake's end.
      read_packets(connection, now);
      if (!connection.closing()) flush(connection);
      return;
    case io::TlsStream::Status::kWantRead:
      connection.want_write = false;
      return;
    case io::TlsStream::Status::kWantWrite:
      connection.want_write = true;
      return;
    case io::TlsStream::Status::kClosed:
    case io::TlsStream::Status::kFailed:
      connection.refused = RadSecRefusal::kHandshakeFailed;
      spdlog::info("radsec: {} ({}) refused: {}", io::to_string(connection.peer), connection.client,
                   connection.tls->error().empty() ? "closed during the handshake" : connection.tls->error());
      return;
  }
}

bool RadSecServer::certificate_names_entry(Connection& connection) {
  if (connection.certificate_name.empty()) return true;
  // The handshake required a verified certificate; none here is a bug of
  // the context, refused all the same.
  X509* certificate = SSL_get0_peer_certificate(connection.tls->ssl());
  const CertificateNames names = certificate != nullptr ? certificate_names(certificate) : CertificateNames{};
  if (certificate != nullptr && certificate_names_match(names, connection.certificate_name)) return true;
  connection.refused = RadSecRefusal::kCertificateMismatch;
  spdlog::warn("radsec: {} ({}) refused: the certificate names {}, not certificate_name '{}'",
               io::to_string(connection.peer), connection.client,
               certificate != nullptr ? describe_names(names) : "nothing (no certificate)",
               connection.certificate_name);
  return false;
}

void RadSecServer::read_packets(Connection& connection, Instant now) {
  const std::int64_t unix_ms = io::unix_now_ms();
  for (int round = 0; round < kReadsPerTurn; ++round) {
    if (connection.paused || connection.closing()) return;
    const io::TlsStream::Io got = connection.tls->read(read_buffer_);
    switch (got.status) {
      case io::TlsStream::Status::kDone:
        handle_bytes(connection, Bytes(read_buffer_.data(), got.bytes), now, unix_ms);
        continue;
      case io::TlsStream::Status::kWantRead:
        return;
      case io::TlsStream::Status::kWantWrite:
        connection.want_write = true;
        return;
      case io::TlsStream::Status::kClosed:
        connection.closed = RadSecClose::kPeerClosed;
        return;
      case io::TlsStream::Status::kFailed:
        // A TCP end without close_notify is how most peers leave.
        connection.closed = RadSecClose::kPeerClosed;
        if (connection.tls->error().find("the connection broke") == std::string::npos &&
            connection.tls->error().find("unexpected eof") == std::string::npos) {
          connection.closed = RadSecClose::kError;
        }
        return;
    }
  }
  // The budget is spent: the rest waits for the next turn, which may find it
  // in the TLS layer rather than on the socket.
  if (!connection.closing() && !connection.paused) again_.push_back(connection.id);
}

void RadSecServer::handle_bytes(Connection& connection, Bytes input, Instant now, std::int64_t unix_ms) {
  for (;;) {
    auto next = connection.reader.next(input);
    if (!next) {
      connection.closed = RadSecClose::kBadLength;
      spdlog::info("radsec: {} ({}) closed: a packet Length outside 20..4096", io::to_string(connection.peer),
                   connection.client);
      return;
    }
    if (!*next) return;
    add(packets_in_);
    connection.deadline = now + options_.idle_timeout;
    const gateway::Arrival arrival{.listener = gateway::Listener::kRadSec,
                                   .connection = connection.id,
                                   .unix_ms = unix_ms,
                                   .received = now};
    const std::size_t length = handler_->on_datagram(now, arrival, connection.peer, **next, reply_buffer_);
    if (length == 0) continue;
    RW_ASSERT(length <= kReplyBytes);
    queue_reply(connection, Bytes(reply_buffer_.data(), length));
  }
}

void RadSecServer::queue_reply(Connection& connection, Bytes reply) {
  if (connection.out_sent > 0 && connection.out_sent == connection.out.size()) {
    connection.out.clear();
    connection.out_sent = 0;
  }
  connection.out.insert(connection.out.end(), reply.begin(), reply.end());
  add(packets_out_);
  // Deferred replies are queued even past the bound: the handler's tables
  // bound how many there can be; only reading stops.
  if (connection.buffered() >= options_.buffered_bytes_max) connection.paused = true;
}

void RadSecServer::flush(Connection& connection) {
  while (connection.buffered() > 0) {
    const Bytes pending(connection.out.data() + connection.out_sent, connection.buffered());
    const io::TlsStream::Io put = connection.tls->write(pending);
    if (put.status == io::TlsStream::Status::kDone) {
      connection.out_sent += put.bytes;
      connection.want_write = false;
      continue;
    }
    if (put.status == io::TlsStream::Status::kWantWrite) {
      connection.want_write = true;
    } else if (put.status != io::TlsStream::Status::kWantRead) {
      connection.closed = RadSecClose::kError;
    }
    break;
  }
  if (connection.buffered() == 0) {
    connection.out.clear();
    connection.out_sent = 0;
  } else if (connection.out_sent > options_.buffered_bytes_max) {
    // Keep the buffer from growing by what was already written.
    connection.out.erase(connection.out.begin(),
                         connection.out.begin() + static_cast<std::ptrdiff_t>(connection.out_sent));
    connection.out_sent = 0;
  }
  if (connection.paused && connection.buffered() < options_.buffered_bytes_max / 2) {
    connection.paused = false;
    // Requests may wait in the TLS layer, where epoll does not see them.
    again_.push_back(connection.id);
  }
}

void RadSecServer::update_interest(Connection& connection) {
  std::uint32_t interest = 0;
  if (!connection.paused || !connection.established) interest |= EPOLLIN;
  if (connection.want_write) interest |= EPOLLOUT;
  if (interest == connection.interest) return;
  epoll_event event{.events = interest, .data = {.u64 = connection.id}};
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, connection.fd.get(), &event) != 0)
    die(io::last_system_error("epoll_ctl"));
  connection.interest = interest;
}

void RadSecServer::reap(std::uint64_t id) {
  const auto found = connections_.find(id);
  if (found == connections_.end() || !found->second->closing()) return;
  close_connection(*found->second);
  connections_.erase(found);
}

void RadSecServer::close_connection(Connection& connection) {
  if (connection.refused) {
    refuse(*connection.refused);
  } else if (connection.closed) {
    add(closed_[static_cast<std::size_t>(*connection.closed)]);
    // Our decision to close (idle, bad framing, stopping): say so in TLS.
    if (*connection.closed == RadSecClose::kIdleTimeout || *connection.closed == RadSecClose::kBadLength)
      connection.tls->close_notify();
  }
  const auto client = client_connections_.find(connection.client);
  if (client != client_connections_.end() && --client->second == 0) client_connections_.erase(client);
  open_.store(open_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  // Closing the descriptor removes it from the epoll set.
}

void RadSecServer::take_answers(Instant now) {
  answers_->take([&](const AnswerNotice& notice) {
    const std::optional<gateway::DeferredReply> reply = handler_->on_answer(now, notice, reply_buffer_);
    if (reply) send_deferred(*reply);
  });
}

void RadSecServer::send_deferred(const gateway::DeferredReply& reply) {
  const auto found = connections_.find(reply.arrival.connection);
  if (found == connections_.end() || found->second->closing()) {
    // RFC 6613 and 6614: a reply goes on the connection its request came in on;
    // that one is gone, and the peer sends the request again on another.
    add(replies_orphaned_);
    return;
  }
  Connection& connection = *found->second;
  queue_reply(connection, Bytes(reply_buffer_.data(), reply.length));
  connection.deadline = io::monotonic_now() + options_.idle_timeout;
  flush(connection);
  if (!connection.closing()) update_interest(connection);
  reap(connection.id);
}

void RadSecServer::tick(Instant now) {
  handler_->on_tick(now);
  for (;;) {
    const std::optional<gateway::DeferredReply> reply = handler_->next_timed_reply(now, reply_buffer_);
    if (!reply) break;
    send_deferred(*reply);
  }
  if (accepting_paused_until_ && now >= *accepting_paused_until_) resume_accepting();
  std::vector<std::uint64_t> expired;
  for (const auto& [id, connection] : connections_) {
    if (now < connection->deadline) continue;
    if (connection->established) {
      connection->closed = RadSecClose::kIdleTimeout;
    } else {
      connection->refused = RadSecRefusal::kHandshakeTimeout;
      spdlog::info("radsec: {} ({}) refused: no handshake within {} ms", io::to_string(connection->peer),
                   connection->client, options_.handshake_timeout.ns / 1'000'000);
    }
    expired.push_back(id);
  }
  for (const std::uint64_t id : expired) reap(id);
  next_tick_ = now + options_.tick_interval;
}

}  // namespace rw::gateway_shell
