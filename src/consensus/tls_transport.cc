// TlsTransport: libraft's raft_uv_transport over TLS 1.3 (tls_transport.h).
// The loop thread runs init/listen/connect/close and hands socketpair ends to
// libraft as uv_pipe_t; an acceptor thread and one bridge thread per
// connection do all socket, TLS and certificate work, so a slow or hostile
// peer never runs code on the raft loop (docs/consensus.md "Transport").
#include "consensus/tls_transport.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <deque>
#include <list>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/assert.h"
#include "consensus/raft_c.h"
#include "consensus/tls_preamble.h"

namespace rw::consensus {

std::shared_ptr<SSL_CTX> share_ssl_context(SSL_CTX* context) {
  return std::shared_ptr<SSL_CTX>(context, [](SSL_CTX* owned) { SSL_CTX_free(owned); });
}

namespace {

using Clock = std::chrono::steady_clock;

// Each direction's bridge buffer: four TLS records.
constexpr std::size_t kBridgeBuffer = 64 * 1024;

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;
};

// "a.b.c.d:port" (what libraft and NodeOptions use) or "[v6]:port"; numeric
// only, so a bridge thread never blocks in a resolver.
std::optional<SocketAddress> parse_address(std::string_view text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon + 1 >= text.size()) return std::nullopt;
  std::string host(text.substr(0, colon));
  const std::string port_text(text.substr(colon + 1));
  if (port_text.size() > 5 || port_text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const unsigned long port = std::stoul(port_text);
  if (port == 0 || port > 65535) return std::nullopt;
  SocketAddress address;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&address.storage);
    if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) != 1) return std::nullopt;
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<std::uint16_t>(port));
    address.length = sizeof(sockaddr_in6);
    return address;
  }
  auto* v4 = reinterpret_cast<sockaddr_in*>(&address.storage);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) != 1) return std::nullopt;
  v4->sin_family = AF_INET;
  v4->sin_port = htons(static_cast<std::uint16_t>(port));
  address.length = sizeof(sockaddr_in);
  return address;
}

std::string peer_text(const sockaddr_storage& storage) {
  char host[INET6_ADDRSTRLEN] = "?";
  if (storage.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&storage);
    inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
    return fmt::format("{}:{}", host, ntohs(v4->sin_port));
  }
  if (storage.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&storage);
    inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
    return fmt::format("[{}]:{}", host, ntohs(v6->sin6_port));
  }
  return "?";
}

// The first queued OpenSSL error as text, and the queue emptied (it is per
// thread; a bridge thread must not see the previous connection's errors).
std::string take_ssl_error() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "connection closed";
  char text[256];
  ERR_error_string_n(code, text, sizeof text);
  return text;
}

}  // namespace

void block_sigpipe_in_this_thread() {
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
}

namespace {

// The socket readiness a non-blocking OpenSSL call that returned `rv` waits
// for, or nullopt when it failed or the peer closed.
std::optional<short> ssl_wants(SSL* ssl, int rv) {
  switch (SSL_get_error(ssl, rv)) {
    case SSL_ERROR_WANT_READ:
      return POLLIN;
    case SSL_ERROR_WANT_WRITE:
      return POLLOUT;
    default:
      return std::nullopt;
  }
}

// Why a bridge's wait ended.
enum class Wait { kReady, kTimeout, kStopped };

// Ends a connection: bounded by the deadline, the stop descriptor, or both.
struct Fail {
  std::string reason;
  bool timeout = false;  // The deadline passed: counted apart from refusals.
};

}  // namespace

struct TlsTransport::Impl {
  // One thread, joined by the loop thread (close) or a later spawn (reap).
  struct Worker {
    std::thread thread;
    std::atomic<bool> finished{false};
  };
  // A finished handshake (or failed connect) for the loop thread.
  struct Handover {
    struct raft_uv_connect* request = nullptr;  // Outbound; nullptr: inbound.
    int fd = -1;                                // Our socketpair end; -1: failed connect.
    std::uint64_t id = 0;                       // Inbound: the verified peer id.
    std::string address;                        // Inbound: the peer's raft address.
  };
  // The uv_async_t lives apart so that it can outlive Impl when libraft was
  // never started (release before the loop ran the close callback).
  struct Wake {
    uv_async_t async{};
    Impl* owner = nullptr;
  };

