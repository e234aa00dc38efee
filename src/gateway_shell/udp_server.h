// The UDP shell of the gateway: worker threads that receive RADIUS datagrams
// (RFC 2865 §3, RFC 2866 §3) in batches, hand each to their own
// gateway::DatagramHandler and send its reply from the socket the request
// arrived on.
//
// Every worker owns one socket per listen address and listener
// (authentication, accounting), all bound with SO_REUSEPORT, so the kernel
// spreads datagrams over workers by their 4-tuple: retransmissions from one
// NAS source port always reach the same worker and its duplicate cache
// (RFC 5080 §2.2.2). Nothing is allocated per datagram.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"
#include "base/time.h"
#include "config/gateway_config.h"
#include "gateway/datagram.h"
#include "io/file_descriptor.h"
#include "io/metric_histogram.h"
#include "io/system_error.h"

namespace rw::gateway_shell {

// RFC 2865 §3: a RADIUS packet is at most 4096 octets; larger datagrams are
// dropped as oversized.
inline constexpr std::size_t kDatagramBytesMax = 4096;

struct UdpServerOptions {
  // Local addresses to bind; their ports are ignored.
  std::vector<gateway::Endpoint> listen{};
  // 0 asks the kernel for a free port (tests); see listeners() for the result.
  std::uint16_t auth_port = 1812;
  std::uint16_t acct_port = 1813;
  // Skip the exclusivity probe: other processes may join the ports' SO_REUSEPORT groups.
  bool share_ports = false;
  // Worker threads; 0 means one per CPU this process may run on.
  int workers = 0;
  // Datagrams per recvmmsg/sendmmsg call.
  std::size_t batch_size = 32;
  // Receive buffer per datagram: larger datagrams are dropped and counted.
  std::size_t datagram_bytes_max = kDatagramBytesMax;
  // How often each worker calls DatagramHandler::on_tick (at most 100 ms).
  Duration tick_interval = Duration::milliseconds(100);
};

// Builds the options a gateway config asks for.
[[nodiscard]] UdpServerOptions udp_server_options(const config::GatewayConfig& config);

// One bound address, port and listener; every worker has a socket on it.
struct BoundListener {
  gateway::Endpoint local;  // With the port actually bound.
  gateway::Listener listener = gateway::Listener::kAuthentication;
};

// A worker's counters, read while it runs or after stop().
struct WorkerCounters {
  std::uint64_t received = 0;           // Datagrams read, oversized ones included.
  std::uint64_t sent = 0;               // Replies handed to the kernel.
  std::uint64_t oversized_dropped = 0;  // Larger than datagram_bytes_max.
  std::uint64_t send_errors = 0;        // Replies the kernel refused (buffer full, no route).
  std::uint64_t receive_errors = 0;     // recvmmsg failures other than "nothing to read".
  std::uint64_t deferred_sent =
      0;  // Deferred replies (Accounting-Responses) given to sendmmsg; also in `sent`.
};

// What became of a parked request (gateway::Ticket): its record committed
// or refused, a session count, an SQL user, a crypt(3) verdict.
using AnswerNotice = gateway::Answer;

class UdpWorker;

// Owns the sockets and the worker threads. start() binds everything before
// any thread runs, so a busy port is reported as an error rather than a
// partial start. Thread-compatible: call stop() and the accessors from one
// thread.
class UdpServer {
 public:
  // Opens and binds every socket, makes one handler per worker with `factory`
  // (on the calling thread) and starts the workers. Errors name the call and
  // the address, e.g. "bind 0.0.0.0:1812: Address already in use".
  // Requires: options.listen is not empty, batch_size > 0.
  [[nodiscard]] static Result<std::unique_ptr<UdpServer>, io::SystemError> start(
      const UdpServerOptions& options, gateway::DatagramHandlerFactory& factory);

  // Stops the workers if still running.
  ~UdpServer();
  UdpServer(const UdpServer&) = delete;
  UdpServer& operator=(const UdpServer&) = delete;

  // Wakes every worker; each finishes the batch in hand and exits, and this
  // returns once all have joined. Datagrams still queued in the kernel are
  // not read (the NAS retransmits). Idempotent.
  void stop();

  [[nodiscard]] const std::vector<BoundListener>& listeners() const { return listeners_; }
  // The port bound for the `index`-th listen address and `listener`.
  [[nodiscard]] std::uint16_t bound_port(std::size_t index, gateway::Listener listener) const;
  [[nodiscard]] int worker_count() const { return static_cast<int>(workers_.size()); }
  // A snapshot of every worker's counters, by worker index.
  [[nodiscard]] std::vector<WorkerCounters> counters() const;
  // The reply latency of `listener`, summed over the workers (UdpWorker::latency).
  [[nodiscard]] io::HistogramSnapshot latency(gateway::Listener listener) const;

  // Hands deferred-request outcomes to worker `worker` (gateway::ticket_worker
  // of their tickets). Safe from any thread until the server is destroyed;
  // after stop() the answers are never sent. Unknown workers are ignored.
  void post_answers(int worker, std::span<const AnswerNotice> answers);

 private:
  UdpServer();

  std::vector<BoundListener> listeners_;
  io::FileDescriptor wakeup_;  // eventfd: readable once stop() has been called.
  std::vector<std::unique_ptr<UdpWorker>> workers_;
  std::vector<std::thread> threads_;
};

// Sums the counters of all workers.
[[nodiscard]] WorkerCounters total(const std::vector<WorkerCounters>& counters);

// "received 10 sent 9 oversized_dropped 1 send_errors 0 receive_errors 0".
[[nodiscard]] std::string to_string(const WorkerCounters& counters);

// Logs each worker's counters and their total at info level (at exit; the
// admin API will serve them later).
void log_counters(const std::vector<WorkerCounters>& counters);

}  // namespace rw::gateway_shell
