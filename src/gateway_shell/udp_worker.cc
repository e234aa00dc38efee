// The UDP worker loop. Batching (recvmmsg/sendmmsg) amortises system calls;
// all buffers are sized in the constructor so the loop never allocates.
#include "gateway_shell/udp_worker.h"

#include <pthread.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "base/assert.h"
#include "io/clock.h"
#include "io/socket_address.h"

namespace rw::gateway_shell {
namespace {

// The reply buffer the DatagramHandler seam promises (gateway/datagram.h).
constexpr std::size_t kReplyBytes = 4096;

// Microseconds from `received` to `sent`; 0 for an Arrival without a time
// (none in production) or a clock that did not move.
std::uint64_t latency_us(Instant sent, Instant received) {
  if (received.ns == 0 || sent.ns <= received.ns) return 0;
  return static_cast<std::uint64_t>((sent - received).ns / 1000);
}
// epoll_event data.u64 of the stop and answers eventfds; sockets use their index.
constexpr std::uint64_t kWakeupToken = ~std::uint64_t{0};
constexpr std::uint64_t kAnswersToken = ~std::uint64_t{0} - 1;
// Batches read from one socket before the loop looks at the others, the stop
// signal and the tick again.
constexpr int kBatchesPerWakeup = 4;

// Reads the local address a datagram was sent to from its packet-info
// control message (wildcard sockets only ask for one), so that its reply,
// immediate or deferred, leaves from the address the NAS sent to.
void read_local_address(const msghdr& received, bool is_v6, gateway::Arrival& arrival) {
  for (cmsghdr* cmsg = CMSG_FIRSTHDR(&received); cmsg != nullptr;
       cmsg = CMSG_NXTHDR(const_cast<msghdr*>(&received), cmsg)) {
    if (!is_v6 && cmsg->cmsg_level == IPPROTO_IP && cmsg->cmsg_type == IP_PKTINFO) {
      in_pktinfo info{};
      std::memcpy(&info, CMSG_DATA(cmsg), sizeof(info));
      gateway::Endpoint local;
      // ipi_spec_dst is the local address the datagram was received on.
      std::memcpy(local.address.data(), &info.ipi_spec_dst, 4);
      arrival.local = local;
      return;
    }
    if (is_v6 && cmsg->cmsg_level == IPPROTO_IPV6 && cmsg->cmsg_type == IPV6_PKTINFO) {
      in6_pktinfo info{};
      std::memcpy(&info, CMSG_DATA(cmsg), sizeof(info));
      gateway::Endpoint local{.is_v6 = true};
      std::memcpy(local.address.data(), &info.ipi6_addr, 16);
      arrival.local = local;
      // A link-local source is only meaningful on the interface it came in on.
      if (IN6_IS_ADDR_LINKLOCAL(&info.ipi6_addr)) arrival.interface_index = info.ipi6_ifindex;
      return;
    }
  }
}

// Writes the packet-info control message that makes a reply leave from
// `arrival.local`. Returns the control length, 0 when the local address is
// unknown (the socket's bound address is then the source).
std::size_t source_control(const gateway::Arrival& arrival, bool is_v6, std::uint8_t* out,
                           std::size_t out_size) {
  if (!arrival.local) return 0;
  msghdr reply{};
  reply.msg_control = out;
  reply.msg_controllen = out_size;
  cmsghdr* cmsg = CMSG_FIRSTHDR(&reply);
  if (!is_v6) {
    in_pktinfo source{};
    // ifindex 0 lets routing choose the interface.
    std::memcpy(&source.ipi_spec_dst, arrival.local->address.data(), 4);
    cmsg->cmsg_level = IPPROTO_IP;
    cmsg->cmsg_type = IP_PKTINFO;
    cmsg->cmsg_len = CMSG_LEN(sizeof(source));
    std::memcpy(CMSG_DATA(cmsg), &source, sizeof(source));
    return CMSG_SPACE(sizeof(source));
  }
  in6_pktinfo source{};
  std::memcpy(&source.ipi6_addr, arrival.local->address.data(), 16);
  source.ipi6_ifindex = arrival.interface_index;
  cmsg->cmsg_level = IPPROTO_IPV6;
  cmsg->cmsg_type = IPV6_PKTINFO;
  cmsg->cmsg_len = CMSG_LEN(sizeof(source));
  std::memcpy(CMSG_DATA(cmsg), &source, sizeof(source));
  return CMSG_SPACE(sizeof(source));
}

}  // namespace

UdpWorker::UdpWorker(int index, std::vector<WorkerSocket> sockets,
                     std::unique_ptr<gateway::DatagramHandler> handler, const UdpServerOptions& options)
    : index_(index),
      sockets_(std::move(sockets)),
      handler_(std::move(handler)),
      batch_size_(options.batch_size),
      datagram_bytes_max_(options.datagram_bytes_max),
      tick_interval_(options.tick_interval),
      receive_data_(options.batch_size * options.datagram_bytes_max),
      reply_data_(options.batch_size * kReplyBytes),
      peers_(options.batch_size),
      receive_control_(options.batch_size),
      send_control_(options.batch_size),
      receive_iov_(options.batch_size),
      send_iov_(options.batch_size),
      receive_messages_(options.batch_size),
      send_messages_(options.batch_size),
      deferred_arrivals_(options.batch_size) {}

Result<std::unique_ptr<UdpWorker>, io::SystemError> UdpWorker::create(
    int index, std::vector<WorkerSocket> sockets, std::unique_ptr<gateway::DatagramHandler> handler,
    int wakeup_fd, const UdpServerOptions& options) {
  RW_ASSERT(options.batch_size > 0 && options.datagram_bytes_max > 0);
  RW_ASSERT(options.datagram_bytes_max <= 65535);
  RW_ASSERT(handler != nullptr);
  std::unique_ptr<UdpWorker> worker(new UdpWorker(index, std::move(sockets), std::move(handler), options));
  worker->epoll_ = io::FileDescriptor(epoll_create1(EPOLL_CLOEXEC));
  if (!worker->epoll_.valid()) return fail(io::last_system_error("epoll_create1"));
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = kWakeupToken;
  if (epoll_ctl(worker->epoll_.get(), EPOLL_CTL_ADD, wakeup_fd, &event) != 0) {
    return fail(io::last_system_error("epoll_ctl"));
  }
  // A worker holds at most a few thousand deferred requests; reserving keeps
  // the mailbox allocation-free in steady state.
  auto answers = AnswerMailbox::create(4096);
  if (!answers) return fail(answers.error());
  worker->answers_ = std::move(*answers);
  event.data.u64 = kAnswersToken;
  if (epoll_ctl(worker->epoll_.get(), EPOLL_CTL_ADD, worker->answers_->fd(), &event) != 0) {
    return fail(io::last_system_error("epoll_ctl"));
  }
  for (std::size_t i = 0; i < worker->sockets_.size(); ++i) {
    event.data.u64 = i;
    if (epoll_ctl(worker->epoll_.get(), EPOLL_CTL_ADD, worker->sockets_[i].fd.get(), &event) != 0) {
      return fail(io::last_system_error("epoll_ctl"));
    }
  }
  return worker;
}

void UdpWorker::run() {
  constexpr int kEventsMax = 64;
  epoll_event events[kEventsMax];
  const std::string name = "rw-udp-" + std::to_string(index_);
  pthread_setname_np(pthread_self(), name.c_str());  // Shown by top -H; at most 15 characters.
  next_tick_ = io::monotonic_now() + tick_interval_;
  for (;;) {
    const Duration until_tick = next_tick_ - io::monotonic_now();
    // Round up so the loop does not spin for the last fraction of a millisecond.
    const std::int64_t timeout_ms = until_tick.ns <= 0 ? 0 : (until_tick.ns + 999'999) / 1'000'000;
    const int ready = epoll_wait(epoll_.get(), events, kEventsMax, static_cast<int>(timeout_ms));
    if (ready < 0) {
      if (errno == EINTR) continue;
      die(io::last_system_error("epoll_wait"));
    }
    for (int i = 0; i < ready; ++i) {
      // The stop eventfd stays readable: every worker sees it and returns.
      if (events[i].data.u64 == kWakeupToken) return;
    }
    for (int i = 0; i < ready; ++i) {
      if (events[i].data.u64 == kAnswersToken) {
        take_answers();
      } else {
        serve(events[i].data.u64);
      }
      tick_if_due();
    }
    tick_if_due();
  }
}

void UdpWorker::tick_if_due() {
  const Instant now = io::monotonic_now();
  if (now < next_tick_) return;
  handler_->on_tick(now);
  // Replies due by time alone (a Simultaneous-Use check past its timeout).
  DeferredBatch batch;
  for (;;) {
    std::uint8_t* data = deferred_slot(batch);
    const std::optional<gateway::DeferredReply> reply =
        handler_->next_timed_reply(now, MutableBytes(data, kReplyBytes));
    if (!reply) break;
    queue_deferred(batch, data, *reply);
  }
  flush_deferred(batch);
  next_tick_ = now + tick_interval_;
}

void UdpWorker::prepare_receive() {
  for (std::size_t i = 0; i < batch_size_; ++i) {
    receive_iov_[i] = iovec{receive_data_.data() + i * datagram_bytes_max_, datagram_bytes_max_};
    msghdr& header = receive_messages_[i].msg_hdr;
    header = msghdr{};
    header.msg_name = &peers_[i];
    header.msg_namelen = sizeof(sockaddr_storage);
    header.msg_iov = &receive_iov_[i];
    header.msg_iovlen = 1;
    header.msg_control = receive_control_[i].bytes;
    header.msg_controllen = kControlBytes;
    receive_messages_[i].msg_len = 0;
  }
}

void UdpWorker::serve(std::size_t socket_index) {
  const WorkerSocket& socket = sockets_[socket_index];
  for (int batch = 0; batch < kBatchesPerWakeup; ++batch) {
    prepare_receive();
    const int count = recvmmsg(socket.fd.get(), receive_messages_.data(), static_cast<unsigned>(batch_size_),
                               MSG_DONTWAIT, nullptr);
    if (count < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) add(receive_errors_, 1);
      return;
    }
    add(received_, static_cast<std::uint64_t>(count));
    const Instant received = io::monotonic_now();
    const std::size_t replies = handle_batch(socket_index, static_cast<std::size_t>(count), received);
    send_replies(socket, replies);
    observe_latency(socket.listener, received, replies);
    if (static_cast<std::size_t>(count) < batch_size_) return;
  }
}

std::size_t UdpWorker::handle_batch(std::size_t socket_index, std::size_t count, Instant now) {
  const WorkerSocket& socket = sockets_[socket_index];
  const std::int64_t unix_ms = io::unix_now_ms();
  std::size_t replies = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const msghdr& received = receive_messages_[i].msg_hdr;
    if ((received.msg_flags & MSG_TRUNC) != 0) {
      // RFC 2865 §3: longer than the maximum packet; cannot be RADIUS.
      add(oversized_dropped_, 1);
      continue;
    }
    gateway::Arrival arrival{.listener = socket.listener,
                             .socket = static_cast<std::uint16_t>(socket_index),
                             .unix_ms = unix_ms,
                             .received = now};
    if (socket.wildcard) read_local_address(received, socket.is_v6, arrival);
    const Bytes datagram(receive_data_.data() + i * datagram_bytes_max_, receive_messages_[i].msg_len);
    const MutableBytes reply(reply_data_.data() + i * kReplyBytes, kReplyBytes);
    const std::size_t reply_size =
        handler_->on_datagram(now, arrival, io::to_endpoint(peers_[i]), datagram, reply);
    if (reply_size == 0) continue;
    RW_ASSERT(reply_size <= kReplyBytes);
    queue_reply(replies, reply.data(), reply_size, i, received.msg_namelen, arrival, socket.is_v6);
    ++replies;
  }
  return replies;
}