  Impl(struct raft_uv_transport* raft_transport, uv_loop_t* uv_loop, TlsTransportOptions transport_options)
      : raft(raft_transport), loop(uv_loop), options(std::move(transport_options)) {}

  struct raft_uv_transport* raft;
  uv_loop_t* loop;
  TlsTransportOptions options;

  // Loop thread (and the starting thread before the loop runs).
  std::uint64_t id = 0;
  std::string address;
  raft_uv_accept_cb accept_cb = nullptr;
  raft_uv_transport_close_cb close_cb = nullptr;
  Wake* wake = nullptr;
  std::set<struct raft_uv_connect*> connecting;  // Not yet answered.
  bool closing = false;
  bool stopped = false;  // Threads joined.

  // Shared with bridge threads.
  int stop_fd = -1;  // eventfd, readable once stopping: wakes every poll.
  int listen_fd = -1;
  std::thread acceptor;
  std::mutex mutex;
  std::list<Worker> workers;        // Guarded by mutex.
  std::deque<Handover> handovers;   // Guarded by mutex.
  std::size_t pending_inbound = 0;  // Guarded by mutex.
  std::atomic<std::size_t> established_inbound{0};

  // Counters.
  std::atomic<std::uint64_t> inbound_accepted{0}, outbound_connected{0}, refused_handshake{0},
      refused_identity{0}, refused_preamble{0}, refused_timeout{0}, refused_overload{0}, outbound_failed{0};

  // Log rate limits, one for inbound refusals and one for outbound
  // failures, so that a peer that is down does not hide an attack.
  struct LogLimit {
    Clock::time_point last{};
    std::uint64_t suppressed = 0;
  };
  std::mutex log_mutex;
  LogLimit inbound_log;
  LogLimit outbound_log;

  void log(LogLevel level, std::string_view message) {
    if (options.log) options.log(level, message);
  }

  void report(std::atomic<std::uint64_t>& counter, LogLimit& limit, std::string_view message) {
    counter.fetch_add(1, std::memory_order_relaxed);
    if (!options.log) return;
    std::unique_lock lock(log_mutex);
    const auto now = Clock::now();
    if (limit.last != Clock::time_point{} &&
        now - limit.last < std::chrono::milliseconds(options.log_interval_ms)) {
      ++limit.suppressed;
      return;
    }
    limit.last = now;
    const std::uint64_t more = std::exchange(limit.suppressed, 0);
    const LogLevel level = LogLevel::kWarning;
    lock.unlock();
    if (more == 0) {
      options.log(level, fmt::format("raft tls member {}: {}", id, message));
    } else {
      options.log(level,
                  fmt::format("raft tls member {}: {} ({} more since the last line)", id, message, more));
    }
  }

  // ---- Bridge-thread helpers -------------------------------------------

  bool stopping() const {
    pollfd stop{stop_fd, POLLIN, 0};
    return ::poll(&stop, 1, 0) > 0;
  }

