// The gateway's submission client: one thread that runs the pure
// submission::Forwarder with real non-blocking TCP connections to the
// members (docs/wire_formats.md "Gateway-to-member frames"), takes records
// from the UDP workers through a bounded queue, and routes each Answer back
// to the worker whose ticket it carries (docs/design.md invariant 1: the
// Accounting-Response goes out only after the Committed).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/result.h"
#include "gateway/accounting_sink.h"
#include "gateway_shell/udp_server.h"
#include "io/csprng.h"
#include "io/file_descriptor.h"
#include "io/system_error.h"
#include "io/tls_context.h"
#include "submission/forwarder.h"
#include "submission/frames.h"

namespace rw::gateway_shell {

struct SubmissionClientOptions {
  // Members, batching and pending bounds; see submission::ForwarderOptions.
  submission::ForwarderOptions forwarder{};
  // Records the workers may hand over before the client thread takes them
  // (the queue between them). At the bound submit() refuses: the worker
  // forgets the request and the NAS retries (docs/limits.md).
  std::size_t queue_records_max = 16384;
  std::size_t queue_bytes_max = 16 << 20;
  // How often at most the status seen by other threads is refreshed.
  Duration status_interval = Duration::milliseconds(100);
  // A client context of make_tls_context: each connection must complete a
  // TLS 1.3 handshake in which the member presents a certificate of the
  // cluster CA naming member_ids[address] (CN member-<id>). Null: plaintext
  // (insecure_plaintext_cluster). The forwarder's connect_timeout bounds
  // connect, handshake and HelloAck together.
  io::TlsContext tls{};
  std::map<std::string, std::uint64_t> member_ids{};  // Submission address -> raft id.
};

// Called on the client thread with answers for one worker (the worker of
// their tickets, gateway::ticket_worker): committed ones are due, the others
// were refused. Must not block for long (UdpServer::post_answers).
using AnswerRouter = std::function<void(int worker, std::span<const AnswerNotice> answers)>;

// Owns the thread, the epoll instance and the TCP connection. submit() is
// safe from any thread; create, start, stop and destruction from one.
class SubmissionClient final : public gateway::AccountingSink {
 public:
  [[nodiscard]] static Result<std::unique_ptr<SubmissionClient>, io::SystemError> create(
      SubmissionClientOptions options);

  ~SubmissionClient() override;
  SubmissionClient(const SubmissionClient&) = delete;
  SubmissionClient& operator=(const SubmissionClient&) = delete;

  // Queues a copy of the record for the client thread; false when the queue
  // is at its bound. Records queued before start() wait for it. A record the
  // forwarder refuses later is answered as refused through the router.
  [[nodiscard]] bool submit(const accounting::RecordKey& key, Bytes record, gateway::Ticket ticket) override;

  // Queues a Simultaneous-Use query for the client thread; false when the
  // queue is at its bound (queue_records_max counts queries too). The count
  // comes back through the router as an AnswerNotice with session_query set.
  [[nodiscard]] bool count_sessions(std::string_view user_name, gateway::Ticket ticket) override;

  // Starts the thread: connects to the first member and submits. Answers go
  // to `router`. Requires: not started yet.
  [[nodiscard]] Result<void, io::SystemError> start(AnswerRouter router);

  // Stops the thread and closes the connection. Pending records are
  // dropped unanswered (their NAS retries against the next gateway run).
  // Idempotent.
  void stop();

  // The forwarder's status as of at most status_interval ago. Any thread.
  [[nodiscard]] submission::ForwarderStatus status() const;
  // Records refused at the queue bound since start (the forwarder counts its own).
  [[nodiscard]] std::uint64_t queue_refused() const { return queue_refused_.load(std::memory_order_relaxed); }
  // Connections dropped because the TLS handshake failed or the member's
  // certificate did not name the member meant (docs/security.md).
  [[nodiscard]] std::uint64_t tls_refused() const { return tls_refused_.load(std::memory_order_relaxed); }
  // How often submit() has woken the client thread since creation: once per
  // record that finds the queue empty while the forwarder would send it at
  // once, and once per batch's worth of records otherwise
  // (docs/accounting.md "Waking the submission thread").
  [[nodiscard]] std::uint64_t record_wakeups() const {
    return record_wakeups_.load(std::memory_order_relaxed);
  }

