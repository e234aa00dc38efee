// The UDP worker loop. Batching (recvmmsg/sendmmsg) amortises system calls;
// all buffers are sized in the constructor so the loop never allocates.
#include "io/udp_worker.h"

#include <pthread.h>
#include <sys/epoll.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "base/assert.h"
#include "io/clock.h"
#include "io/socket_address.h"

namespace rw::io {
namespace {

// The reply buffer the DatagramHandler seam promises (gateway/datagram.h).
constexpr std::size_t kReplyBytes = 4096;
// epoll_event data.u64 of the stop eventfd; sockets use their index.
constexpr std::uint64_t kWakeupToken = ~std::uint64_t{0};
// Batches read from one socket before the loop looks at the others, the stop
// signal and the tick again.
constexpr int kBatchesPerWakeup = 4;

// Reads the destination address of a received datagram from its packet-info
// control message into the control message its reply carries, so the reply
// leaves from the address the NAS sent to. Returns the control length, 0 when
// the datagram carried none.
std::size_t reply_source_control(const msghdr& received, bool is_v6, std::uint8_t* out,
                                 std::size_t out_size) {
  for (cmsghdr* cmsg = CMSG_FIRSTHDR(&received); cmsg != nullptr;
       cmsg = CMSG_NXTHDR(const_cast<msghdr*>(&received), cmsg)) {
    msghdr reply{};
    reply.msg_control = out;
    reply.msg_controllen = out_size;
    cmsghdr* reply_cmsg = CMSG_FIRSTHDR(&reply);
    if (!is_v6 && cmsg->cmsg_level == IPPROTO_IP && cmsg->cmsg_type == IP_PKTINFO) {
      in_pktinfo info{};
      std::memcpy(&info, CMSG_DATA(cmsg), sizeof(info));
      in_pktinfo source{};
      // ipi_spec_dst is the local address the datagram was received on;
      // ifindex 0 lets routing choose the interface.
      source.ipi_spec_dst = info.ipi_spec_dst;
      reply_cmsg->cmsg_level = IPPROTO_IP;
      reply_cmsg->cmsg_type = IP_PKTINFO;
      reply_cmsg->cmsg_len = CMSG_LEN(sizeof(source));
      std::memcpy(CMSG_DATA(reply_cmsg), &source, sizeof(source));
      return CMSG_SPACE(sizeof(source));
    }
    if (is_v6 && cmsg->cmsg_level == IPPROTO_IPV6 && cmsg->cmsg_type == IPV6_PKTINFO) {
      in6_pktinfo info{};
      std::memcpy(&info, CMSG_DATA(cmsg), sizeof(info));
      in6_pktinfo source{};
      source.ipi6_addr = info.ipi6_addr;
      // A link-local source is only meaningful on the interface it came in on.
      if (IN6_IS_ADDR_LINKLOCAL(&info.ipi6_addr)) source.ipi6_ifindex = info.ipi6_ifindex;
      reply_cmsg->cmsg_level = IPPROTO_IPV6;
      reply_cmsg->cmsg_type = IPV6_PKTINFO;
      reply_cmsg->cmsg_len = CMSG_LEN(sizeof(source));
      std::memcpy(CMSG_DATA(reply_cmsg), &source, sizeof(source));
      return CMSG_SPACE(sizeof(source));
    }
  }
  return 0;
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
      send_messages_(options.batch_size) {}

Result<std::unique_ptr<UdpWorker>, SystemError> UdpWorker::create(
    int index, std::vector<WorkerSocket> sockets, std::unique_ptr<gateway::DatagramHandler> handler,
    int wakeup_fd, const UdpServerOptions& options) {
  RW_ASSERT(options.batch_size > 0 && options.datagram_bytes_max > 0);
  RW_ASSERT(options.datagram_bytes_max <= 65535);
  RW_ASSERT(handler != nullptr);
  std::unique_ptr<UdpWorker> worker(new UdpWorker(index, std::move(sockets), std::move(handler), options));
  worker->epoll_ = FileDescriptor(epoll_create1(EPOLL_CLOEXEC));
  if (!worker->epoll_.valid()) return fail(last_system_error("epoll_create1"));
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = kWakeupToken;
  if (epoll_ctl(worker->epoll_.get(), EPOLL_CTL_ADD, wakeup_fd, &event) != 0) {
    return fail(last_system_error("epoll_ctl"));
  }
  for (std::size_t i = 0; i < worker->sockets_.size(); ++i) {
    event.data.u64 = i;
    if (epoll_ctl(worker->epoll_.get(), EPOLL_CTL_ADD, worker->sockets_[i].fd.get(), &event) != 0) {
      return fail(last_system_error("epoll_ctl"));
    }
  }
  return worker;
}

void UdpWorker::run() {
  constexpr int kEventsMax = 64;
  epoll_event events[kEventsMax];
  const std::string name = "rw-udp-" + std::to_string(index_);
  pthread_setname_np(pthread_self(), name.c_str());  // Shown by top -H; at most 15 characters.
  next_tick_ = monotonic_now() + tick_interval_;
  for (;;) {
    const Duration until_tick = next_tick_ - monotonic_now();
    // Round up so the loop does not spin for the last fraction of a millisecond.
    const std::int64_t timeout_ms = until_tick.ns <= 0 ? 0 : (until_tick.ns + 999'999) / 1'000'000;
    const int ready = epoll_wait(epoll_.get(), events, kEventsMax, static_cast<int>(timeout_ms));
    if (ready < 0) {
      if (errno == EINTR) continue;
      die(last_system_error("epoll_wait"));
    }
    for (int i = 0; i < ready; ++i) {
      // The stop eventfd stays readable: every worker sees it and returns.
      if (events[i].data.u64 == kWakeupToken) return;
    }
    for (int i = 0; i < ready; ++i) {
      serve(sockets_[events[i].data.u64]);
      tick_if_due();
    }
    tick_if_due();
  }
}

void UdpWorker::tick_if_due() {
  const Instant now = monotonic_now();
  if (now < next_tick_) return;
  handler_->on_tick(now);
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

void UdpWorker::serve(WorkerSocket& socket) {
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
    const std::size_t replies = handle_batch(socket, static_cast<std::size_t>(count));
    send_replies(socket, replies);
    if (static_cast<std::size_t>(count) < batch_size_) return;
  }
}

std::size_t UdpWorker::handle_batch(const WorkerSocket& socket, std::size_t count) {
  const Instant now = monotonic_now();
  std::size_t replies = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const msghdr& received = receive_messages_[i].msg_hdr;
    if ((received.msg_flags & MSG_TRUNC) != 0) {
      // RFC 2865 §3: longer than the maximum packet; cannot be RADIUS.
      add(oversized_dropped_, 1);
      continue;
    }
    const Bytes datagram(receive_data_.data() + i * datagram_bytes_max_, receive_messages_[i].msg_len);
    const MutableBytes reply(reply_data_.data() + i * kReplyBytes, kReplyBytes);
    const std::size_t reply_size =
        handler_->on_datagram(now, socket.listener, to_endpoint(peers_[i]), datagram, reply);
    if (reply_size == 0) continue;
    RW_ASSERT(reply_size <= kReplyBytes);

    send_iov_[replies] = iovec{reply.data(), reply_size};
    msghdr& header = send_messages_[replies].msg_hdr;
    header = msghdr{};
    header.msg_name = &peers_[i];
    header.msg_namelen = received.msg_namelen;
    header.msg_iov = &send_iov_[replies];
    header.msg_iovlen = 1;
    if (socket.wildcard) {
      const std::size_t control_size =
          reply_source_control(received, socket.is_v6, send_control_[replies].bytes, kControlBytes);
      if (control_size > 0) {
        header.msg_control = send_control_[replies].bytes;
        header.msg_controllen = control_size;
      }
    }
    ++replies;
  }
  return replies;
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
  };
}

}  // namespace rw::io
