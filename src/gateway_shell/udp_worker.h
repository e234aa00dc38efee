// One UDP worker thread's loop: epoll over its own sockets, the shared stop
// eventfd and its own answers eventfd, recvmmsg batches into buffers
// allocated once, the handler, sendmmsg of the replies from the socket the
// requests came in on, deferred replies (Accounting-Responses after commit)
// posted by another thread, and on_tick at least every tick_interval. Used by
// UdpServer only.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "gateway/datagram.h"
#include "gateway_shell/answer_mailbox.h"
#include "gateway_shell/udp_server.h"
#include "io/file_descriptor.h"
#include "io/metric_histogram.h"
#include "io/system_error.h"

namespace rw::gateway_shell {

// A bound socket owned by one worker.
struct WorkerSocket {
  io::FileDescriptor fd;
  gateway::Listener listener = gateway::Listener::kAuthentication;
  bool is_v6 = false;
  // Bound to 0.0.0.0 or ::: replies carry the request's destination address
  // as their source (IP_PKTINFO / IPV6_PKTINFO), so a multi-homed host
  // answers from the address the NAS sent to.
  bool wildcard = false;
};

class UdpWorker {
 public:
  // Registers the sockets and `wakeup_fd` with a new epoll instance.
  [[nodiscard]] static Result<std::unique_ptr<UdpWorker>, io::SystemError> create(
      int index, std::vector<WorkerSocket> sockets, std::unique_ptr<gateway::DatagramHandler> handler,
      int wakeup_fd, const UdpServerOptions& options);

  UdpWorker(const UdpWorker&) = delete;
  UdpWorker& operator=(const UdpWorker&) = delete;

  // The thread body: serves until `wakeup_fd` becomes readable. Failures of
  // epoll are fatal (die()).
  void run();

  // Safe to call from any thread.
  [[nodiscard]] WorkerCounters counters() const;
  // The latency of the replies sent from `listener`'s sockets, from the
  // batch their request arrived in to their sendmmsg. Any thread.
  [[nodiscard]] io::HistogramSnapshot latency(gateway::Listener listener) const {
    return latency_[static_cast<std::size_t>(listener)].snapshot();
  }

  // Hands the worker outcomes of its deferred requests; it builds and sends
  // the replies on its own thread. Safe to call from any thread; wake-ups are
  // coalesced (one eventfd write while the worker has not taken the last ones).
  void post_answers(std::span<const AnswerNotice> answers);

 private:
  UdpWorker(int index, std::vector<WorkerSocket> sockets, std::unique_ptr<gateway::DatagramHandler> handler,
            const UdpServerOptions& options);

  // Reads and answers up to a few batches from one socket; returns when the
  // socket has nothing more to read or the batch budget is spent (epoll is
  // level-triggered, so leftovers wake the loop again).
  void serve(std::size_t socket_index);
  // Handles one received batch and queues the replies; returns their number.
  // `now`: when the batch was read, also its requests' Arrival::received.
  std::size_t handle_batch(std::size_t socket_index, std::size_t count, Instant now);
  // Takes the posted answers, asks the handler for their replies and sends them.
  void take_answers();
  // Deferred replies (answers, Simultaneous-Use decisions, timed replies)
  // gathered into the reply slots and sent with one sendmmsg per socket.
  struct DeferredBatch {
    std::size_t queued = 0;
    std::size_t socket = 0;
  };
  // The reply slot the next deferred reply is written into (flushes a full batch).
  [[nodiscard]] std::uint8_t* deferred_slot(DeferredBatch& batch);
  // Queues the reply written at `data` (from deferred_slot).
  void queue_deferred(DeferredBatch& batch, std::uint8_t* data, const gateway::DeferredReply& reply);
  void flush_deferred(DeferredBatch& batch);
  // Fills send slot `slot` with a reply of `size` bytes at `data` for the
  // peer in peers_[peer], leaving from `arrival`'s local address.
  void queue_reply(std::size_t slot, std::uint8_t* data, std::size_t size, std::size_t peer,
                   socklen_t peer_length, const gateway::Arrival& arrival, bool is_v6);
  void prepare_receive();
  void send_replies(const WorkerSocket& socket, std::size_t count);
  // Observes, after a send, the latency of `count` replies to requests that
  // arrived at `received` on `listener`.
  void observe_latency(gateway::Listener listener, Instant received, std::size_t count);
  void tick_if_due();

  // Adds `amount` to a counter that only this worker writes.
  static void add(std::atomic<std::uint64_t>& counter, std::uint64_t amount) {
    counter.store(counter.load(std::memory_order_relaxed) + amount, std::memory_order_relaxed);
  }

  // Room for one IPv4 or IPv6 packet-info control message.
  static constexpr std::size_t kControlBytes = CMSG_SPACE(sizeof(in6_pktinfo));
  struct alignas(cmsghdr) ControlBuffer {
    std::uint8_t bytes[kControlBytes];
  };

  const int index_;
  std::vector<WorkerSocket> sockets_;
  std::unique_ptr<gateway::DatagramHandler> handler_;
  io::FileDescriptor epoll_;
  const std::size_t batch_size_;
  const std::size_t datagram_bytes_max_;
  const Duration tick_interval_;
  Instant next_tick_{};

  // Per-slot buffers, sized once in the constructor.
  std::vector<std::uint8_t> receive_data_;
  std::vector<std::uint8_t> reply_data_;
  std::vector<sockaddr_storage> peers_;
  std::vector<ControlBuffer> receive_control_;
  std::vector<ControlBuffer> send_control_;
  std::vector<iovec> receive_iov_;
  std::vector<iovec> send_iov_;
  std::vector<mmsghdr> receive_messages_;
  std::vector<mmsghdr> send_messages_;

  // Answers posted by other threads.
  std::unique_ptr<AnswerMailbox> answers_;

  std::atomic<std::uint64_t> received_{0};
  std::atomic<std::uint64_t> sent_{0};
  std::atomic<std::uint64_t> oversized_dropped_{0};
  std::atomic<std::uint64_t> send_errors_{0};
  std::atomic<std::uint64_t> receive_errors_{0};
  std::atomic<std::uint64_t> deferred_sent_{0};
  // By gateway::Listener; written by this worker only (one clock read per
  // batch sent), read by the admin thread.
  std::array<io::MetricHistogram, 2> latency_{io::MetricHistogram(io::kLatencyBucketsUs),
                                              io::MetricHistogram(io::kLatencyBucketsUs)};
  // The arrivals of the deferred replies queued in the reply slots, for
  // their latency once sent.
  std::vector<gateway::Arrival> deferred_arrivals_;
};

}  // namespace rw::gateway_shell