void UdpWorker::queue_reply(std::size_t slot, std::uint8_t* data, std::size_t size, std::size_t peer,
                            socklen_t peer_length, const gateway::Arrival& arrival, bool is_v6) {
  send_iov_[slot] = iovec{data, size};
  msghdr& header = send_messages_[slot].msg_hdr;
  header = msghdr{};
  header.msg_name = &peers_[peer];
  header.msg_namelen = peer_length;
  header.msg_iov = &send_iov_[slot];
  header.msg_iovlen = 1;
  const std::size_t control_size = source_control(arrival, is_v6, send_control_[slot].bytes, kControlBytes);
  if (control_size > 0) {
    header.msg_control = send_control_[slot].bytes;
    header.msg_controllen = control_size;
  }
}

void UdpWorker::post_answers(std::span<const AnswerNotice> answers) { answers_->post(answers); }

void UdpWorker::take_answers() {
  const Instant now = io::monotonic_now();
  DeferredBatch batch;
  answers_->take([&](const AnswerNotice& notice) {
    std::uint8_t* data = deferred_slot(batch);
    const std::optional<gateway::DeferredReply> reply =
        handler_->on_answer(now, notice, MutableBytes(data, kReplyBytes));
    if (reply) queue_deferred(batch, data, *reply);
  });
  flush_deferred(batch);
}

