// The RadSec listener of the gateway (RFC 6614): RADIUS over TLS on TCP,
// default port 2083, with mutual certificates. One thread owns the listening
// sockets and every connection in one epoll loop over non-blocking sockets:
// handshakes, reads and writes never block, so a peer that stalls its
// handshake holds one connection slot until its handshake timeout and never
// the accept path. Packets are framed by their Length field
// (radius::StreamReader) and handed to the same gateway::DatagramHandler the
// UDP workers run, with Listener::kRadSec, so the duplicate cache and the
// accounting rule (an Accounting-Response only once its record is
// committed) hold alike; replies go back on the connection the request came
// in on, in the order they are decided (docs/architecture.md "RadSec").
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "base/time.h"
#include "config/gateway_config.h"
#include "gateway/datagram.h"
#include "gateway_shell/answer_mailbox.h"
#include "gateway_shell/udp_server.h"
#include "io/file_descriptor.h"
#include "io/system_error.h"
#include "io/tls_context.h"
#include "radius/stream_reader.h"

namespace rw::gateway_shell {

// Bounds and timeouts of the RadSec listener (docs/limits.md "RadSec").
struct RadSecServerOptions {
  // Local addresses to listen on; their ports are ignored.
  std::vector<gateway::Endpoint> listen{};
  // RFC 6614 §2.1; 0 asks the kernel for a free port (tests).
  std::uint16_t port = 2083;
  // The server certificate and the CA client certificates must chain to
  // (io::TlsVersions::k12And13, io::TlsRole::kServer).
  io::TlsContext tls{};
  // A connection whose handshake is not done by then is closed.
  Duration handshake_timeout = Duration::seconds(10);
  // An established connection with no packet in either direction for this
  // long is closed.
  Duration idle_timeout = Duration::seconds(120);
  // Connections open at once, handshaking or established; a connection
  // beyond is closed at accept.
  std::size_t connections_max = 1024;
  // The same, per RadSec client entry.
  std::size_t client_connections_max = 64;
  // Reply octets waiting to be written on one connection: at the bound the
  // connection stops reading requests until the peer has read its replies.
  std::size_t buffered_bytes_max = 256 * 1024;
  // How often the handler's on_tick runs and deadlines are checked.
  Duration tick_interval = Duration::milliseconds(100);
};

// The options of a gateway config's `radsec` section (which must be set),
// without the TLS context, which the caller builds (app::gateway_tls_context).
[[nodiscard]] RadSecServerOptions radsec_server_options(const config::GatewayConfig& config);

// Who a connecting peer is, known from its address before the handshake.
struct RadSecPeer {
  // The label of its RadSec client entry (with its tenant's name for
  // tenants other than `default`): its connections count under it.
  std::string client{};
  // The context its handshake runs with: the server certificate of the
  // gateway and the CA of the client entry's tenant, which the peer's
  // certificate must chain to (docs/security.md "RadSec"); null: the
  // server's own (RadSecServerOptions::tls).
  io::TlsContext tls{};
  // The entry's certificate_name: when not empty, the verified certificate
  // must name it (certificate_names_match), else kCertificateMismatch.
  std::string certificate_name{};
};

// Who a connecting peer is, or nothing when no RadSec client entry matches
// its address (the connection is refused). Called on the server's thread.
using RadSecClientLookup = std::function<std::optional<RadSecPeer>(const gateway::Endpoint& peer)>;

// Why a connection was refused before it carried a packet.
enum class RadSecRefusal : std::uint8_t {
  kUnknownClient,             // No RadSec client entry for the source address.
  kTooManyConnections,        // connections_max reached.
  kTooManyClientConnections,  // client_connections_max reached for its client.
  kHandshakeFailed,           // TLS failed: no certificate, one that does not verify, a protocol error.
  kHandshakeTimeout,          // handshake_timeout passed first.
  kCertificateMismatch,       // The certificate does not name the entry's certificate_name.
  kCount,
};
[[nodiscard]] std::string_view to_string(RadSecRefusal refusal);

// Why an established connection was closed.
enum class RadSecClose : std::uint8_t {
  kPeerClosed,   // The peer closed (TLS close_notify or TCP end).
  kIdleTimeout,  // idle_timeout without a packet.
  kBadLength,    // A Length field < 20 or > 4096 (RFC 6613).
  kError,        // A TLS or socket error.
  kCount,
};
[[nodiscard]] std::string_view to_string(RadSecClose reason);

// The listener's counters, read while it runs.
struct RadSecCounters {
  std::uint64_t accepted = 0;     // TCP connections taken in for a handshake.
  std::uint64_t established = 0;  // Handshakes done.
  std::uint64_t open = 0;         // Connections open now.
  std::array<std::uint64_t, static_cast<std::size_t>(RadSecRefusal::kCount)> refused{};
  std::array<std::uint64_t, static_cast<std::size_t>(RadSecClose::kCount)> closed{};
  std::uint64_t packets_in = 0;   // Packets framed and handed to the handler.
  std::uint64_t packets_out = 0;  // Replies queued on their connection.
  // Deferred replies whose connection had closed meanwhile (not sent).
  std::uint64_t replies_orphaned = 0;
  std::uint64_t accept_errors = 0;  // accept4 failures (EMFILE, ...).
};

class RadSecServer {
 public:
  // Binds every listening socket and starts the thread. `handler` is made
  // for worker `worker` (its tickets name it: answers for them go to
  // post_answers). Errors name the call and the address.
  // Requires: options.listen is not empty and options.tls is set.
  [[nodiscard]] static Result<std::unique_ptr<RadSecServer>, io::SystemError> start(
      RadSecServerOptions options, std::unique_ptr<gateway::DatagramHandler> handler, int worker,
      RadSecClientLookup lookup);

