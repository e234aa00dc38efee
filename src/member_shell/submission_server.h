// The member's submission listener: gateways connect over TLS 1.3 with a
// certificate of the cluster CA (docs/security.md "Submission port") and
// submit records (docs/wire_formats.md "Gateway-to-member frames"). One epoll
// thread owns every connection: non-blocking sockets, a TLS stream, a
// FrameReader and a bounded write buffer each, and the per-connection protocol in
// member_shell::SubmissionSession. It submits entries to the consensus Node and
// runs the Node's completions on its own thread, woken through an eventfd.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>

#include "base/result.h"
#include "base/time.h"
#include "consensus/node.h"
#include "io/file_descriptor.h"
#include "io/metric_histogram.h"
#include "io/system_error.h"
#include "io/tls_context.h"
#include "member_shell/ledger_state.h"
#include "member_shell/submission_session.h"

namespace rw::member_shell {

struct SubmissionServerOptions {
  std::string host = "127.0.0.1";  // IPv4 or IPv6 address to listen on ("::1", no brackets).
  std::uint16_t port = 0;          // 0: the kernel picks one (see port()).
  std::uint64_t member_id = 0;
  member_shell::SubmissionAddressBook book{};
  // Connections past this bound are accepted and closed at once (each one
  // owns a FrameReader of one maximal frame, 1 MiB: docs/limits.md).
  std::size_t connections_max = 64;
  // Answers waiting for a peer that does not read: past this the connection
  // is closed (its Submits are re-submitted by the gateway).
  std::size_t write_bytes_max = std::size_t{4} << 20;
  // A server context of make_tls_context: every connection must complete a
  // TLS 1.3 handshake with a client certificate of the cluster CA whose CN
  // is gateway-<name>. Null: plaintext (insecure_plaintext_cluster).
  io::TlsContext tls{};
  // From accept to the Hello frame (TLS handshake included): a silent or
  // slow peer is closed, so that idle sockets cannot hold the slots.
  Duration hello_timeout = Duration::seconds(5);
  // Nothing received for this long (gateways ping every second when idle)
  // and nothing outstanding: closed.
  Duration idle_timeout = Duration::seconds(30);
  // Submits of one connection handed to the Node and not yet answered; past
  // it a Submit is answered Busy(queue_full) (gateways keep 32 in flight).
  std::size_t outstanding_submits_max = 256;
  // Bytes of entries of all connections handed to the Node and not yet
  // answered: past it a Submit is answered Busy(queue_full). The Node's
  // queue also has a bound in count (NodeOptions).
  std::size_t pending_entry_bytes_max = std::size_t{64} << 20;
};

// Counters, readable from any thread.
struct SubmissionServerCounters {
  std::atomic<std::uint64_t> connections_accepted{0};
  std::atomic<std::uint64_t> connections_refused{0};  // Over connections_max.
  std::atomic<std::uint64_t> connections_closed{0};   // By the peer or by us, any reason.
  std::atomic<std::uint64_t> submits{0};              // Submit frames received.
  std::atomic<std::uint64_t> records{0};              // Records in entries handed to the Node.
  std::atomic<std::uint64_t> committed{0};            // Committed frames sent.
  std::atomic<std::uint64_t> not_leader{0};           // NotLeader frames sent.
  std::atomic<std::uint64_t> busy{0};                 // Busy frames sent.
  std::atomic<std::uint64_t> session_counts{0};       // SessionCountAnswer frames sent (Simultaneous-Use).
  std::atomic<std::uint64_t> write_overflows{0};      // Closed past write_bytes_max.
  std::atomic<std::uint64_t> tls_refused{0};          // Handshake failed or the CN is not gateway-*.
  std::atomic<std::uint64_t> hello_timeouts{0};       // Closed: no Hello within hello_timeout.
  std::atomic<std::uint64_t> idle_timeouts{0};        // Closed: silent for idle_timeout.
  std::atomic<std::uint64_t> submits_over_limit{
      0};  // Busy: outstanding_submits_max or pending_entry_bytes_max.
  std::array<std::atomic<std::uint64_t>, member_shell::kCloseReasonCount>
      protocol_closes{};  // By CloseReason.
};

class SubmissionServer {
 public:
  // Binds and listens; no thread yet. Errors name the call and the address.
  [[nodiscard]] static Result<std::unique_ptr<SubmissionServer>, io::SystemError> bind(
      SubmissionServerOptions options);
  ~SubmissionServer();  // stop()
  SubmissionServer(const SubmissionServer&) = delete;
  SubmissionServer& operator=(const SubmissionServer&) = delete;