std::uint8_t* UdpWorker::deferred_slot(DeferredBatch& batch) {
  if (batch.queued == batch_size_) flush_deferred(batch);
  return reply_data_.data() + batch.queued * kReplyBytes;
}

void UdpWorker::queue_deferred(DeferredBatch& batch, std::uint8_t* data,
                               const gateway::DeferredReply& reply) {
  RW_ASSERT(reply.arrival.socket < sockets_.size() && reply.length <= kReplyBytes);
  if (batch.queued > 0 && reply.arrival.socket != batch.socket) {
    // One sendmmsg per socket: send what is queued, keep this reply first.
    std::uint8_t* first = reply_data_.data();
    flush_deferred(batch);
    std::memmove(first, data, reply.length);
    data = first;
  }
  batch.socket = reply.arrival.socket;
  deferred_arrivals_[batch.queued] = reply.arrival;
  const socklen_t peer_length = io::to_sockaddr(reply.to, peers_[batch.queued]);
  queue_reply(batch.queued, data, reply.length, batch.queued, peer_length, reply.arrival,
              sockets_[batch.socket].is_v6);
  ++batch.queued;
}

void UdpWorker::flush_deferred(DeferredBatch& batch) {
  if (batch.queued == 0) return;
  send_replies(sockets_[batch.socket], batch.queued);
  add(deferred_sent_, batch.queued);
  const Instant sent = io::monotonic_now();
  for (std::size_t i = 0; i < batch.queued; ++i) {
    const gateway::Arrival& arrival = deferred_arrivals_[i];
    latency_[static_cast<std::size_t>(arrival.listener)].observe(latency_us(sent, arrival.received));
  }
  batch.queued = 0;
}

