// The submission listener (submission_server.h): level-triggered epoll over
// the listener, an eventfd and the connections, all on one thread. With TLS
// every read and write goes through the connection's TlsStream, and a
// periodic sweep closes connections past their Hello or idle deadline.
#include "member_shell/submission_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "base/assert.h"
#include "io/clock.h"
#include "io/socket_address.h"
#include "submission/frames.h"

namespace rw::member_shell {
namespace {

constexpr std::uint64_t kListenerTag = 1;
constexpr std::uint64_t kWakeTag = 2;
// Completions run per wake-up before epoll is polled again, so that reads
// are not starved by a long burst of commits.
constexpr std::size_t kCompletionsPerTurn = 4096;
// How often at most the Hello and idle deadlines are checked.
constexpr Duration kSweepIntervalMax = Duration::milliseconds(250);
// A connection's write buffer larger than this once drained is freed: it
// grew behind a gateway slow to read (up to write_bytes_max) and should not
// stay at that size on every connection (docs/limits.md "Member memory budget").
constexpr std::size_t kWriteBufferKeptBytes = 64 * 1024;

Result<io::FileDescriptor, io::SystemError> listen_tcp(const std::string& host, std::uint16_t port,
                                                       std::uint16_t& bound) {
  gateway::Endpoint local{.port = port};
  if (::inet_pton(AF_INET, host.c_str(), local.address.data()) != 1) {
    if (::inet_pton(AF_INET6, host.c_str(), local.address.data()) != 1) {
      return fail(io::SystemError{"submission listen address " + host, EINVAL});
    }
    local.is_v6 = true;
  }
  const std::string where = io::to_string(local);
  sockaddr_storage address{};
  const socklen_t length = io::to_sockaddr(local, address);
  io::FileDescriptor fd(
      ::socket(local.is_v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return fail(io::last_system_error("socket submission " + where));
  int on = 1;
  (void)::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  // `::` listens on IPv6 only, as the gateway's listen addresses do.
  if (local.is_v6) (void)::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on));
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0) {
    return fail(io::last_system_error("bind submission " + where));
  }
  if (::listen(fd.get(), 64) != 0) return fail(io::last_system_error("listen submission " + where));
  socklen_t bound_length = sizeof(address);
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &bound_length) != 0) {
    return fail(io::last_system_error("getsockname submission " + where));
  }
  bound = io::to_endpoint(address).port;
  return fd;
}

void watch(int epoll_fd, int op, int fd, std::uint32_t events, std::uint64_t tag) {
  epoll_event event{};
  event.events = events;
  event.data.u64 = tag;
  if (::epoll_ctl(epoll_fd, op, fd, &event) != 0) die(io::last_system_error("epoll_ctl submission"));
}

}  // namespace

struct SubmissionServer::Connection {
  Connection(std::uint64_t connection_id, io::FileDescriptor socket, const SubmissionServerOptions& options,
             Instant now)
      : id(connection_id),
        fd(std::move(socket)),
        session(options.member_id, options.book),
        accepted_at(now),
        last_received(now) {}

  // Destroyed before `fd` (members are destroyed in reverse order).
  std::uint64_t id;
  io::FileDescriptor fd;
  std::unique_ptr<io::TlsStream> tls{};  // Null in plaintext mode.
  submission::FrameReader reader{};
  member_shell::SubmissionSession session;
  std::vector<std::uint8_t> out{};  // Bytes not yet sent, from out_sent on.
  std::size_t out_sent = 0;
  bool watching_writes = false;
  Instant accepted_at;
  Instant last_received;
  std::size_t outstanding = 0;  // Submits handed to the Node, not yet answered.
};

SubmissionServer::SubmissionServer(SubmissionServerOptions options) : options_(std::move(options)) {}

Result<std::unique_ptr<SubmissionServer>, io::SystemError> SubmissionServer::bind(
    SubmissionServerOptions options) {
  std::unique_ptr<SubmissionServer> server(new SubmissionServer(std::move(options)));
  auto listener = listen_tcp(server->options_.host, server->options_.port, server->port_);
  if (!listener) return fail(listener.error());
  server->listener_ = std::move(*listener);
  server->epoll_ = io::FileDescriptor(::epoll_create1(EPOLL_CLOEXEC));
  if (!server->epoll_.valid()) return fail(io::last_system_error("epoll_create1 submission"));
  server->wake_ = io::FileDescriptor(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!server->wake_.valid()) return fail(io::last_system_error("eventfd submission"));
  watch(server->epoll_.get(), EPOLL_CTL_ADD, server->listener_.get(), EPOLLIN, kListenerTag);
  watch(server->epoll_.get(), EPOLL_CTL_ADD, server->wake_.get(), EPOLLIN, kWakeTag);
  return server;
}