  // Any thread, also before start(): makes the server thread run the Node's
  // completions. Give it to NodeOptions::on_completions_ready.
  void wake();

  // Starts the thread. `node` and `ledger` must outlive stop().
  void start(consensus::Node& node, const member_shell::LedgerState& ledger);

  // Joins the thread and closes every connection. Idempotent. Stop the Node
  // first, so that its last completions (Busy, closes) still reach gateways.
  void stop();

  [[nodiscard]] std::uint16_t port() const { return port_; }
  [[nodiscard]] const SubmissionServerCounters& counters() const { return counters_; }
  // Submits handed to the Node and not yet answered.
  [[nodiscard]] std::uint64_t pending_submissions() const { return pending_.load(std::memory_order_relaxed); }
  // Bytes of those Submits' entries (bounded by pending_entry_bytes_max).
  [[nodiscard]] std::uint64_t pending_entry_bytes() const {
    return pending_bytes_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::size_t connections() const { return open_connections_.load(std::memory_order_relaxed); }
  // From a Submit handed to the Node to its commit (microseconds), and the
  // records of each Submit handed over; written by the server thread, read
  // from any thread.
  [[nodiscard]] io::HistogramSnapshot commit_latency() const { return commit_latency_.snapshot(); }
  [[nodiscard]] io::HistogramSnapshot batch_records() const { return batch_records_.snapshot(); }

 private:
  struct Connection;
  explicit SubmissionServer(SubmissionServerOptions options);

  void run();
  void on_listener_ready();
  void on_readable(Connection& connection);
  // Drives the TLS handshake; false when the connection was closed.
  bool handshake(Connection& connection);
  void sweep(Instant now);
  void watch_writes(Connection& connection, bool want_writes);
  // Carries out one answer; false when the connection was closed.
  bool carry_out(Connection& connection, member_shell::SessionAnswer answer);
  void on_outcome(std::uint64_t connection_id, std::uint64_t request_id, const consensus::Outcome& outcome);
  bool send(Connection& connection, const std::vector<std::uint8_t>& frame);
  bool flush(Connection& connection);
  void close(std::uint64_t connection_id);
  [[nodiscard]] member_shell::MemberView view() const;
  void count_reply(const std::vector<std::uint8_t>& frame);

  SubmissionServerOptions options_;
  io::FileDescriptor listener_{};
  io::FileDescriptor epoll_{};
  io::FileDescriptor wake_{};  // eventfd
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_{};
  consensus::Node* node_ = nullptr;
  const member_shell::LedgerState* ledger_ = nullptr;
  std::unordered_map<std::uint64_t, std::unique_ptr<Connection>> connections_;  // Server thread only.
  std::uint64_t next_connection_id_ = 3;  // 1 and 2 tag the listener and the eventfd in epoll.
  std::atomic<std::uint64_t> pending_{0};
  std::atomic<std::uint64_t> pending_bytes_{0};
  Instant last_sweep_{};
  std::atomic<std::size_t> open_connections_{0};
  SubmissionServerCounters counters_{};
  io::MetricHistogram commit_latency_{io::kLatencyBucketsUs};
  io::MetricHistogram batch_records_{io::kBatchRecordBuckets};
};

}  // namespace rw::member_shell