 private:
  struct QueuedRecord {
    submission::RecordKey key{};
    gateway::Ticket ticket = 0;
    std::size_t offset = 0;  // In the bytes vector of its batch.
    std::size_t length = 0;
  };
  struct QueuedQuery {
    gateway::Ticket ticket = 0;
    std::array<char, submission::kUserNameBytesMax> user_name{};
    std::size_t user_name_length = 0;
  };
  struct Connection;

  explicit SubmissionClient(SubmissionClientOptions options);

  void run();
  void take_records(Instant now);
  void apply(Instant now, submission::Actions actions);
  void connect(Instant now, const submission::Connect& connect);
  void close_connection();
  void lose_connection(Instant now);
  void on_writable(Instant now);
  void on_readable(Instant now);
  // Drives the TLS handshake, then checks the member's name; false when the
  // connection was lost.
  [[nodiscard]] bool handshake(Instant now);
  // Writes what is buffered; false when the connection broke.
  [[nodiscard]] bool flush_output();
  void update_interest();
  // Registers EPOLLIN, and EPOLLOUT when `want_write`, if that changed.
  void set_interest(bool want_write);
  void route_answers();
  // Asks the forwarder until when new records would only wait, and tells
  // submit() whether to wake the thread for them; true when records are
  // queued that the thread must take at once.
  [[nodiscard]] bool settle_record_wakeups(Instant now);
  void publish_status(Instant now, bool force);
  // One log line per failover, when the forwarder counts a new one.
  void log_failover();

  SubmissionClientOptions options_;
  io::FileDescriptor epoll_;
  io::FileDescriptor records_event_;  // Written by submit() when the queue was empty.
  io::FileDescriptor stop_event_;
  std::thread thread_;
  AnswerRouter router_;

  std::mutex queue_mutex_;
  std::vector<QueuedRecord> queued_;         // Guarded by queue_mutex_.
  std::vector<std::uint8_t> queued_bytes_;   // Guarded by queue_mutex_.
  std::vector<QueuedQuery> queued_queries_;  // Guarded by queue_mutex_.
  // Whether the first record into an empty queue wakes the thread; false
  // while the forwarder would only queue it (records_due_). Guarded by
  // queue_mutex_.
  bool wake_for_records_ = true;
  std::atomic<std::uint64_t> queue_refused_{0};
  std::atomic<std::uint64_t> record_wakeups_{0};
  std::atomic<std::uint64_t> tls_refused_{0};

  // The client thread's own state.
  std::vector<QueuedRecord> taken_;
  std::vector<std::uint8_t> taken_bytes_;
  std::vector<QueuedQuery> taken_queries_;
  // When the thread takes the records submit() queued without waking it.
  std::optional<Instant> records_due_{};
  io::ThreadLocalCsprng random_;  // Jitters the forwarder's backoffs.
  std::unique_ptr<submission::Forwarder> forwarder_;
  std::unique_ptr<Connection> connection_;
  std::vector<std::vector<AnswerNotice>> answers_by_worker_;
  Instant status_published_at_{};
  // The counters at the last link warning (submission/link_warning.h) and
  // when it was logged: at most one per kLinkWarningInterval.
  submission::ForwarderCounters warned_counters_{};
  std::optional<Instant> warned_at_{};
  std::uint64_t failovers_logged_ = 0;
  Instant reader_released_at_{};  // FrameReader::release_idle, at most once per kReaderReleaseInterval

  mutable std::mutex status_mutex_;
  submission::ForwarderStatus status_{};  // Guarded by status_mutex_.
};

}  // namespace rw::gateway_shell
