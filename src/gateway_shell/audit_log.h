// The audit log's writer (docs/operations.md "Audit log"): receives every
// Access-Request decision on the UDP workers, queues it (bounded; never
// waits on the disk) and one thread per file chains the lines
// (audit/chain.h), writes, fsyncs, rotates and, when the file already
// exists, continues its chain. One AuditLog per configured audit file: the
// gateway's today, each tenant's later.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "audit/chain.h"
#include "base/result.h"
#include "base/time.h"
#include "config/gateway_config.h"
#include "gateway/request_handler.h"
#include "io/admin_metrics.h"
#include "io/admin_server.h"
#include "io/file_descriptor.h"

namespace rw::gateway_shell {

struct AuditLogOptions {
  std::string path{};
  std::uint64_t rotate_bytes = 64 * 1024 * 1024;
  std::size_t keep = 10;
  Duration fsync_interval = Duration::milliseconds(1000);
  std::optional<std::string> key{};  // HMAC-SHA256 key; none: SHA-256.
  std::size_t queue_lines_max = 65536;
  // The tenant whose decisions this writer logs; others' are not its own
  // (one writer per tenant, docs/design.md "Tenants").
  std::string tenant{config::kDefaultTenantName};
};

// The writer's figures, readable from any thread.
struct AuditLogStatus {
  std::string path{};
  audit::Head head{};              // The last line written to the chain.
  std::uint64_t written = 0;       // Lines whose bytes reached the file.
  std::uint64_t dropped = 0;       // Decisions lost at the queue bound (each counted in a gap line).
  std::uint64_t write_errors = 0;  // Failed write, fsync, open or rename calls (each retried).
  std::uint64_t rotations = 0;
  std::size_t queued = 0;
};

// The HMAC key of `path`: its bytes with one trailing newline removed;
// refused when shorter than 16 bytes (a guessable key protects nothing).
[[nodiscard]] Result<std::string, std::string> read_audit_key(const std::string& path);

class AuditLog final : public gateway::DecisionObserver {
 public:
  // Opens `options.path` and starts the writer thread. An existing file
  // whose last line is whole and verifies is continued; one with a torn or
  // foreign last line is rotated aside and the new file's header says so
  // (audit::HeaderReason::kTornTail). Errors: the file cannot be opened.
  [[nodiscard]] static Result<std::unique_ptr<AuditLog>, std::string> open(AuditLogOptions options);
  ~AuditLog() override;
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  // On a worker: copies the decision into the queue, or counts it lost when
  // the queue holds queue_lines_max. Never touches the file.
  void on_decision(const gateway::Decision& decision) override;
  [[nodiscard]] AuditLogStatus status() const;
  // The tenant whose decisions this writer logs (AuditLogOptions::tenant).
  [[nodiscard]] const std::string& tenant() const { return options_.tenant; }
  // Writes what is queued, fsyncs and joins the thread. Idempotent.
  void stop();

 private:
  struct Queued {
    std::int64_t unix_ms = 0;
    std::string client;
    std::string address;
    std::string identity;
    std::string_view method;  // Static names (gateway::to_string).
    bool accepted = false;
    std::string rule;
    std::string_view reason;  // Static names.
  };

  AuditLog(AuditLogOptions options, audit::Chain chain, io::FileDescriptor file, std::uint64_t file_bytes);
  void run();
  // Formats `batch` and the gap of `lost` into pending_.
  void chain_lines(const std::vector<Queued>& batch, std::uint64_t lost);
  // Writes pending_; false when a write failed (pending_ keeps the rest).
  bool flush();
  void fsync_if_due(bool now);
  void rotate();
  void publish_head();
  void count_error(const std::string& what);

  const AuditLogOptions options_;
  // Writer thread only.
  audit::Chain chain_;
  io::FileDescriptor file_;
  std::uint64_t file_bytes_ = 0;
  std::string pending_;
  bool dirty_ = false;
  Instant last_fsync_{};
  Instant last_error_log_{};

  mutable std::mutex mutex_;  // queue_, lost_, stopping_, head_.
  std::condition_variable wake_;
  std::vector<Queued> queue_;
  std::uint64_t lost_ = 0;
  bool stopping_ = false;
  audit::Head head_;

  std::atomic<std::uint64_t> written_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::uint64_t> write_errors_{0};
  std::atomic<std::uint64_t> rotations_{0};
  std::thread thread_;
};

// The writer's counters and head sequence on /metrics (docs/admin_api.md).
void add_audit_metrics(io::PrometheusText& page, std::span<const AuditLog* const> logs);
// GET /audit: the head (sequence and hash) and counters, for anchoring the
// chain elsewhere (docs/operations.md "Audit log"). `log` outlives the server.
void add_audit_routes(io::AdminServer& server, std::vector<const AuditLog*> logs);

}  // namespace rw::gateway_shell
