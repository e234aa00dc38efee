// The gateway's EAP forwarder (docs/design.md "EAP across several
// gateways"): one thread and one UDP socket, the forwarding listener
// (eap.forward.listen), for both directions of docs/wire_formats.md "EAP
// forwarding".
//
// As the sender: a worker (or the RadSec thread) whose request's State names
// a peer gateway hands it over through forward() and moves on; this thread
// sends it to the peer and, when the peer's reply comes, posts it back to
// that worker as an Answer (AnswerKind::kForwarded), which the worker checks
// and relays to the NAS from its own socket. A forward nobody answers is
// forgotten after `timeout` (the worker drops it at the same time).
//
// As the owner: a forward from a peer that passes gateway::ForwardGate is
// decided by this thread's own gateway::DatagramHandler, made like a
// worker's, as if the NAS had sent it here (same client lookup by the NAS's
// address, same handler, the shared EAP conversations); its reply, now or
// once SQL or the crypt(3) pool answered, goes back to the peer.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "base/time.h"
#include "gateway/datagram.h"
#include "gateway/eap_forward.h"
#include "gateway_shell/answer_mailbox.h"
#include "gateway_shell/udp_server.h"
#include "io/admin_metrics.h"
#include "io/file_descriptor.h"
#include "io/system_error.h"

namespace rw::gateway_shell {

// docs/limits.md "EAP forwarding".
struct EapForwarderOptions {
  gateway::Endpoint listen{};  // Address and port (0: the kernel picks one, tests).
  std::uint32_t self = 0;      // This gateway's eap.gateway_id.
  std::vector<gateway::ForwardPeer> peers{};
  std::vector<std::uint8_t> key{};  // At least gateway::kForwardKeyLengthMin octets.
  // A forward not answered by then is forgotten; so is a request decided
  // here for a peer whose reply never became due.
  Duration timeout = Duration::seconds(1);
  // Forwards queued or in flight at once, and forwarded requests being
  // decided here at once; beyond, new ones are refused.
  std::size_t in_flight_max = 1024;
  // How far a peer's clock may be from ours.
  std::int64_t clock_window_ms = 30'000;
  Duration tick_interval = Duration::milliseconds(100);
};

// Where the replies of forwards go: the worker (gateway::ticket_worker) that
// holds the request. Must not block for long (UdpServer::post_answers).
using ForwardAnswerSink = std::function<void(int worker, std::span<const AnswerNotice> answers)>;

struct EapForwarderCounters {
  std::uint64_t forwarded = 0;    // Requests sent to a peer.
  std::uint64_t answered = 0;     // Peers' replies handed back to a worker.
  std::uint64_t timed_out = 0;    // Forwards no reply came for in time.
  std::uint64_t queue_full = 0;   // Forwards refused at in_flight_max.
  std::uint64_t send_errors = 0;  // Messages the kernel refused.
  std::uint64_t decided = 0;      // Peers' requests handed to the handler here.
  std::uint64_t replied = 0;      // Replies sent back to a peer.
  std::uint64_t busy = 0;         // Peers' requests refused at in_flight_max.
  std::array<std::uint64_t, static_cast<std::size_t>(gateway::ForwardRefusal::kCount)> refused{};
};

// The forwarding key file (eap.forward.key_file): its octets, a final
// newline dropped; at least gateway::kForwardKeyLengthMin of them, or an
// error naming the file.
[[nodiscard]] Result<std::vector<std::uint8_t>, std::string> read_forward_key(const std::string& path);

class EapForwarder final : public gateway::EapForwardSink {
 public:
  // Binds the socket and starts the thread. `handler` decides peers'
  // requests; its tickets name worker `worker`, whose answers come through
  // post_answers. Requires: options.key is long enough, the peers valid for
  // gateway::ForwardGate.
  [[nodiscard]] static Result<std::unique_ptr<EapForwarder>, io::SystemError> start(
      EapForwarderOptions options, std::unique_ptr<gateway::DatagramHandler> handler, int worker,
      ForwardAnswerSink answers);

  ~EapForwarder() override;
  EapForwarder(const EapForwarder&) = delete;
  EapForwarder& operator=(const EapForwarder&) = delete;

  // Stops the thread; forwards in flight are not answered (the NAS retries). Idempotent.
  void stop();

  // gateway::EapForwardSink; any thread.
  [[nodiscard]] bool knows(std::uint32_t gateway_id) const override;
  [[nodiscard]] bool forward(std::uint32_t gateway_id, gateway::Ticket ticket, gateway::Listener listener,
                             const gateway::Endpoint& from, Bytes datagram) override;