SubmissionServer::~SubmissionServer() { stop(); }

void SubmissionServer::wake() {
  const std::uint64_t one = 1;
  // EAGAIN only when the counter is near overflow: it is readable anyway.
  (void)!::write(wake_.get(), &one, sizeof(one));
}

void SubmissionServer::start(consensus::Node& node, const member_shell::LedgerState& ledger) {
  RW_ASSERT(!thread_.joinable());
  node_ = &node;
  ledger_ = &ledger;
  thread_ = std::thread([this] { run(); });
}

void SubmissionServer::stop() {
  if (!thread_.joinable()) return;
  stopping_.store(true, std::memory_order_release);
  wake();
  thread_.join();
  // Completions still queued find no connection and are dropped: the
  // gateways re-submit what was not answered.
  while (node_->deliver_completions() > 0) {
  }
  listener_.reset();
}

void SubmissionServer::run() {
  pthread_setname_np(pthread_self(), "rw-submit-srv");
  std::array<epoll_event, 64> events{};
  const Duration sweep_interval =
      std::min({kSweepIntervalMax, options_.hello_timeout, options_.idle_timeout});
  const int timeout_ms = static_cast<int>(std::max<std::int64_t>(1, sweep_interval.ns / 1'000'000));
  while (!stopping_.load(std::memory_order_acquire)) {
    const int ready = ::epoll_wait(epoll_.get(), events.data(), static_cast<int>(events.size()), timeout_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      die(io::last_system_error("epoll_wait submission"));
    }
    for (int i = 0; i < ready; ++i) {
      const std::uint64_t tag = events[static_cast<std::size_t>(i)].data.u64;
      const std::uint32_t flags = events[static_cast<std::size_t>(i)].events;
      if (tag == kListenerTag) {
        on_listener_ready();
      } else if (tag == kWakeTag) {
        std::uint64_t count = 0;
        (void)!::read(wake_.get(), &count, sizeof(count));
        if (node_->deliver_completions(kCompletionsPerTurn) == kCompletionsPerTurn) wake();
      } else if (auto found = connections_.find(tag); found != connections_.end()) {
        Connection& connection = *found->second;
        if (connection.tls && !connection.tls->handshake_done()) {
          (void)handshake(connection);
          continue;
        }
        if ((flags & EPOLLOUT) != 0 && !flush(connection)) continue;
        if ((flags & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0) on_readable(connection);
      }
    }
    const Instant now = io::monotonic_now();
    if (now - last_sweep_ >= sweep_interval) sweep(now);
  }
  while (!connections_.empty()) close(connections_.begin()->first);
}

void SubmissionServer::on_listener_ready() {
  for (;;) {
    io::FileDescriptor socket(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!socket.valid()) return;  // EAGAIN, or ECONNABORTED/EMFILE: try again on the next event.
    if (connections_.size() >= options_.connections_max) {
      counters_.connections_refused.fetch_add(1, std::memory_order_relaxed);
      continue;  // Closed by the destructor.
    }
    // Answers are small and latency is the NAS's wait: no Nagle delay.
    int on = 1;
    (void)::setsockopt(socket.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
    const std::uint64_t id = next_connection_id_++;
    auto connection = std::make_unique<Connection>(id, std::move(socket), options_, io::monotonic_now());
    if (options_.tls) {
      auto stream = io::TlsStream::attach(options_.tls, connection->fd.get(), io::TlsRole::kServer);
      if (!stream) {
        spdlog::warn("submission connection refused: {}", stream.error().to_string());
        counters_.tls_refused.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      connection->tls = std::move(*stream);
    }
    watch(epoll_.get(), EPOLL_CTL_ADD, connection->fd.get(), EPOLLIN, id);
    connections_.emplace(id, std::move(connection));
    counters_.connections_accepted.fetch_add(1, std::memory_order_relaxed);
    open_connections_.store(connections_.size(), std::memory_order_relaxed);
  }
}

member_shell::MemberView SubmissionServer::view() const {
  const consensus::NodeStatus status = node_->status();
  return member_shell::MemberView{.role = status.role,
                                  .ready_for_work = status.ready_for_work,
                                  .leader_id = status.leader_id,
                                  .ledger_accepting = ledger_->accepting(),
                                  .ledger = ledger_,
                                  .now_unix_ms = io::unix_now_ms()};
}

bool SubmissionServer::handshake(Connection& connection) {
  const io::TlsStream::Status status = connection.tls->handshake();
  if (status == io::TlsStream::Status::kWantRead || status == io::TlsStream::Status::kWantWrite) {
    watch_writes(connection, status == io::TlsStream::Status::kWantWrite);
    return true;
  }
  std::optional<std::string> peer;
  if (status == io::TlsStream::Status::kDone) peer = io::peer_common_name(connection.tls->ssl());
  // Only gateways submit: a member's (or any other) certificate of the CA is refused too.
  if (!peer || !io::is_gateway_common_name(*peer)) {
    counters_.tls_refused.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("submission connection {} refused: {}", connection.id,
                 status != io::TlsStream::Status::kDone ? connection.tls->error()
                 : peer ? "certificate CN '" + *peer + "' is not gateway-<name>"
                        : std::string("no verified certificate CN"));
    close(connection.id);
    return false;
  }
  spdlog::info("submission connection {} from {}", connection.id, *peer);
  watch_writes(connection, !connection.out.empty());
  // Application data may already sit in the TLS buffers.
  on_readable(connection);
  return connections_.contains(connection.id);
}

void SubmissionServer::on_readable(Connection& connection) {
  const std::uint64_t id = connection.id;
  // Answers waiting on a TLS write that needed a read first.
  if (!connection.out.empty() && !flush(connection)) return;
  for (;;) {
    const io::TlsStream::Io got =
        io::receive_some(connection.tls.get(), connection.fd.get(), connection.reader.writable());
    if (got.status == io::TlsStream::Status::kWantRead) return;
    if (got.status == io::TlsStream::Status::kWantWrite) {
      watch_writes(connection, true);
      return;
    }
    if (got.status != io::TlsStream::Status::kDone || got.bytes == 0) {
      close(id);  // The peer closed or reset: whatever it had in flight it re-submits.
      return;
    }
    connection.last_received = io::monotonic_now();
    connection.reader.commit(got.bytes);
    // Every whole frame now, so that the buffer keeps room for the next read:
    // one read is at most one maximal frame, so this work is bounded.
    for (;;) {
      auto frame = connection.reader.next();
      if (!frame) {
        counters_.protocol_closes[static_cast<std::size_t>(member_shell::CloseReason::kMalformedFrame)]
            .fetch_add(1, std::memory_order_relaxed);
        close(id);
        return;
      }
      if (!*frame) break;
      if (!carry_out(connection, connection.session.on_frame(**frame, view()))) return;
    }
    // Plaintext: level-triggered epoll reports the rest. TLS: decrypted
    // bytes buffered in the SSL would not wake epoll again, so read on.
    if (!connection.tls) return;
  }
}

void SubmissionServer::sweep(Instant now) {
  last_sweep_ = now;
  std::vector<std::uint64_t> expired;
  for (const auto& [id, connection] : connections_) {
    // A burst's pages of the 1 MiB reader go back once it is over.
    (void)connection->reader.release_idle();
    if (!connection->session.hello_received()) {
      if (now - connection->accepted_at >= options_.hello_timeout) {
        counters_.hello_timeouts.fetch_add(1, std::memory_order_relaxed);
        expired.push_back(id);
      }
    } else if (connection->outstanding == 0 && now - connection->last_received >= options_.idle_timeout) {
      counters_.idle_timeouts.fetch_add(1, std::memory_order_relaxed);
      expired.push_back(id);
    }
  }
  for (std::uint64_t id : expired) {
    spdlog::info("submission connection {} closed: no Hello or silent past its deadline", id);
    close(id);
  }
}

bool SubmissionServer::carry_out(Connection& connection, member_shell::SessionAnswer answer) {
  const std::uint64_t id = connection.id;
  if (!answer.reply.empty() && !send(connection, answer.reply)) return false;
  if (answer.entry) {
    counters_.submits.fetch_add(1, std::memory_order_relaxed);
    const std::uint64_t request_id = answer.request_id;
    const std::size_t bytes = answer.entry->size();
    // docs/limits.md: per connection in count, across connections in bytes.
    if (connection.outstanding >= options_.outstanding_submits_max ||
        pending_bytes_.load(std::memory_order_relaxed) + bytes > options_.pending_entry_bytes_max) {
      counters_.submits_over_limit.fetch_add(1, std::memory_order_relaxed);
      return carry_out(connection, connection.session.on_submit_refused(
                                       request_id, consensus::Node::SubmitStatus::kQueueFull));
    }
    counters_.records.fetch_add(answer.records, std::memory_order_relaxed);
    pending_.fetch_add(1, std::memory_order_relaxed);
    pending_bytes_.fetch_add(bytes, std::memory_order_relaxed);
    ++connection.outstanding;
    // The completion runs on this thread too (deliver_completions), so the
    // histograms keep one writer.
    const Instant submitted = io::monotonic_now();
    const consensus::Node::SubmitStatus status = node_->submit(
        std::move(*answer.entry),
        [this, id, request_id, bytes, submitted](const consensus::Outcome& outcome) {
          pending_.fetch_sub(1, std::memory_order_relaxed);
          pending_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
          if (outcome.kind == consensus::OutcomeKind::kCommitted) {
            commit_latency_.observe(static_cast<std::uint64_t>((io::monotonic_now() - submitted).ns / 1000));
          }
          on_outcome(id, request_id, outcome);
        });
    if (status != consensus::Node::SubmitStatus::kQueued) {
      pending_.fetch_sub(1, std::memory_order_relaxed);
      pending_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
      --connection.outstanding;
      return carry_out(connection, connection.session.on_submit_refused(request_id, status));
    }
    batch_records_.observe(answer.records);
  }
  if (answer.close) {
    counters_.protocol_closes[static_cast<std::size_t>(*answer.close)].fetch_add(1,
                                                                                 std::memory_order_relaxed);
    spdlog::info("submission connection {} closed: {}", id, member_shell::to_string(*answer.close));
    close(id);
    return false;
  }
  return true;
}

void SubmissionServer::on_outcome(std::uint64_t connection_id, std::uint64_t request_id,
                                  const consensus::Outcome& outcome) {
  auto found = connections_.find(connection_id);
  if (found == connections_.end()) return;  // Closed meanwhile: the gateway re-submits.
  Connection& connection = *found->second;
  --connection.outstanding;
  (void)carry_out(connection, connection.session.on_outcome(request_id, outcome));
}

void SubmissionServer::count_reply(const std::vector<std::uint8_t>& frame) {
  const auto type = static_cast<submission::FrameType>(frame[submission::kLengthPrefixBytes]);
  if (type == submission::FrameType::kCommitted) counters_.committed.fetch_add(1, std::memory_order_relaxed);
  if (type == submission::FrameType::kNotLeader) counters_.not_leader.fetch_add(1, std::memory_order_relaxed);
  if (type == submission::FrameType::kBusy) counters_.busy.fetch_add(1, std::memory_order_relaxed);
  if (type == submission::FrameType::kSessionCountAnswer) {
    counters_.session_counts.fetch_add(1, std::memory_order_relaxed);
  }
}

bool SubmissionServer::send(Connection& connection, const std::vector<std::uint8_t>& frame) {
  count_reply(frame);
  if (connection.out.size() - connection.out_sent + frame.size() > options_.write_bytes_max) {
    counters_.write_overflows.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("submission connection {} closed: the gateway does not read its answers", connection.id);
    close(connection.id);
    return false;
  }
  connection.out.insert(connection.out.end(), frame.begin(), frame.end());
  return flush(connection);
}

bool SubmissionServer::flush(Connection& connection) {
  // Before the handshake finished, answers wait (there are none: nothing was read).
  if (connection.tls && !connection.tls->handshake_done()) return true;
  bool want_writes = false;
  while (connection.out_sent < connection.out.size()) {
    const io::TlsStream::Io put = io::send_some(
        connection.tls.get(), connection.fd.get(),
        Bytes(connection.out.data() + connection.out_sent, connection.out.size() - connection.out_sent));
    if (put.status == io::TlsStream::Status::kWantWrite) {
      want_writes = true;
      break;
    }
    if (put.status == io::TlsStream::Status::kWantRead) break;  // A TLS key update: EPOLLIN resumes it.
    if (put.status != io::TlsStream::Status::kDone) {
      close(connection.id);
      return false;
    }
    connection.out_sent += put.bytes;
  }
  if (connection.out_sent == connection.out.size()) {
    connection.out.clear();
    connection.out_sent = 0;
    if (connection.out.capacity() > kWriteBufferKeptBytes) std::vector<std::uint8_t>().swap(connection.out);
  }
  watch_writes(connection, want_writes);
  return true;
}

void SubmissionServer::watch_writes(Connection& connection, bool want_writes) {
  if (want_writes == connection.watching_writes) return;
  watch(epoll_.get(), EPOLL_CTL_MOD, connection.fd.get(), EPOLLIN | (want_writes ? EPOLLOUT : 0u),
        connection.id);
  connection.watching_writes = want_writes;
}

void SubmissionServer::close(std::uint64_t connection_id) {
  auto found = connections_.find(connection_id);
  if (found == connections_.end()) return;
  (void)::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, found->second->fd.get(), nullptr);
  connections_.erase(found);
  counters_.connections_closed.fetch_add(1, std::memory_order_relaxed);
  open_connections_.store(connections_.size(), std::memory_order_relaxed);
}

}  // namespace rw::member_shell