  // Waits for `events` on `fd` (and, when fd2 >= 0, `events2` on fd2) until
  // the deadline (none: Clock::time_point::max()) or stop.
  Wait wait(int fd, short events, Clock::time_point deadline, int fd2 = -1, short events2 = 0) {
    for (;;) {
      int timeout = -1;
      if (deadline != Clock::time_point::max()) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) return Wait::kTimeout;
        timeout = static_cast<int>(std::min<long long>(left + 1, 60000));
      }
      pollfd fds[3] = {
          {stop_fd, POLLIN, 0}, {events != 0 ? fd : -1, events, 0}, {events2 != 0 ? fd2 : -1, events2, 0}};
      const int n = ::poll(fds, 3, timeout);
      if (n < 0 && errno != EINTR) return Wait::kStopped;
      if (fds[0].revents != 0) return Wait::kStopped;
      if (n > 0) return Wait::kReady;
    }
  }

  // Runs one non-blocking OpenSSL call until it succeeds, waiting on the
  // socket as it asks. Returns its positive result, or the failure.
  template <class Call>
  Result<int, Fail> ssl_call(SSL* ssl, int fd, Clock::time_point deadline, Call call) {
    for (;;) {
      ERR_clear_error();
      const int rv = call();
      if (rv > 0) return rv;
      const std::optional<short> wanted = ssl_wants(ssl, rv);
      if (!wanted) {
        if (SSL_get_error(ssl, rv) == SSL_ERROR_ZERO_RETURN) return fail(Fail{"peer closed the connection"});
        return fail(Fail{take_ssl_error()});
      }
      switch (wait(fd, *wanted, deadline)) {
        case Wait::kReady:
          break;
        case Wait::kTimeout:
          return fail(Fail{"handshake deadline passed", true});
        case Wait::kStopped:
          return fail(Fail{"transport closing"});
      }
    }
  }

  Result<void, Fail> ssl_write_all(SSL* ssl, int fd, Clock::time_point deadline,
                                   std::span<const std::uint8_t> bytes) {
    while (!bytes.empty()) {
      auto n = ssl_call(ssl, fd, deadline,
                        [&] { return SSL_write(ssl, bytes.data(), static_cast<int>(bytes.size())); });
      if (!n) return fail(n.error());
      bytes = bytes.subspan(static_cast<std::size_t>(*n));
    }
    return {};
  }

  // The TLS 1.3 session with a verified peer certificate, whatever the
  // context says: the transport does not trust its caller's configuration
  // for what makes the port safe.
  SSL* new_ssl(SSL_CTX* context, int fd, bool server) {
    SSL* ssl = SSL_new(context);
    if (ssl == nullptr) return nullptr;
    SSL_set_min_proto_version(ssl, TLS1_3_VERSION);
    SSL_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    SSL_set_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    if (server) SSL_set_num_tickets(ssl, 0);  // No resumption: every connection shows its certificate.
    if (SSL_set_fd(ssl, fd) != 1) {
      SSL_free(ssl);
      return nullptr;
    }
    return ssl;
  }

  // The member id of the verified peer certificate, or why there is none.
  Result<std::uint64_t, Fail> peer_member_id(SSL* ssl) {
    if (SSL_get_verify_result(ssl) != X509_V_OK) {
      return fail(Fail{X509_verify_cert_error_string(SSL_get_verify_result(ssl))});
    }
    X509* certificate = SSL_get0_peer_certificate(ssl);
    if (certificate == nullptr) return fail(Fail{"no peer certificate"});
    X509_NAME* subject = X509_get_subject_name(certificate);
    const int index = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
    if (index < 0) return fail(Fail{"certificate without a common name"});
    if (X509_NAME_get_index_by_NID(subject, NID_commonName, index) >= 0) {
      return fail(Fail{"certificate with two common names"});
    }
    const ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, index));
    const std::string_view name(reinterpret_cast<const char*>(ASN1_STRING_get0_data(data)),
                                static_cast<std::size_t>(ASN1_STRING_length(data)));
    const std::optional<std::uint64_t> member = member_id_of_common_name(name);
    if (!member) {
      return fail(Fail{fmt::format("certificate CN \"{}\" is not member-<id>", name.substr(0, 64))});
    }
    return *member;
  }

  // Hands a finished (or failed, fd -1) connection to the loop thread.
  // Returns false when the transport is closing: the caller keeps the fd.
  bool hand_over(Handover handover) {
    {
      std::lock_guard lock(mutex);
      if (stopping()) return false;
      handovers.push_back(std::move(handover));
    }
    uv_async_send(&wake->async);
    return true;
  }

  // Moves bytes between the TLS connection and libraft's socketpair end
  // until either side ends (after flushing what was read from it) or stop.
  void shuttle(SSL* ssl, int tcp, int local) {
    std::vector<std::uint8_t> up(kBridgeBuffer);    // libraft -> TLS
    std::vector<std::uint8_t> down(kBridgeBuffer);  // TLS -> libraft
    std::size_t up_offset = 0, up_length = 0, down_offset = 0, down_length = 0;
    bool local_ended = false, tls_ended = false;
    for (;;) {
      short tcp_events = 0;
      short local_events = 0;
      bool progress = true;
      while (progress) {
        progress = false;
        tcp_events = 0;
        local_events = 0;
        if (!local_ended && up_length == 0) {
          const ssize_t n = ::recv(local, up.data(), up.size(), 0);
          if (n > 0) {
            up_offset = 0;
            up_length = static_cast<std::size_t>(n);
            progress = true;
          } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            local_events |= POLLIN;
          } else if (n < 0 && errno == EINTR) {
            progress = true;
          } else {
            local_ended = true;
          }
        }
        if (up_length > 0) {
          ERR_clear_error();
          const int n = SSL_write(ssl, up.data() + up_offset, static_cast<int>(up_length));
          if (n > 0) {
            up_offset += static_cast<std::size_t>(n);
            up_length -= static_cast<std::size_t>(n);
            progress = true;
          } else if (const std::optional<short> wanted = ssl_wants(ssl, n)) {
            tcp_events |= *wanted;
          } else {
            return;
          }
        }
        if (!tls_ended && down_length == 0) {
          ERR_clear_error();
          const int n = SSL_read(ssl, down.data(), static_cast<int>(down.size()));
          if (n > 0) {
            down_offset = 0;
            down_length = static_cast<std::size_t>(n);
            progress = true;
          } else if (const std::optional<short> wanted = ssl_wants(ssl, n)) {
            tcp_events |= *wanted;
          } else {
            tls_ended = true;
          }
        }
        if (down_length > 0) {
          const ssize_t n = ::send(local, down.data() + down_offset, down_length, MSG_NOSIGNAL);
          if (n > 0) {
            down_offset += static_cast<std::size_t>(n);
            down_length -= static_cast<std::size_t>(n);
            progress = true;
          } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            local_events |= POLLOUT;
          } else if (n < 0 && errno == EINTR) {
            progress = true;
          } else {
            return;
          }
        }
        if ((local_ended && up_length == 0) || (tls_ended && down_length == 0)) return;
      }
      if (wait(tcp, tcp_events, Clock::time_point::max(), local, local_events) == Wait::kStopped) return;
    }
  }

  // ---- Bridge threads ---------------------------------------------------

  void run_outbound(struct raft_uv_connect* request, std::uint64_t peer, std::string peer_address) {
    block_sigpipe_in_this_thread();
    const auto deadline = Clock::now() + std::chrono::milliseconds(options.handshake_timeout_ms);
    int tcp = -1;
    SSL* ssl = nullptr;
    int pair[2] = {-1, -1};
    auto attempt = [&]() -> Result<void, Fail> {
      const std::optional<SocketAddress> target = parse_address(peer_address);
      if (!target) return fail(Fail{"unparsable address"});
      tcp = ::socket(target->storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (tcp < 0) return fail(Fail{std::strerror(errno)});
      if (::connect(tcp, reinterpret_cast<const sockaddr*>(&target->storage), target->length) != 0) {
        if (errno != EINPROGRESS) return fail(Fail{std::strerror(errno)});
        const Wait waited = wait(tcp, POLLOUT, deadline);
        if (waited == Wait::kTimeout) return fail(Fail{"connect deadline passed"});
        if (waited == Wait::kStopped) return fail(Fail{"transport closing"});
        int error = 0;
        socklen_t length = sizeof error;
        ::getsockopt(tcp, SOL_SOCKET, SO_ERROR, &error, &length);
        if (error != 0) return fail(Fail{std::strerror(error)});
      }
      const int one = 1;
      ::setsockopt(tcp, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      ssl = new_ssl(options.client_context.get(), tcp, /*server=*/false);
      if (ssl == nullptr) return fail(Fail{take_ssl_error()});
      if (auto done = ssl_call(ssl, tcp, deadline, [&] { return SSL_connect(ssl); }); !done) {
        return fail(done.error());
      }
      auto member = peer_member_id(ssl);
      if (!member) return fail(member.error());
      if (*member != peer) {
        return fail(Fail{fmt::format("peer certificate is member-{}, not member-{}", *member, peer)});
      }
      if (auto sent = ssl_write_all(ssl, tcp, deadline, encode_preamble({.id = id, .address = address}));
          !sent) {
        return fail(sent.error());
      }
      std::array<std::uint8_t, kPreambleAccepted.size()> answer{};
      std::size_t got = 0;
      while (got < answer.size()) {
        auto n = ssl_call(ssl, tcp, deadline, [&] {
          return SSL_read(ssl, answer.data() + got, static_cast<int>(answer.size() - got));
        });
        if (!n) return fail(Fail{"refused by the peer (" + n.error().reason + ")"});
        got += static_cast<std::size_t>(*n);
      }
      if (answer != kPreambleAccepted)
        return fail(Fail{"peer answered with something else than the acceptance"});
      if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair) != 0) {
        return fail(Fail{std::strerror(errno)});
      }
      return {};
    };
    auto attempted = attempt();
    if (attempted && hand_over(Handover{.request = request, .fd = pair[0], .id = peer, .address = {}})) {
      outbound_connected.fetch_add(1, std::memory_order_relaxed);
      shuttle(ssl, tcp, pair[1]);
      SSL_shutdown(ssl);  // Non-blocking: one close_notify if it fits.
    } else {
      if (pair[0] >= 0) ::close(pair[0]);
      if (!attempted) {
        if (!stopping()) {
          report(outbound_failed, outbound_log,
                 fmt::format("connect to member {} at {}: {}", peer, peer_address, attempted.error().reason));
        }
        hand_over(Handover{.request = request, .fd = -1, .id = peer, .address = {}});
      }
    }
    if (ssl != nullptr) SSL_free(ssl);
    if (tcp >= 0) ::close(tcp);
    if (pair[1] >= 0) ::close(pair[1]);
    ERR_clear_error();
  }

  void run_inbound(int tcp, std::string peer) {
    block_sigpipe_in_this_thread();
    const auto deadline = Clock::now() + std::chrono::milliseconds(options.handshake_timeout_ms);
    SSL* ssl = nullptr;
    int pair[2] = {-1, -1};
    Preamble preamble;
    bool counted_established = false;
    std::atomic<std::uint64_t>* refusal = &refused_handshake;
    auto attempt = [&]() -> Result<void, Fail> {
      const int one = 1;
      ::setsockopt(tcp, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      ssl = new_ssl(options.server_context.get(), tcp, /*server=*/true);
      if (ssl == nullptr) return fail(Fail{take_ssl_error()});
      if (auto done = ssl_call(ssl, tcp, deadline, [&] { return SSL_accept(ssl); }); !done) {
        return fail(done.error());
      }
      refusal = &refused_identity;
      auto member = peer_member_id(ssl);
      if (!member) return fail(member.error());
      if (*member == id || !options.is_member || !options.is_member(*member)) {
        return fail(Fail{fmt::format("member-{} is not another member of this cluster", *member)});
      }
      refusal = &refused_preamble;
      std::array<std::uint8_t, kMaxPreambleSize + 1> bytes{};
      std::size_t got = 0;
      for (;;) {
        auto n = ssl_call(ssl, tcp, deadline, [&] {
          return SSL_read(ssl, bytes.data() + got, static_cast<int>(bytes.size() - got));
        });
        if (!n) return fail(n.error());
        got += static_cast<std::size_t>(*n);
        auto parsed = parse_preamble(std::span(bytes).first(got));
        if (!parsed) return fail(Fail{std::string(to_string(parsed.error()))});
        if (parsed->has_value()) {
          preamble = std::move(**parsed);
          break;
        }
      }
      if (preamble.id != *member) {
        refusal = &refused_identity;
        return fail(Fail{fmt::format("certificate member-{} sent preamble id {}", *member, preamble.id)});
      }
      refusal = &refused_overload;
      if (established_inbound.fetch_add(1, std::memory_order_relaxed) >= options.max_established_inbound) {
        established_inbound.fetch_sub(1, std::memory_order_relaxed);
        return fail(Fail{"too many established inbound connections"});
      }
      counted_established = true;
      if (auto sent = ssl_write_all(ssl, tcp, deadline, kPreambleAccepted); !sent) return fail(sent.error());
      if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair) != 0) {
        return fail(Fail{std::strerror(errno)});
      }
      return {};
    };
    auto attempted = attempt();
    {
      std::lock_guard lock(mutex);
      --pending_inbound;
    }
    if (!attempted) {
      if (attempted.error().timeout) refusal = &refused_timeout;
      if (!stopping()) {
        report(*refusal, inbound_log,
               fmt::format("refused raft connection from {}: {}", peer, attempted.error().reason));
      }
    } else if (hand_over(Handover{
                   .request = nullptr, .fd = pair[0], .id = preamble.id, .address = preamble.address})) {
      inbound_accepted.fetch_add(1, std::memory_order_relaxed);
      shuttle(ssl, tcp, pair[1]);
      SSL_shutdown(ssl);
    } else {
      ::close(pair[0]);
    }
    if (counted_established) established_inbound.fetch_sub(1, std::memory_order_relaxed);
    if (ssl != nullptr) SSL_free(ssl);
    ::close(tcp);
    if (pair[1] >= 0) ::close(pair[1]);
    ERR_clear_error();
  }

  void run_acceptor() {
    pthread_setname_np(pthread_self(), "rw-raft-accept");
    block_sigpipe_in_this_thread();
    for (;;) {
      if (wait(listen_fd, POLLIN, Clock::time_point::max()) == Wait::kStopped) return;
      sockaddr_storage from{};
      socklen_t length = sizeof from;
      const int fd =
          ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&from), &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of descriptors: back off instead of spinning on the ready socket.
          if (wait(-1, 0, Clock::now() + std::chrono::milliseconds(100)) == Wait::kStopped) return;
        }
        continue;
      }
      {
        std::lock_guard lock(mutex);
        if (pending_inbound >= options.max_pending_inbound) {
          ::close(fd);
          refused_overload.fetch_add(1, std::memory_order_relaxed);
          continue;
        }
        ++pending_inbound;
      }
      if (!spawn([this, fd, peer = peer_text(from)]() mutable { run_inbound(fd, std::move(peer)); })) {
        std::lock_guard lock(mutex);
        --pending_inbound;
        ::close(fd);
        refused_overload.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }

  // Starts a bridge thread; joins finished ones first so they never pile up.
  bool spawn(std::function<void()> body) {
    std::lock_guard lock(mutex);
    for (auto it = workers.begin(); it != workers.end();) {
      if (it->finished.load(std::memory_order_acquire)) {
        it->thread.join();
        it = workers.erase(it);
      } else {
        ++it;
      }
    }
    Worker& worker = workers.emplace_back();
    try {
      worker.thread = std::thread([&worker, body = std::move(body)] {
        pthread_setname_np(pthread_self(), "rw-raft-bridge");
        body();
        worker.finished.store(true, std::memory_order_release);
      });
    } catch (const std::system_error&) {
      workers.pop_back();  // Out of threads: the caller refuses the connection.
      return false;
    }
    return true;
  }

  // Loop thread (or the releasing thread). Stops and joins every thread,
  // then closes what never reached libraft.
  void stop_threads() {
    if (stopped) return;
    stopped = true;
    {
      std::lock_guard lock(mutex);  // hand_over checks stopping() under it.
      const std::uint64_t one = 1;
      RW_ASSERT(::write(stop_fd, &one, sizeof one) == sizeof one);
    }
    if (acceptor.joinable()) acceptor.join();
    std::list<Worker> joining;
    {
      std::lock_guard lock(mutex);
      joining.swap(workers);
    }
    for (Worker& worker : joining) worker.thread.join();
    for (Handover& handover : handovers) {
      if (handover.fd >= 0) ::close(handover.fd);
    }
    handovers.clear();
    if (listen_fd >= 0) ::close(listen_fd);
    listen_fd = -1;
  }

  // ---- Loop thread --------------------------------------------------------

  uv_stream_t* open_pipe(int fd) {
    auto* pipe = static_cast<uv_pipe_t*>(raft_malloc(sizeof(uv_pipe_t)));
    if (pipe == nullptr) return nullptr;
    RW_ASSERT(uv_pipe_init(loop, pipe, 0) == 0);
    if (uv_pipe_open(pipe, fd) != 0) {
      // libraft frees its streams with raft_free; so does this one.
      uv_close(reinterpret_cast<uv_handle_t*>(pipe), [](uv_handle_t* handle) { raft_free(handle); });
      return nullptr;
    }
    return reinterpret_cast<uv_stream_t*>(pipe);
  }

  void deliver() {
    std::deque<Handover> ready;
    {
      std::lock_guard lock(mutex);
      ready.swap(handovers);
    }
    for (Handover& handover : ready) {
      if (closing) {  // A callback closed the transport: close() answers the rest.
        if (handover.fd >= 0) ::close(handover.fd);
        continue;
      }
      uv_stream_t* stream = nullptr;
      if (handover.fd >= 0) {
        stream = open_pipe(handover.fd);
        if (stream == nullptr) ::close(handover.fd);
      }
      if (handover.request != nullptr) {
        RW_ASSERT(connecting.erase(handover.request) == 1);
        handover.request->cb(handover.request, stream, stream != nullptr ? 0 : RAFT_NOCONNECTION);
      } else if (stream != nullptr) {
        if (accept_cb != nullptr) {
          accept_cb(raft, handover.id, handover.address.c_str(), stream);
        } else {
          uv_close(reinterpret_cast<uv_handle_t*>(stream), [](uv_handle_t* handle) { raft_free(handle); });
        }
      }
    }
  }

  static void on_wake_closed(uv_handle_t* handle) {
    auto* wake_handle = reinterpret_cast<Wake*>(handle);
    Impl* self = wake_handle->owner;
    delete wake_handle;
    if (self == nullptr) return;  // Released without a libraft close.
    self->wake = nullptr;
    // As raft_uv_tcp does: every pending connect ends RAFT_CANCELED, then
    // the transport reports closed.
    const std::set<struct raft_uv_connect*> cancelled = std::exchange(self->connecting, {});
    for (struct raft_uv_connect* request : cancelled) request->cb(request, nullptr, RAFT_CANCELED);
    if (self->close_cb != nullptr) self->close_cb(self->raft);
  }

  // ---- raft_uv_transport entry points (loop thread) ---------------------

  static Impl* of(struct raft_uv_transport* transport) { return static_cast<Impl*>(transport->impl); }

  static int init(struct raft_uv_transport* transport, raft_id id, const char* address) {
    Impl* self = of(transport);
    self->id = id;
    self->address = address;
    if (self->address.empty() || self->address.size() > kMaxPreambleAddress ||
        !parse_address(self->address)) {
      std::snprintf(transport->errmsg, RAFT_ERRMSG_BUF_SIZE, "raft tls: unusable address %s", address);
      return RAFT_INVALID;
    }
    if (!self->options.bind_address.empty() && !parse_address(self->options.bind_address)) {
      std::snprintf(transport->errmsg, RAFT_ERRMSG_BUF_SIZE, "raft tls: unusable bind address %s",
                    self->options.bind_address.c_str());
      return RAFT_INVALID;
    }
    if (self->wake == nullptr) {
      self->wake = new Wake;
      self->wake->owner = self;
      RW_ASSERT(uv_async_init(self->loop, &self->wake->async, [](uv_async_t* async) {
                  reinterpret_cast<Wake*>(async)->owner->deliver();
                }) == 0);
    }
    return 0;
  }

  static int listen(struct raft_uv_transport* transport, raft_uv_accept_cb cb) {
    Impl* self = of(transport);
    self->accept_cb = cb;
    const std::string& bind = self->options.bind_address.empty() ? self->address : self->options.bind_address;
    const std::optional<SocketAddress> local = parse_address(bind);
    RW_ASSERT(local.has_value());  // init checked it.
    const int fd = ::socket(local->storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const int one = 1;
    if (fd < 0 || ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        ::bind(fd, reinterpret_cast<const sockaddr*>(&local->storage), local->length) != 0 ||
        ::listen(fd, 64) != 0) {
      std::snprintf(transport->errmsg, RAFT_ERRMSG_BUF_SIZE, "raft tls: listen on %s: %s", bind.c_str(),
                    std::strerror(errno));
      self->log(LogLevel::kError, transport->errmsg);
      if (fd >= 0) ::close(fd);
      return RAFT_IOERR;
    }
    self->listen_fd = fd;
    try {
      self->acceptor = std::thread([self] { self->run_acceptor(); });
    } catch (const std::system_error& error) {
      std::snprintf(transport->errmsg, RAFT_ERRMSG_BUF_SIZE, "raft tls: acceptor thread: %s", error.what());
      return RAFT_IOERR;
    }
    return 0;
  }

  static int connect(struct raft_uv_transport* transport, struct raft_uv_connect* request, raft_id id,
                     const char* address, raft_uv_connect_cb cb) {
    Impl* self = of(transport);
    RW_ASSERT(!self->closing);
    request->cb = cb;
    self->connecting.insert(request);
    if (!self->spawn([self, request, id, peer_address = std::string(address)]() mutable {
          self->run_outbound(request, id, std::move(peer_address));
        })) {
      self->connecting.erase(request);
      return RAFT_NOCONNECTION;  // libraft retries after its delay.
    }
    return 0;
  }

  static void close(struct raft_uv_transport* transport, raft_uv_transport_close_cb cb) {
    Impl* self = of(transport);
    RW_ASSERT(!self->closing && self->wake != nullptr);
    self->closing = true;
    self->close_cb = cb;
    self->accept_cb = nullptr;
    self->stop_threads();
    uv_close(reinterpret_cast<uv_handle_t*>(&self->wake->async), &Impl::on_wake_closed);
  }
};