void UdpWorker::observe_latency(gateway::Listener listener, Instant received, std::size_t count) {
  if (count == 0) return;
  latency_[static_cast<std::size_t>(listener)].observe(latency_us(io::monotonic_now(), received), count);
}

void UdpWorker::send_replies(const WorkerSocket& socket, std::size_t count) {
  std::size_t offset = 0;
  while (offset < count) {
    const int sent = sendmmsg(socket.fd.get(), send_messages_.data() + offset,
                              static_cast<unsigned>(count - offset), MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EINTR) continue;
      // sendmmsg reports an error only for the first message of the call:
      // count it as lost and go on with the rest. UDP does not retry; the
      // NAS retransmits.
      add(send_errors_, 1);
      ++offset;
      continue;
    }
    add(sent_, static_cast<std::uint64_t>(sent));
    offset += static_cast<std::size_t>(sent);
  }
}

WorkerCounters UdpWorker::counters() const {
  return WorkerCounters{
      .received = received_.load(std::memory_order_relaxed),
      .sent = sent_.load(std::memory_order_relaxed),
      .oversized_dropped = oversized_dropped_.load(std::memory_order_relaxed),
      .send_errors = send_errors_.load(std::memory_order_relaxed),
      .receive_errors = receive_errors_.load(std::memory_order_relaxed),
      .deferred_sent = deferred_sent_.load(std::memory_order_relaxed),
  };
}

}  // namespace rw::gateway_shell