  // Answers for the handler's parked requests (SQL, crypt(3)). Any thread.
  void post_answers(std::span<const AnswerNotice> answers) { answers_->post(answers); }

  [[nodiscard]] int worker() const { return worker_; }
  [[nodiscard]] const gateway::Endpoint& bound() const { return bound_; }
  [[nodiscard]] EapForwarderCounters counters() const;

 private:
  // A request a worker handed over, waiting for the thread.
  struct Outgoing {
    std::uint32_t gateway_id = 0;
    gateway::Ticket ticket = 0;
    gateway::Listener listener = gateway::Listener::kAuthentication;
    gateway::Endpoint from{};
    std::size_t length = 0;
    std::array<std::uint8_t, gateway::kForwardPayloadMax> datagram{};
  };
  // A forward sent and not answered yet, by request id.
  struct InFlight {
    gateway::Ticket ticket = 0;
    std::size_t peer = 0;
    Instant deadline{};
  };
  // A peer's request decided here whose reply comes later, by the
  // Arrival::connection id it was handed to the handler with.
  struct Inbound {
    std::size_t peer = 0;
    std::uint64_t request_id = 0;
    gateway::Listener listener = gateway::Listener::kAuthentication;
    gateway::Endpoint nas{};
    Instant deadline{};
  };

  EapForwarder(EapForwarderOptions options, std::unique_ptr<gateway::DatagramHandler> handler, int worker,
               ForwardAnswerSink answers);

  void run();
  void send_outgoing(Instant now);
  void receive(Instant now);
  void on_message(Bytes message, const gateway::Endpoint& source, Instant now);
  void on_request(const gateway::ForwardMessage& message, std::size_t peer, Instant now);
  void on_reply(const gateway::ForwardMessage& message, std::size_t peer);
  void take_answers(Instant now);
  // Sends the handler's reply (in reply_buffer_) to the peer that forwarded it.
  void send_reply(const Inbound& inbound, std::size_t length);
  void send_to(std::size_t peer, Bytes message);
  void tick(Instant now);
  void refuse(gateway::ForwardRefusal refusal) { add(refused_[static_cast<std::size_t>(refusal)]); }

  static void add(std::atomic<std::uint64_t>& counter, std::uint64_t amount = 1) {
    counter.fetch_add(amount, std::memory_order_relaxed);
  }

  EapForwarderOptions options_;
  gateway::ForwardCodec codec_;
  gateway::ForwardGate gate_;  // The thread's.
  std::unique_ptr<gateway::DatagramHandler> handler_;
  const int worker_;
  ForwardAnswerSink answer_sink_;
  io::FileDescriptor socket_;
  gateway::Endpoint bound_{};
  io::FileDescriptor epoll_;
  io::FileDescriptor stop_event_;
  io::FileDescriptor outgoing_event_;
  std::unique_ptr<AnswerMailbox> answers_;
  std::thread thread_;

  // Workers' side: the queue, swapped by the thread. `outstanding_` counts
  // the queued and in-flight forwards against in_flight_max.
  std::mutex mutex_;
  std::vector<Outgoing> queued_;  // Guarded by mutex_; capacity in_flight_max.
  std::atomic<std::size_t> outstanding_{0};

  // The thread's.
  std::vector<Outgoing> taken_;
  std::unordered_map<std::uint64_t, InFlight> in_flight_;
  std::unordered_map<std::uint64_t, Inbound> inbound_;
  std::uint64_t next_request_id_ = 0;
  std::uint64_t next_inbound_ = 1;
  Instant next_tick_{};
  std::vector<std::uint8_t> receive_buffer_;
  std::vector<std::uint8_t> message_buffer_;
  std::vector<std::uint8_t> reply_buffer_;

  std::atomic<std::uint64_t> forwarded_{0};
  std::atomic<std::uint64_t> answered_{0};
  std::atomic<std::uint64_t> timed_out_{0};
  std::atomic<std::uint64_t> queue_full_{0};
  std::atomic<std::uint64_t> send_errors_{0};
  std::atomic<std::uint64_t> decided_{0};
  std::atomic<std::uint64_t> replied_{0};
  std::atomic<std::uint64_t> busy_{0};
  std::array<std::atomic<std::uint64_t>, static_cast<std::size_t>(gateway::ForwardRefusal::kCount)>
      refused_{};
};

// Adds the forwarder's counters to a /metrics page (docs/admin_api.md "/metrics").
void add_eap_forward_metrics(io::PrometheusText& page, const EapForwarder& forwarder);

}  // namespace rw::gateway_shell