Result<std::unique_ptr<TlsTransport>, std::string> TlsTransport::create(struct raft_uv_transport* transport,
                                                                        struct uv_loop_s* loop,
                                                                        TlsTransportOptions options) {
  if (!options.server_context || !options.client_context)
    return fail(std::string("raft tls: no SSL context"));
  if (options.handshake_timeout_ms == 0 || options.max_pending_inbound == 0 ||
      options.max_established_inbound == 0) {
    return fail(std::string("raft tls: limits must be positive"));
  }
  auto impl = std::make_unique<Impl>(transport, loop, std::move(options));
  impl->stop_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (impl->stop_fd < 0) return fail(fmt::format("raft tls: eventfd: {}", std::strerror(errno)));
  void* data = transport->data;
  std::memset(transport, 0, sizeof *transport);
  transport->data = data;
  transport->impl = impl.get();
  transport->init = &Impl::init;
  transport->listen = &Impl::listen;
  transport->connect = &Impl::connect;
  transport->close = &Impl::close;
  return std::unique_ptr<TlsTransport>(new TlsTransport(std::move(impl)));
}

TlsTransport::TlsTransport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

TlsTransport::~TlsTransport() {
  Impl& self = *impl_;
  self.stop_threads();
  if (self.wake != nullptr) {
    // libraft never closed the transport (start failed): the handle closes
    // on the next loop run, without us.
    self.wake->owner = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(&self.wake->async), &Impl::on_wake_closed);
    self.wake = nullptr;
  }
  ::close(self.stop_fd);
}

TlsTransportCounters TlsTransport::counters() const {
  const Impl& self = *impl_;
  auto get = [](const std::atomic<std::uint64_t>& counter) {
    return counter.load(std::memory_order_relaxed);
  };
  return TlsTransportCounters{
      .inbound_accepted = get(self.inbound_accepted),
      .outbound_connected = get(self.outbound_connected),
      .refused_handshake = get(self.refused_handshake),
      .refused_identity = get(self.refused_identity),
      .refused_preamble = get(self.refused_preamble),
      .refused_timeout = get(self.refused_timeout),
      .refused_overload = get(self.refused_overload),
      .outbound_failed = get(self.outbound_failed),
  };
}

}  // namespace rw::consensus
