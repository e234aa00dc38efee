// The submission client's thread: epoll over the queue's eventfd, the stop
// eventfd and the one TCP connection; the Forwarder decides everything else.
// Records cross from the workers in batches (one lock per record, and one
// eventfd write per record only while the forwarder would send it at once:
// otherwise the thread takes them when it would, docs/accounting.md "Waking
// the submission thread"), and answers go back in batches per worker.
#include "gateway_shell/submission_client.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <variant>

#include "base/assert.h"
#include "config/gateway_config.h"
#include "io/clock.h"
#include "io/socket_address.h"
#include "submission/frames.h"
#include "submission/link_warning.h"

namespace rw::gateway_shell {
namespace {

constexpr std::uint64_t kRecordsToken = 1;
constexpr std::uint64_t kStopToken = 2;
constexpr std::uint64_t kConnectionToken = 3;
// How often the connection's FrameReader may give back a burst's pages.
constexpr Duration kReaderReleaseInterval = Duration::seconds(1);

// Bytes read per recv call at most; the FrameReader bounds what it buffers.
constexpr std::size_t kReadChunk = 256 * 1024;

void wake(int fd) {
  const std::uint64_t one = 1;
  // A full eventfd counter (never in practice) still leaves it readable.
  (void)!write(fd, &one, sizeof(one));
}

void drain(int fd) {
  std::uint64_t value = 0;
  (void)!read(fd, &value, sizeof(value));
}

}  // namespace

struct SubmissionClient::Connection {
  submission::ConnectionId id = 0;
  io::FileDescriptor fd;
  std::unique_ptr<io::TlsStream> tls;  // Null in plaintext mode; freed before fd.
  std::uint64_t member_id = 0;         // Whom the certificate must name.
  bool connecting = true;              // Non-blocking connect (and TLS handshake) not yet finished.
  std::vector<std::uint8_t> output;
  std::size_t output_offset = 0;
  submission::FrameReader reader;
  std::uint32_t interest = 0;  // The epoll events registered now.
};

SubmissionClient::SubmissionClient(SubmissionClientOptions options) : options_(std::move(options)) {}

SubmissionClient::~SubmissionClient() { stop(); }

Result<std::unique_ptr<SubmissionClient>, io::SystemError> SubmissionClient::create(
    SubmissionClientOptions options) {
  RW_ASSERT(!options.forwarder.members.empty());
  std::unique_ptr<SubmissionClient> client(new SubmissionClient(std::move(options)));
  client->epoll_ = io::FileDescriptor(epoll_create1(EPOLL_CLOEXEC));
  if (!client->epoll_.valid()) return fail(io::last_system_error("epoll_create1"));
  client->records_event_ = io::FileDescriptor(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  client->stop_event_ = io::FileDescriptor(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!client->records_event_.valid() || !client->stop_event_.valid())
    return fail(io::last_system_error("eventfd"));
  for (auto [fd, token] : {std::pair{client->records_event_.get(), kRecordsToken},
                           std::pair{client->stop_event_.get(), kStopToken}}) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = token;
    if (epoll_ctl(client->epoll_.get(), EPOLL_CTL_ADD, fd, &event) != 0) {
      return fail(io::last_system_error("epoll_ctl"));
    }
  }
  client->queued_.reserve(client->options_.queue_records_max);
  client->taken_.reserve(client->options_.queue_records_max);
  client->forwarder_ = std::make_unique<submission::Forwarder>(client->options_.forwarder, client->random_);
  {
    std::lock_guard lock(client->status_mutex_);
    client->status_ = client->forwarder_->status();
  }
  return client;
}

bool SubmissionClient::submit(const accounting::RecordKey& key, Bytes record, gateway::Ticket ticket) {
  bool wake_thread = false;
  {
    std::lock_guard lock(queue_mutex_);
    if (queued_.size() >= options_.queue_records_max ||
        queued_bytes_.size() + record.size() > options_.queue_bytes_max) {
      queue_refused_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    const bool was_empty = queued_.empty() && queued_queries_.empty();
    const std::size_t bytes_before = queued_bytes_.size();
    QueuedRecord& queued = queued_.emplace_back();
    queued.key = key.bytes;
    queued.ticket = ticket;
    queued.offset = queued_bytes_.size();
    queued.length = record.size();
    queued_bytes_.insert(queued_bytes_.end(), record.begin(), record.end());
    // Only the first record wakes the thread, and only when the forwarder
    // would send it at once; later ones ride along. A batch's worth wakes
    // it in any case, since the forwarder sends a full batch at once.
    const std::size_t batch_bytes = options_.forwarder.batch_bytes_max;
    wake_thread = (was_empty && wake_for_records_) ||
                  queued_.size() == options_.forwarder.batch_records_max ||
                  (bytes_before < batch_bytes && queued_bytes_.size() >= batch_bytes);
  }
  if (wake_thread) {
    record_wakeups_.fetch_add(1, std::memory_order_relaxed);
    wake(records_event_.get());
  }
  return true;
}

bool SubmissionClient::count_sessions(std::string_view user_name, gateway::Ticket ticket) {
  if (user_name.empty() || user_name.size() > submission::kUserNameBytesMax) return false;
  bool was_empty = false;
  {
    std::lock_guard lock(queue_mutex_);
    if (queued_queries_.size() + queued_.size() >= options_.queue_records_max) {
      queue_refused_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    // A query goes at once (an Access-Request waits on it), whatever the
    // records wait for.
    was_empty = queued_queries_.empty();
    QueuedQuery& query = queued_queries_.emplace_back();
    query.ticket = ticket;
    query.user_name_length = user_name.size();
    std::copy(user_name.begin(), user_name.end(), query.user_name.begin());
  }
  if (was_empty) wake(records_event_.get());
  return true;
}

Result<void, io::SystemError> SubmissionClient::start(AnswerRouter router) {
  RW_ASSERT(!thread_.joinable());
  router_ = std::move(router);
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error& error) {
    return fail(io::SystemError{"pthread_create", error.code().value()});
  }
  return {};
}

void SubmissionClient::stop() {
  if (!thread_.joinable()) return;
  wake(stop_event_.get());
  thread_.join();
}

submission::ForwarderStatus SubmissionClient::status() const {
  std::lock_guard lock(status_mutex_);
  return status_;
}

void SubmissionClient::run() {
  pthread_setname_np(pthread_self(), "rw-submission");
  apply(io::monotonic_now(), forwarder_->start(io::monotonic_now()));
  constexpr int kEventsMax = 8;
  epoll_event events[kEventsMax];
  bool take_at_once = false;
  for (;;) {
    Instant now = io::monotonic_now();
    // Wake at the forwarder's next deadline, when the records queued
    // without a wake-up are due, and at least every status_interval so that
    // the published status stays fresh.
    Instant until = now + options_.status_interval;
    if (auto deadline = forwarder_->next_deadline()) until = std::min(until, *deadline);
    if (records_due_) until = std::min(until, *records_due_);
    if (take_at_once) until = now;
    const Duration wait = until - now;
    const int timeout_ms = wait.ns <= 0 ? 0 : static_cast<int>((wait.ns + 999'999) / 1'000'000);
    const int ready = epoll_wait(epoll_.get(), events, kEventsMax, timeout_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      die(io::last_system_error("epoll_wait"));
    }
    now = io::monotonic_now();
    bool records_woke = take_at_once || (records_due_ && now >= *records_due_);
    for (int i = 0; i < ready; ++i) {
      switch (events[i].data.u64) {
        case kStopToken:
          close_connection();
          publish_status(now, /*force=*/true);
          return;
        case kRecordsToken:
          drain(records_event_.get());
          records_woke = true;
          break;
        case kConnectionToken:
          if (!connection_) break;
          if ((events[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) != 0) on_writable(now);
          if (connection_ && (events[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) != 0) on_readable(now);
          break;
        default:
          break;
      }
    }
    // Records are taken when one woke the thread, or when those queued
    // without a wake-up are due; not at every Committed or Pong, so that
    // they reach the forwarder together when it sends them at once.
    if (records_woke) take_records(now);
    if (auto deadline = forwarder_->next_deadline(); deadline && *deadline <= now) {
      apply(now, forwarder_->on_tick(now));
    }
    take_at_once = settle_record_wakeups(now);
    route_answers();
    // A burst's pages of the 1 MiB reader go back once it is over.
    if (connection_ && now - reader_released_at_ >= kReaderReleaseInterval) {
      reader_released_at_ = now;
      (void)connection_->reader.release_idle();
    }
    if (forwarder_->counters().failovers != failovers_logged_) log_failover();
    publish_status(now, /*force=*/false);
  }
}

void SubmissionClient::log_failover() {
  failovers_logged_ = forwarder_->counters().failovers;
  const std::optional<submission::Failover>& failover = forwarder_->last_failover();
  if (!failover) return;
  // Where a NAS's wait went (docs/consensus.md "Failover under load"):
  // finding the leader, then its barrier and the first commit.
  spdlog::warn(
      "submission: leader {} lost; {} committed again after {} ms (leading after {} ms, {} connection "
      "attempt(s)); {} record(s) in flight re-submitted, {} queued meanwhile",
      failover->from, failover->to, failover->committed_after.to_ms(), failover->leader_after.to_ms(),
      failover->attempts, failover->records_in_flight, failover->records_queued);
}

void SubmissionClient::take_records(Instant now) {
  {
    std::lock_guard lock(queue_mutex_);
    if (queued_.empty() && queued_queries_.empty()) return;
    taken_.swap(queued_);
    taken_bytes_.swap(queued_bytes_);
    taken_queries_.swap(queued_queries_);
  }
  for (const QueuedQuery& query : taken_queries_) {
    apply(now, forwarder_->on_session_query(
                   now, std::string_view(query.user_name.data(), query.user_name_length), query.ticket));
  }
  taken_queries_.clear();
  for (const QueuedRecord& record : taken_) {
    const submission::Admission admission = forwarder_->admit_record(
        now, record.key, Bytes(taken_bytes_.data() + record.offset, record.length), record.ticket);
    if (!submission::admitted(admission)) {
      answers_by_worker_.resize(
          std::max<std::size_t>(answers_by_worker_.size(), gateway::ticket_worker(record.ticket) + 1u));
      answers_by_worker_[gateway::ticket_worker(record.ticket)].push_back(
          AnswerNotice{.ticket = record.ticket, .committed = false});
    }
  }
  // Taken together, sent together.
  if (!taken_.empty()) apply(now, forwarder_->send_admitted(now));
  taken_.clear();
  taken_bytes_.clear();
}

bool SubmissionClient::settle_record_wakeups(Instant now) {
  records_due_ = forwarder_->records_wait_until(now);
  std::lock_guard lock(queue_mutex_);
  wake_for_records_ = !records_due_;
  // A record queued while submit() was told not to wake the thread, and
  // due now: take it without waiting for a wake-up that will not come.
  return wake_for_records_ && !queued_.empty();
}

void SubmissionClient::apply(Instant now, submission::Actions actions) {
  for (submission::Action& action : actions) {
    if (auto* connect_action = std::get_if<submission::Connect>(&action)) {
      connect(now, *connect_action);
    } else if (auto* send = std::get_if<submission::Send>(&action)) {
      if (!connection_ || connection_->id != send->connection) continue;
      connection_->output.insert(connection_->output.end(), send->bytes.begin(), send->bytes.end());
      if (!connection_->connecting && !flush_output()) {
        lose_connection(now);
        continue;
      }
      update_interest();
    } else if (auto* close = std::get_if<submission::Close>(&action)) {
      if (connection_ && connection_->id == close->connection) close_connection();
    } else if (auto* answer = std::get_if<submission::Answer>(&action)) {
      const std::size_t worker = gateway::ticket_worker(answer->waiter);
      if (answers_by_worker_.size() <= worker) answers_by_worker_.resize(worker + 1);
      answers_by_worker_[worker].push_back(AnswerNotice{.ticket = answer->waiter, .committed = true});
    } else if (auto* count = std::get_if<submission::SessionCount>(&action)) {
      const std::size_t worker = gateway::ticket_worker(count->waiter);
      if (answers_by_worker_.size() <= worker) answers_by_worker_.resize(worker + 1);
      answers_by_worker_[worker].push_back(AnswerNotice{.ticket = count->waiter,
                                                        .kind = gateway::AnswerKind::kSessionCount,
                                                        .open_sessions = count->open_sessions});
    }
  }
}

void SubmissionClient::connect(Instant now, const submission::Connect& connect) {
  close_connection();
  auto connection = std::make_unique<Connection>();
  connection->id = connect.connection;
  if (options_.tls) {
    // The forwarder only connects to configured addresses (redirects to
    // others are ignored), so every address has an id here.
    auto known = options_.member_ids.find(connect.address);
    if (known == options_.member_ids.end()) {
      tls_refused_.fetch_add(1, std::memory_order_relaxed);
      apply(now, forwarder_->on_connection_lost(now, connect.connection));
      return;
    }
    connection->member_id = known->second;
  }
  std::optional<config::HostPort> address = config::parse_host_port(connect.address);
  if (address) {
    connection->fd = io::FileDescriptor(
        ::socket(address->is_v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  }
  if (!address || !connection->fd.valid()) {
    // An address a member announced that cannot be used, or no socket: the
    // forwarder backs off and tries the next member.
    apply(now, forwarder_->on_connection_lost(now, connect.connection));
    return;
  }
  const int one = 1;
  // Submits are latency-bound: the forwarder already batches.
  (void)setsockopt(connection->fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  sockaddr_storage storage{};
  const gateway::Endpoint endpoint{.address = address->bytes, .is_v6 = address->is_v6, .port = address->port};
  const socklen_t length = io::to_sockaddr(endpoint, storage);
  const int result = ::connect(connection->fd.get(), reinterpret_cast<const sockaddr*>(&storage), length);
  if (result != 0 && errno != EINPROGRESS) {
    apply(now, forwarder_->on_connection_lost(now, connect.connection));
    return;
  }
  if (options_.tls) {
    auto stream = io::TlsStream::attach(options_.tls, connection->fd.get(), io::TlsRole::kClient);
    if (!stream) {
      spdlog::warn("submission to {}: {}", connect.address, stream.error().to_string());
      apply(now, forwarder_->on_connection_lost(now, connect.connection));
      return;
    }
    connection->tls = std::move(*stream);
  }
  connection_ = std::move(connection);
  epoll_event event{};
  event.events = EPOLLIN | EPOLLOUT;
  event.data.u64 = kConnectionToken;
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, connection_->fd.get(), &event) != 0) {
    die(io::last_system_error("epoll_ctl"));
  }
  connection_->interest = event.events;
  // Connected or not, the first writable event goes through on_writable.
}

void SubmissionClient::close_connection() {
  if (!connection_) return;
  // Closing the descriptor removes it from the epoll set.
  connection_.reset();
}

void SubmissionClient::lose_connection(Instant now) {
  if (!connection_) return;
  const submission::ConnectionId id = connection_->id;
  close_connection();
  apply(now, forwarder_->on_connection_lost(now, id));
}

void SubmissionClient::on_writable(Instant now) {
  if (connection_->connecting) {
    if (!connection_->tls || !connection_->tls->handshake_done()) {
      int error = 0;
      socklen_t length = sizeof(error);
      if (getsockopt(connection_->fd.get(), SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) {
        lose_connection(now);
        return;
      }
    }
    if (!handshake(now)) return;
    if (connection_->connecting) return;  // Handshake still under way.
  }
  if (!flush_output()) {
    lose_connection(now);
    return;
  }
  update_interest();
}

bool SubmissionClient::handshake(Instant now) {
  Connection& connection = *connection_;
  if (connection.tls) {
    const io::TlsStream::Status status = connection.tls->handshake();
    if (status == io::TlsStream::Status::kWantRead || status == io::TlsStream::Status::kWantWrite) {
      set_interest(status == io::TlsStream::Status::kWantWrite);
      return true;
    }
    const std::optional<std::string> peer =
        status == io::TlsStream::Status::kDone ? io::peer_common_name(connection.tls->ssl()) : std::nullopt;
    const std::string expected = io::member_common_name(connection.member_id);
    if (!peer || *peer != expected) {
      tls_refused_.fetch_add(1, std::memory_order_relaxed);
      spdlog::warn("submission connection refused: {}",
                   status != io::TlsStream::Status::kDone
                       ? connection.tls->error()
                       : fmt::format("the member's certificate names '{}', expected '{}'", peer.value_or(""),
                                     expected));
      lose_connection(now);
      return false;
    }
  }
  connection.connecting = false;
  const submission::ConnectionId id = connection.id;
  apply(now, forwarder_->on_connected(now, id));
  return connection_ && connection_->id == id;
}

bool SubmissionClient::flush_output() {
  Connection& connection = *connection_;
  while (connection.output_offset < connection.output.size()) {
    const io::TlsStream::Io sent = io::send_some(connection.tls.get(), connection.fd.get(),
                                                 Bytes(connection.output.data() + connection.output_offset,
                                                       connection.output.size() - connection.output_offset));
    if (sent.status == io::TlsStream::Status::kWantWrite || sent.status == io::TlsStream::Status::kWantRead) {
      return true;
    }
    if (sent.status != io::TlsStream::Status::kDone) return false;
    connection.output_offset += sent.bytes;
  }
  connection.output.clear();
  connection.output_offset = 0;
  return true;
}

void SubmissionClient::update_interest() {
  const Connection& connection = *connection_;
  set_interest(connection.connecting || connection.output_offset < connection.output.size());
}

void SubmissionClient::set_interest(bool want_write) {
  Connection& connection = *connection_;
  const std::uint32_t interest = EPOLLIN | (want_write ? EPOLLOUT : 0u);
  if (interest == connection.interest) return;
  epoll_event event{};
  event.events = interest;
  event.data.u64 = kConnectionToken;
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, connection.fd.get(), &event) != 0) {
    die(io::last_system_error("epoll_ctl"));
  }
  connection.interest = interest;
}

void SubmissionClient::on_readable(Instant now) {
  if (connection_->connecting) {
    // TLS: the handshake's records arrive here.
    if (connection_->tls && !handshake(now)) return;
    if (!connection_ || connection_->connecting) return;
  }
  const submission::ConnectionId id = connection_->id;
  for (;;) {
    MutableBytes space = connection_->reader.writable();
    if (space.empty()) {
      // A frame longer than the reader's buffer cannot happen: next() refuses
      // its length prefix first. Treat a full buffer as a broken peer.
      lose_connection(now);
      return;
    }
    const io::TlsStream::Io received = io::receive_some(connection_->tls.get(), connection_->fd.get(),
                                                        space.first(std::min(space.size(), kReadChunk)));
    if (received.status == io::TlsStream::Status::kWantRead ||
        received.status == io::TlsStream::Status::kWantWrite) {
      return;
    }
    if (received.status != io::TlsStream::Status::kDone || received.bytes == 0) {
      // TLS: a member that refused our certificate shows up here (TLS 1.3
      // finishes the client's handshake before the server checks it).
      if (connection_->tls && received.status == io::TlsStream::Status::kFailed) {
        spdlog::warn("submission connection lost: {}", connection_->tls->error());
      }
      lose_connection(now);
      return;
    }
    connection_->reader.commit(received.bytes);
    for (;;) {
      auto frame = connection_->reader.next();
      if (!frame) {
        lose_connection(now);
        return;
      }
      if (!*frame) break;
      apply(now, forwarder_->on_frame(now, id, **frame));
      // The forwarder may have closed or replaced the connection.
      if (!connection_ || connection_->id != id) return;
    }
  }
}

void SubmissionClient::route_answers() {
  for (std::size_t worker = 0; worker < answers_by_worker_.size(); ++worker) {
    std::vector<AnswerNotice>& answers = answers_by_worker_[worker];
    if (answers.empty()) continue;
    if (router_) router_(static_cast<int>(worker), answers);
    answers.clear();
  }
}

void SubmissionClient::publish_status(Instant now, bool force) {
  if (!force && now - status_published_at_ < options_.status_interval) return;
  status_published_at_ = now;
  submission::ForwarderStatus status = forwarder_->status();
  // Often enough to be seen during a partition, rarely enough that a long
  // one does not flood the log.
  constexpr Duration kLinkWarningInterval = Duration::seconds(5);
  if (!warned_at_ || now - *warned_at_ >= kLinkWarningInterval) {
    if (std::optional<std::string> warning = submission::link_warning(warned_counters_, status)) {
      spdlog::warn("{}", *warning);
      warned_counters_ = status.counters;
      warned_at_ = now;
    }
  }
  std::lock_guard lock(status_mutex_);
  status_ = std::move(status);
}

}  // namespace rw::gateway_shell