  ~RadSecServer();
  RadSecServer(const RadSecServer&) = delete;
  RadSecServer& operator=(const RadSecServer&) = delete;

  // Stops the thread and closes every connection; requests still waiting
  // are not answered (the peer retries). Idempotent.
  void stop();

  // The worker index of the handler (gateway::ticket_worker of its tickets).
  [[nodiscard]] int worker() const { return worker_; }
  // The addresses bound, with their ports.
  [[nodiscard]] const std::vector<gateway::Endpoint>& listeners() const { return listeners_; }
  // Safe from any thread.
  [[nodiscard]] RadSecCounters counters() const;

  // Hands the handler outcomes of its deferred requests (as
  // UdpServer::post_answers). Safe from any thread; after stop() they are dropped.
  void post_answers(std::span<const AnswerNotice> answers);

 private:
  struct Connection;
  RadSecServer(RadSecServerOptions options, std::unique_ptr<gateway::DatagramHandler> handler, int worker,
               RadSecClientLookup lookup);

  void run();
  void accept_from(std::size_t listener, Instant now);
  void refuse(RadSecRefusal refusal);
  void on_ready(std::uint64_t id, std::uint32_t events, Instant now);
  void drive_handshake(Connection& connection, Instant now);
  // After the handshake: whether the peer certificate names the entry's
  // certificate_name (or it has none); if not, marks the connection refused.
  [[nodiscard]] bool certificate_names_entry(Connection& connection);
  void read_packets(Connection& connection, Instant now);
  void handle_bytes(Connection& connection, Bytes input, Instant now, std::int64_t unix_ms);
  void queue_reply(Connection& connection, Bytes reply);
  void flush(Connection& connection);
  void update_interest(Connection& connection);
  // Erases `id` if something marked it closed.
  void reap(std::uint64_t id);
  void close_connection(Connection& connection);
  void take_answers(Instant now);
  void send_deferred(const gateway::DeferredReply& reply);
  void tick(Instant now);
  void pause_accepting(Instant now);
  void resume_accepting();

  static void add(std::atomic<std::uint64_t>& counter, std::uint64_t amount = 1) {
    counter.store(counter.load(std::memory_order_relaxed) + amount, std::memory_order_relaxed);
  }

  RadSecServerOptions options_;
  std::unique_ptr<gateway::DatagramHandler> handler_;
  const int worker_;
  RadSecClientLookup lookup_;
  std::vector<io::FileDescriptor> listen_sockets_;
  std::vector<gateway::Endpoint> listeners_;
  io::FileDescriptor epoll_;
  io::FileDescriptor stop_event_;
  std::unique_ptr<AnswerMailbox> answers_;  // Answers posted by other threads.
  std::thread thread_;

  // Owned by the thread.
  std::unordered_map<std::uint64_t, std::unique_ptr<Connection>> connections_;
  std::unordered_map<std::string, std::size_t> client_connections_;
  std::uint64_t next_id_ = 1;
  // Connections with bytes left in the TLS layer or a spent read budget:
  // served again before the loop sleeps.
  std::vector<std::uint64_t> again_;
  std::optional<Instant> accepting_paused_until_{};
  Instant next_tick_{};
  std::vector<std::uint8_t> read_buffer_;
  std::vector<std::uint8_t> reply_buffer_;

  std::atomic<std::uint64_t> accepted_{0};
  std::atomic<std::uint64_t> established_{0};
  std::atomic<std::uint64_t> open_{0};
  std::array<std::atomic<std::uint64_t>, static_cast<std::size_t>(RadSecRefusal::kCount)> refused_{};
  std::array<std::atomic<std::uint64_t>, static_cast<std::size_t>(RadSecClose::kCount)> closed_{};
  std::atomic<std::uint64_t> packets_in_{0};
  std::atomic<std::uint64_t> packets_out_{0};
  std::atomic<std::uint64_t> replies_orphaned_{0};
  std::atomic<std::uint64_t> accept_errors_{0};
};

}  // namespace rw::gateway_shell
