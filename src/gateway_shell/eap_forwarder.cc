// EapForwarder: the forwarding listener's thread (docs/design.md "EAP
// across several gateways").
#include "gateway_shell/eap_forwarder.h"

#include <netinet/in.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>

#include "base/assert.h"
#include "io/clock.h"
#include "io/socket_address.h"
#include "io/text_file.h"

namespace rw::gateway_shell {
namespace {

constexpr std::uint64_t kStopToken = 1;
constexpr std::uint64_t kOutgoingToken = 2;
constexpr std::uint64_t kAnswersToken = 3;
constexpr std::uint64_t kSocketToken = 4;
// Datagrams read per wakeup before the loop looks at its other events.
constexpr int kReadsPerTurn = 64;
// Room for one message and a few octets more, so that a longer one shows
// as too long rather than cut to a length that reads.
constexpr std::size_t kReceiveBytes = gateway::kForwardMessageMax + 1;
constexpr std::size_t kReplyBytes = 4096;

}  // namespace

Result<std::vector<std::uint8_t>, std::string> read_forward_key(const std::string& path) {
  auto text = io::read_text_file(path);
  if (!text) return fail(fmt::format("eap forward key file: {}", text.error().to_string()));
  std::string key = std::move(*text);
  if (key.ends_with('\n')) key.pop_back();
  if (key.size() < gateway::kForwardKeyLengthMin) {
    return fail(fmt::format("eap forward key file {}: {} octets, at least {} needed", path, key.size(),
                            gateway::kForwardKeyLengthMin));
  }
  return std::vector<std::uint8_t>(key.begin(), key.end());
}

void add_eap_forward_metrics(io::PrometheusText& page, const EapForwarder& forwarder) {
  const EapForwarderCounters counters = forwarder.counters();
  constexpr std::string_view kSent = "EAP follow-ups forwarded to the gateway of their State, by event.";
  for (const auto& [event, value] :
       {std::pair{"forwarded", counters.forwarded}, std::pair{"answered", counters.answered},
        std::pair{"timed_out", counters.timed_out}, std::pair{"queue_full", counters.queue_full},
        std::pair{"send_error", counters.send_errors}}) {
    page.counter("radiusward_gateway_eap_forwards_total", kSent, value, {{"event", event}});
  }
  constexpr std::string_view kTaken = "EAP follow-ups peers forwarded here, by event.";
  for (const auto& [event, value] :
       {std::pair{"decided", counters.decided}, std::pair{"replied", counters.replied},
        std::pair{"busy", counters.busy}}) {
    page.counter("radiusward_gateway_eap_forwards_received_total", kTaken, value, {{"event", event}});
  }
  constexpr std::string_view kRefused =
      "Forwarding messages refused before anything else was read, by reason.";
  for (std::size_t i = 0; i < counters.refused.size(); ++i) {
    page.counter("radiusward_gateway_eap_forward_refused_total", kRefused, counters.refused[i],
                 {{"reason", gateway::to_string(static_cast<gateway::ForwardRefusal>(i))}});
  }
}

EapForwarder::EapForwarder(EapForwarderOptions options, std::unique_ptr<gateway::DatagramHandler> handler,
                           int worker, ForwardAnswerSink answers)
    : options_(std::move(options)),
      codec_(options_.key),
      gate_(options_.self, options_.peers, options_.clock_window_ms),
      handler_(std::move(handler)),
      worker_(worker),
      answer_sink_(std::move(answers)),
      receive_buffer_(kReceiveBytes),
      message_buffer_(gateway::kForwardMessageMax),
      reply_buffer_(kReplyBytes) {
  queued_.reserve(options_.in_flight_max);
  taken_.reserve(options_.in_flight_max);
  in_flight_.reserve(options_.in_flight_max);
  inbound_.reserve(options_.in_flight_max);
  // Request ids rise across restarts too (the peers' replay windows): the
  // wall clock in microseconds at start, then one per forward.
  next_request_id_ = static_cast<std::uint64_t>(io::unix_now_ms()) * 1000;
}

Result<std::unique_ptr<EapForwarder>, io::SystemError> EapForwarder::start(
    EapForwarderOptions options, std::unique_ptr<gateway::DatagramHandler> handler, int worker,
    ForwardAnswerSink answers) {
  RW_ASSERT(options.key.size() >= gateway::kForwardKeyLengthMin && handler != nullptr);
  RW_ASSERT(options.in_flight_max > 0);
  std::unique_ptr<EapForwarder> forwarder(
      new EapForwarder(std::move(options), std::move(handler), worker, std::move(answers)));
  EapForwarder& f = *forwarder;
  const gateway::Endpoint listen = f.options_.listen;
  f.socket_ = io::FileDescriptor(
      socket(listen.is_v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!f.socket_.valid()) return fail(io::last_system_error("socket"));
  sockaddr_storage address{};
  const socklen_t length = io::to_sockaddr(listen, address);
  if (bind(f.socket_.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0)
    return fail(io::last_system_error("bind " + io::to_string(listen)));
  sockaddr_storage bound{};
  socklen_t bound_length = sizeof bound;
  if (getsockname(f.socket_.get(), reinterpret_cast<sockaddr*>(&bound), &bound_length) != 0)
    return fail(io::last_system_error("getsockname"));
  f.bound_ = io::to_endpoint(bound);
  f.epoll_ = io::FileDescriptor(epoll_create1(EPOLL_CLOEXEC));
  if (!f.epoll_.valid()) return fail(io::last_system_error("epoll_create1"));
  f.stop_event_ = io::FileDescriptor(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  f.outgoing_event_ = io::FileDescriptor(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!f.stop_event_.valid() || !f.outgoing_event_.valid()) return fail(io::last_system_error("eventfd"));
  auto mailbox = AnswerMailbox::create(1024);
  if (!mailbox) return fail(mailbox.error());
  f.answers_ = std::move(*mailbox);
  for (const auto& [fd, token] :
       {std::pair{f.stop_event_.get(), kStopToken}, std::pair{f.outgoing_event_.get(), kOutgoingToken},
        std::pair{f.answers_->fd(), kAnswersToken}, std::pair{f.socket_.get(), kSocketToken}}) {
    epoll_event event{.events = EPOLLIN, .data = {.u64 = token}};
    if (epoll_ctl(f.epoll_.get(), EPOLL_CTL_ADD, fd, &event) != 0)
      return fail(io::last_system_error("epoll_ctl"));
  }
  f.thread_ = std::thread([raw = forwarder.get()] { raw->run(); });
  return forwarder;
}

EapForwarder::~EapForwarder() { stop(); }

void EapForwarder::stop() {
  if (!thread_.joinable()) return;
  const std::uint64_t one = 1;
  (void)!write(stop_event_.get(), &one, sizeof one);
  thread_.join();
}

bool EapForwarder::knows(std::uint32_t gateway_id) const {
  // options_.peers never changes after start: read from any thread.
  return std::any_of(options_.peers.begin(), options_.peers.end(),
                     [&](const gateway::ForwardPeer& peer) { return peer.gateway_id == gateway_id; });
}

bool EapForwarder::forward(std::uint32_t gateway_id, gateway::Ticket ticket, gateway::Listener listener,
                           const gateway::Endpoint& from, Bytes datagram) {
  if (datagram.size() > gateway::kForwardPayloadMax) return false;
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    if (outstanding_.load(std::memory_order_relaxed) >= options_.in_flight_max) {
      add(queue_full_);
      return false;
    }
    outstanding_.fetch_add(1, std::memory_order_relaxed);
    wake = queued_.empty();
    // Within the reserved capacity (outstanding_ bounds it): no allocation.
    Outgoing& out = queued_.emplace_back();
    out.gateway_id = gateway_id;
    out.ticket = ticket;
    out.listener = listener;
    out.from = from;
    out.length = datagram.size();
    std::copy(datagram.begin(), datagram.end(), out.datagram.begin());
  }
  if (wake) {
    const std::uint64_t one = 1;
    (void)!write(outgoing_event_.get(), &one, sizeof one);
  }
  return true;
}

EapForwarderCounters EapForwarder::counters() const {
  EapForwarderCounters counters{.forwarded = forwarded_.load(std::memory_order_relaxed),
                                .answered = answered_.load(std::memory_order_relaxed),
                                .timed_out = timed_out_.load(std::memory_order_relaxed),
                                .queue_full = queue_full_.load(std::memory_order_relaxed),
                                .send_errors = send_errors_.load(std::memory_order_relaxed),
                                .decided = decided_.load(std::memory_order_relaxed),
                                .replied = replied_.load(std::memory_order_relaxed),
                                .busy = busy_.load(std::memory_order_relaxed)};
  for (std::size_t i = 0; i < refused_.size(); ++i)
    counters.refused[i] = refused_[i].load(std::memory_order_relaxed);
  return counters;
}

void EapForwarder::run() {
  pthread_setname_np(pthread_self(), "rw-eap-forward");
  constexpr int kEventsMax = 8;
  epoll_event events[kEventsMax];
  next_tick_ = io::monotonic_now() + options_.tick_interval;
  for (;;) {
    const Duration until_tick = next_tick_ - io::monotonic_now();
    const std::int64_t timeout_ms = until_tick.ns <= 0 ? 0 : (until_tick.ns + 999'999) / 1'000'000;
    const int ready = epoll_wait(epoll_.get(), events, kEventsMax, static_cast<int>(timeout_ms));
    if (ready < 0) {
      if (errno == EINTR) continue;
      die(io::last_system_error("epoll_wait"));
    }
    bool stopping = false;
    for (int i = 0; i < ready; ++i) stopping = stopping || events[i].data.u64 == kStopToken;
    if (stopping) break;
    Instant now = io::monotonic_now();
    for (int i = 0; i < ready; ++i) {
      switch (events[i].data.u64) {
        case kOutgoingToken:
          send_outgoing(now);
          break;
        case kAnswersToken:
          take_answers(now);
          break;
        case kSocketToken:
          receive(now);
          break;
        default:
          break;
      }
    }
    now = io::monotonic_now();
    if (now >= next_tick_) tick(now);
  }
}

void EapForwarder::send_outgoing(Instant now) {
  std::uint64_t drained = 0;
  (void)!read(outgoing_event_.get(), &drained, sizeof drained);
  {
    std::lock_guard lock(mutex_);
    taken_.swap(queued_);
  }
  const std::int64_t unix_ms = io::unix_now_ms();
  for (const Outgoing& out : taken_) {
    const std::optional<std::size_t> peer = gate_.find(out.gateway_id);
    RW_ASSERT(peer.has_value());  // forward() is only called for known peers.
    const std::uint64_t id = next_request_id_++;
    const gateway::ForwardMessage message{.kind = gateway::ForwardKind::kRequest,
                                          .sender = options_.self,
                                          .receiver = out.gateway_id,
                                          .request_id = id,
                                          .sent_unix_ms = unix_ms,
                                          .listener = out.listener,
                                          .nas = out.from,
                                          .payload = Bytes(out.datagram.data(), out.length)};
    const std::size_t length = codec_.write(message, message_buffer_);
    RW_ASSERT(length > 0);
    in_flight_.emplace(id, InFlight{.ticket = out.ticket, .peer = *peer, .deadline = now + options_.timeout});
    add(forwarded_);
    send_to(*peer, Bytes(message_buffer_.data(), length));
  }
  taken_.clear();
}

void EapForwarder::send_to(std::size_t peer, Bytes message) {
  sockaddr_storage address{};
  const socklen_t length = io::to_sockaddr(gate_.peers()[peer].address, address);
  // A lost message is a forward that times out: the NAS retransmits.
  if (sendto(socket_.get(), message.data(), message.size(), MSG_DONTWAIT,
             reinterpret_cast<const sockaddr*>(&address), length) < 0) {
    add(send_errors_);
  }
}

void EapForwarder::receive(Instant now) {
  for (int i = 0; i < kReadsPerTurn; ++i) {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    const ssize_t got = recvfrom(socket_.get(), receive_buffer_.data(), receive_buffer_.size(), MSG_DONTWAIT,
                                 reinterpret_cast<sockaddr*>(&address), &length);
    if (got < 0) return;  // EAGAIN, or an error the next read reports again.
    on_message(Bytes(receive_buffer_.data(), static_cast<std::size_t>(got)), io::to_endpoint(address), now);
  }
}

void EapForwarder::on_message(Bytes bytes, const gateway::Endpoint& source, Instant now) {
  auto message = codec_.read(bytes);
  if (!message) return refuse(gateway::ForwardRefusal::kMalformed);
  auto peer = gate_.admit(*message, source, io::unix_now_ms());
  if (!peer) return refuse(peer.error());
  if (message->kind == gateway::ForwardKind::kRequest) return on_request(*message, *peer, now);
  on_reply(*message, *peer);
}

void EapForwarder::on_request(const gateway::ForwardMessage& message, std::size_t peer, Instant now) {
  if (inbound_.size() >= options_.in_flight_max) {
    add(busy_);
    return;
  }
  const std::uint64_t connection = next_inbound_++;
  const gateway::Arrival arrival{.listener = message.listener,
                                 .connection = connection,
                                 .unix_ms = io::unix_now_ms(),
                                 .received = now,
                                 .forwarded = true};
  add(decided_);
  const Inbound inbound{.peer = peer,
                        .request_id = message.request_id,
                        .listener = message.listener,
                        .nas = message.nas,
                        .deadline = now + options_.timeout};
  const std::size_t length = handler_->on_datagram(now, arrival, message.nas, message.payload, reply_buffer_);
  if (length > 0) return send_reply(inbound, length);
  // Parked (SQL, crypt(3)), or dropped: a dropped one is forgotten at its deadline.
  inbound_.emplace(connection, inbound);
}

void EapForwarder::send_reply(const Inbound& inbound, std::size_t length) {
  const gateway::ForwardMessage message{.kind = gateway::ForwardKind::kReply,
                                        .sender = options_.self,
                                        .receiver = gate_.peers()[inbound.peer].gateway_id,
                                        .request_id = inbound.request_id,
                                        .sent_unix_ms = io::unix_now_ms(),
                                        .listener = inbound.listener,
                                        .nas = inbound.nas,
                                        .payload = Bytes(reply_buffer_.data(), length)};
  const std::size_t written = codec_.write(message, message_buffer_);
  if (written == 0) return;
  add(replied_);
  send_to(inbound.peer, Bytes(message_buffer_.data(), written));
}

void EapForwarder::on_reply(const gateway::ForwardMessage& message, std::size_t peer) {
  const auto found = in_flight_.find(message.request_id);
  // Late (timed out), replayed, or from another peer than the one asked.
  if (found == in_flight_.end() || found->second.peer != peer)
    return refuse(gateway::ForwardRefusal::kUnsolicited);
  const gateway::Ticket ticket = found->second.ticket;
  in_flight_.erase(found);
  outstanding_.fetch_sub(1, std::memory_order_relaxed);
  add(answered_);
  const AnswerNotice answer{.ticket = ticket,
                            .kind = gateway::AnswerKind::kForwarded,
                            .forwarded = std::make_shared<const std::vector<std::uint8_t>>(
                                message.payload.begin(), message.payload.end())};
  answer_sink_(gateway::ticket_worker(ticket), std::span(&answer, 1));
}

void EapForwarder::take_answers(Instant now) {
  answers_->take([&](const AnswerNotice& notice) {
    const std::optional<gateway::DeferredReply> reply = handler_->on_answer(now, notice, reply_buffer_);
    if (!reply) return;
    const auto found = inbound_.find(reply->arrival.connection);
    if (found == inbound_.end()) return;  // Past its deadline: the peer gave up on it.
    const Inbound inbound = found->second;
    inbound_.erase(found);
    send_reply(inbound, reply->length);
  });
}

void EapForwarder::tick(Instant now) {
  next_tick_ = now + options_.tick_interval;
  handler_->on_tick(now);
  for (;;) {
    const std::optional<gateway::DeferredReply> reply = handler_->next_timed_reply(now, reply_buffer_);
    if (!reply) break;
    const auto found = inbound_.find(reply->arrival.connection);
    if (found == inbound_.end()) continue;
    const Inbound inbound = found->second;
    inbound_.erase(found);
    send_reply(inbound, reply->length);
  }
  std::erase_if(inbound_, [&](const auto& entry) { return now >= entry.second.deadline; });
  const std::size_t before = in_flight_.size();
  std::erase_if(in_flight_, [&](const auto& entry) { return now >= entry.second.deadline; });
  const std::size_t expired = before - in_flight_.size();
  if (expired > 0) {
    add(timed_out_, expired);
    outstanding_.fetch_sub(expired, std::memory_order_relaxed);
  }
}

}  // namespace rw::gateway_shell
