// The audit log's writer thread: queue, chain, write, fsync, rotate.
#include "gateway_shell/audit_log.h"

#include <fcntl.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audit/verify.h"
#include "io/clock.h"
#include "io/socket_address.h"
#include "io/text_file.h"

namespace rw::gateway_shell {
namespace {

// The end of a file read at start: enough for several whole lines
// (audit::kLineBytesMax each).
constexpr std::size_t kTailBytes = 4 * audit::kLineBytesMax;
// Chained bytes the writer holds while writes fail; beyond, it stops
// taking decisions from the queue, which then counts them lost (a gap).
constexpr std::size_t kPendingBytesMax = 4 * 1024 * 1024;
constexpr Duration kRetryDelay = Duration::seconds(1);
constexpr Duration kErrorLogInterval = Duration::seconds(10);
constexpr std::size_t kKeyBytesMin = 16;

struct FileTail {
  std::string bytes;
  bool whole = true;
};

std::string errno_text(std::string_view call, const std::string& path) {
  return fmt::format("{} {}: {}", call, path, std::strerror(errno));
}

// The last kTailBytes of `path`; nothing when it does not exist.
Result<std::optional<FileTail>, std::string> read_tail(const std::string& path) {
  io::FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!file.valid()) {
    if (errno == ENOENT) return std::optional<FileTail>();
    return fail(errno_text("open", path));
  }
  struct stat info {};
  if (::fstat(file.get(), &info) != 0) return fail(errno_text("fstat", path));
  const auto size = static_cast<std::uint64_t>(info.st_size);
  const std::uint64_t from = size > kTailBytes ? size - kTailBytes : 0;
  FileTail tail{.bytes = std::string(size - from, '\0'), .whole = from == 0};
  std::size_t done = 0;
  while (done < tail.bytes.size()) {
    const ssize_t n = ::pread(file.get(), tail.bytes.data() + done, tail.bytes.size() - done,
                              static_cast<off_t>(from + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(errno_text("read", path));
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  tail.bytes.resize(done);
  return std::optional<FileTail>(std::move(tail));
}

// path -> path.1 -> ... -> path.<keep>; the oldest is replaced. With keep 0
// the file is removed.
Result<void, std::string> shift_files(const std::string& path, std::size_t keep) {
  if (keep == 0) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return fail(errno_text("unlink", path));
    return {};
  }
  for (std::size_t i = keep - 1; i >= 1; --i) {
    const std::string from = fmt::format("{}.{}", path, i);
    if (::rename(from.c_str(), fmt::format("{}.{}", path, i + 1).c_str()) != 0 && errno != ENOENT)
      return fail(errno_text("rename", from));
  }
  if (::rename(path.c_str(), (path + ".1").c_str()) != 0 && errno != ENOENT)
    return fail(errno_text("rename", path));
  return {};
}

Result<io::FileDescriptor, std::string> open_for_append(const std::string& path) {
  io::FileDescriptor file(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640));
  if (!file.valid()) return fail(errno_text("open", path));
  return file;
}

std::uint64_t size_of(const io::FileDescriptor& file) {
  struct stat info {};
  return ::fstat(file.get(), &info) == 0 ? static_cast<std::uint64_t>(info.st_size) : 0;
}

// Where the chain goes on from when the writer starts, and the header the
// file needs (none: the file is continued as it is).
struct Start {
  audit::Head head{};
  std::optional<audit::HeaderReason> header{};
  bool move_aside = false;  // The file's tail is torn: rotate it aside first.
};

Result<Start, std::string> find_start(const std::string& path, const audit::ChainKey& key) {
  auto current = read_tail(path);
  if (!current) return fail(current.error());
  if (*current && !(*current)->bytes.empty()) {
    const audit::Tail tail = audit::inspect_tail((*current)->bytes, (*current)->whole, key);
    if (tail.clean) return Start{.head = *tail.last_good};
    return Start{.head = tail.last_good.value_or(audit::Head{}),
                 .header = audit::HeaderReason::kTornTail,
                 .move_aside = true};
  }
  // No file, or an empty one: a rotation may have stopped between its
  // rename and the new file's header.
  auto previous = read_tail(path + ".1");
  if (!previous) return fail(previous.error());
  if (!*previous || (*previous)->bytes.empty()) return Start{.header = audit::HeaderReason::kNew};
  const audit::Tail tail = audit::inspect_tail((*previous)->bytes, (*previous)->whole, key);
  return Start{.head = tail.last_good.value_or(audit::Head{}),
               .header = tail.clean ? audit::HeaderReason::kRotated : audit::HeaderReason::kTornTail};
}

// What decided, for the line: the users entry's file:line, the store, or
// the reason's name.
std::string rule_text(const gateway::Decision& decision) {
  if (decision.rule_line > 0) return fmt::format("{}:{}", decision.rule_file, decision.rule_line);
  if (!decision.rule_file.empty()) return std::string(decision.rule_file);
  return std::string(decision.reason());
}

}  // namespace

Result<std::string, std::string> read_audit_key(const std::string& path) {
  auto text = io::read_text_file(path);
  if (!text) return fail(fmt::format("audit key file: {}", text.error().to_string()));
  std::string key = std::move(*text);
  if (key.ends_with('\n')) key.pop_back();
  if (key.size() < kKeyBytesMin)
    return fail(
        fmt::format("audit key file {}: {} bytes, at least {} needed", path, key.size(), kKeyBytesMin));
  return key;
}

AuditLog::AuditLog(AuditLogOptions options, audit::Chain chain, io::FileDescriptor file,
                   std::uint64_t file_bytes)
    : options_(std::move(options)),
      chain_(std::move(chain)),
      file_(std::move(file)),
      file_bytes_(file_bytes),
      head_(chain_.head()) {}

Result<std::unique_ptr<AuditLog>, std::string> AuditLog::open(AuditLogOptions options) {
  audit::ChainKey key = options.key ? audit::ChainKey::keyed(*options.key) : audit::ChainKey();
  auto start = find_start(options.path, key);
  if (!start) return fail(start.error());
  if (start->move_aside) {
    spdlog::warn(
        "audit log {}: the last line is torn or does not verify; it is kept as {}.1 and a new file "
        "goes on from sequence {}",
        options.path, options.path, start->head.sequence);
    // Even with keep 0 the torn file is kept: it is the evidence.
    if (auto moved = shift_files(options.path, std::max<std::size_t>(options.keep, 1)); !moved)
      return fail(moved.error());
  }
  auto file = open_for_append(options.path);
  if (!file) return fail(file.error());
  const std::uint64_t bytes = size_of(*file);
  audit::Chain chain(std::move(key), start->head);
  std::unique_ptr<AuditLog> log(new AuditLog(std::move(options), std::move(chain), std::move(*file), bytes));
  if (start->header) {
    log->pending_ = log->chain_.header(io::unix_now_ms(), *start->header);
    // A full disk does not stop the start: the header waits in pending_.
    if (log->flush()) log->publish_head();
  }
  spdlog::info("audit log {}: {} chain, continuing after sequence {}", log->options_.path,
               log->chain_.key().name(), start->head.sequence);
  log->thread_ = std::thread([raw = log.get()] { raw->run(); });
  return log;
}

AuditLog::~AuditLog() { stop(); }

void AuditLog::on_decision(const gateway::Decision& decision) {
  // Decisions without a tenant come from tools and tests: the default tenant's.
  const std::string_view tenant = decision.tenant.empty() ? config::kDefaultTenantName : decision.tenant;
  if (tenant != options_.tenant) return;
  Queued item{.unix_ms = io::unix_now_ms(),
              .client = std::string(decision.client),
              .address = io::to_string(decision.from),
              .identity = std::string(decision.user_name),
              .method = gateway::to_string(decision.method),
              .accepted = decision.accepted,
              .rule = rule_text(decision),
              .reason = decision.reason()};
  bool was_empty = false;
  {
    std::lock_guard lock(mutex_);
    if (queue_.size() >= options_.queue_lines_max || stopping_) {
      ++lost_;
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    was_empty = queue_.empty();
    queue_.push_back(std::move(item));
  }
  if (was_empty) wake_.notify_one();
}

void AuditLog::chain_lines(const std::vector<Queued>& batch, std::uint64_t lost) {
  for (const Queued& item : batch) {
    pending_ += chain_.decision(audit::DecisionRecord{.unix_ms = item.unix_ms,
                                                      .client = item.client,
                                                      .address = item.address,
                                                      .tenant = options_.tenant,
                                                      .identity = item.identity,
                                                      .method = item.method,
                                                      .accepted = item.accepted,
                                                      .rule = item.rule,
                                                      .reason = item.reason});
  }
  // The decisions lost were refused while the queue was full, so after
  // every one of the batch.
  if (lost > 0) pending_ += chain_.gap(io::unix_now_ms(), lost);
}

void AuditLog::count_error(const std::string& what) {
  write_errors_.fetch_add(1, std::memory_order_relaxed);
  const Instant now = io::monotonic_now();
  if (last_error_log_.ns != 0 && now - last_error_log_ < kErrorLogInterval) return;
  last_error_log_ = now;
  spdlog::error("audit log {}: {} (retried; decisions beyond the queue bound become a gap line)",
                options_.path, what);
}

bool AuditLog::flush() {
  if (!file_.valid()) {
    auto reopened = open_for_append(options_.path);
    if (!reopened) {
      count_error(reopened.error());
      return false;
    }
    file_ = std::move(*reopened);
    file_bytes_ = size_of(file_);
  }
  while (!pending_.empty()) {
    const ssize_t n = ::write(file_.get(), pending_.data(), pending_.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      count_error(errno_text("write", options_.path));
      return false;
    }
    const auto count = static_cast<std::size_t>(n);
    written_.fetch_add(static_cast<std::uint64_t>(std::count(pending_.begin(), pending_.begin() + n, '\n')),
                       std::memory_order_relaxed);
    pending_.erase(0, count);
    file_bytes_ += count;
    dirty_ = true;
  }
  return true;
}

void AuditLog::fsync_if_due(bool now) {
  if (!dirty_ || !file_.valid()) return;
  const Instant at = io::monotonic_now();
  if (!now && options_.fsync_interval.ns > 0 && at - last_fsync_ < options_.fsync_interval) return;
  last_fsync_ = at;
  if (::fdatasync(file_.get()) != 0) {
    count_error(errno_text("fdatasync", options_.path));
    return;
  }
  dirty_ = false;
}

void AuditLog::rotate() {
  fsync_if_due(true);
  file_.reset();
  if (auto shifted = shift_files(options_.path, options_.keep); !shifted) {
    // The file goes on growing (flush reopens it) until a rename succeeds.
    count_error(shifted.error());
    return;
  }
  rotations_.fetch_add(1, std::memory_order_relaxed);
  pending_ = chain_.header(io::unix_now_ms(), audit::HeaderReason::kRotated) + pending_;
  file_bytes_ = 0;
  if (flush()) publish_head();
}

void AuditLog::publish_head() {
  std::lock_guard lock(mutex_);
  head_ = chain_.head();
}

void AuditLog::run() {
  pthread_setname_np(pthread_self(), "rw-audit");
  const Duration tick = options_.fsync_interval.ns > 0
                            ? std::min(options_.fsync_interval, Duration::seconds(1))
                            : Duration::seconds(1);
  std::vector<Queued> batch;
  for (;;) {
    std::uint64_t lost = 0;
    bool stopping = false;
    {
      std::unique_lock lock(mutex_);
      const bool can_take = pending_.size() < kPendingBytesMax;
      wake_.wait_for(lock, std::chrono::nanoseconds(tick.ns),
                     [&] { return stopping_ || (can_take && (!queue_.empty() || lost_ > 0)); });
      stopping = stopping_;
      if (can_take || stopping) {
        batch.swap(queue_);
        lost = std::exchange(lost_, 0);
      }
    }
    chain_lines(batch, lost);
    batch.clear();
    const bool wrote = flush();
    if (wrote) publish_head();
    if (wrote && file_bytes_ >= options_.rotate_bytes) rotate();
    fsync_if_due(stopping || options_.fsync_interval.ns == 0);
    if (stopping) break;
    if (!wrote) {
      // A full disk: wait before the next try rather than spin.
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, std::chrono::nanoseconds(kRetryDelay.ns), [&] { return stopping_; });
    }
  }
  if (!pending_.empty()) {
    spdlog::error("audit log {}: stopped with {} bytes not written", options_.path, pending_.size());
  }
}

void AuditLog::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

AuditLogStatus AuditLog::status() const {
  AuditLogStatus status{.path = options_.path,
                        .written = written_.load(std::memory_order_relaxed),
                        .dropped = dropped_.load(std::memory_order_relaxed),
                        .write_errors = write_errors_.load(std::memory_order_relaxed),
                        .rotations = rotations_.load(std::memory_order_relaxed)};
  std::lock_guard lock(mutex_);
  status.head = head_;
  status.queued = queue_.size();
  return status;
}

void add_audit_metrics(io::PrometheusText& page, std::span<const AuditLog* const> logs) {
  std::vector<AuditLogStatus> statuses;
  for (const AuditLog* log : logs) statuses.push_back(log->status());
  // A family's samples go together (PrometheusText), so one loop per family.
  constexpr std::string_view kLines =
      "Audit log lines by event: written to the file, or dropped at the queue bound (recorded in a gap "
      "line).";
  for (const AuditLogStatus& status : statuses) {
    page.counter("radiusward_audit_lines_total", kLines, status.written,
                 {{"path", status.path}, {"event", "written"}});
    page.counter("radiusward_audit_lines_total", kLines, status.dropped,
                 {{"path", status.path}, {"event", "dropped"}});
  }
  for (const AuditLogStatus& status : statuses) {
    page.counter("radiusward_audit_write_errors_total",
                 "Failed writes, fsyncs, opens and renames of the audit log (each retried).",
                 status.write_errors, {{"path", status.path}});
  }
  for (const AuditLogStatus& status : statuses) {
    page.counter("radiusward_audit_rotations_total", "Rotations of the audit log.", status.rotations,
                 {{"path", status.path}});
  }
  for (const AuditLogStatus& status : statuses) {
    page.gauge("radiusward_audit_head_sequence", "Sequence number of the audit log's last written line.",
               static_cast<std::int64_t>(status.head.sequence), {{"path", status.path}});
  }
  for (const AuditLogStatus& status : statuses) {
    page.gauge("radiusward_audit_queued_lines", "Decisions waiting for the audit writer.",
               static_cast<std::int64_t>(status.queued), {{"path", status.path}});
  }
}

void add_audit_routes(io::AdminServer& server, std::vector<const AuditLog*> logs) {
  server.route("GET", "/audit", [logs = std::move(logs)](const io::AdminRequest&) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const AuditLog* log : logs) {
      const AuditLogStatus status = log->status();
      list.push_back(nlohmann::ordered_json{{"path", status.path},
                                            {"tenant", log->tenant()},
                                            {"sequence", status.head.sequence},
                                            {"hash", audit::to_hex(status.head.hash)},
                                            {"written", status.written},
                                            {"dropped", status.dropped},
                                            {"write_errors", status.write_errors},
                                            {"rotations", status.rotations},
                                            {"queued", status.queued}});
    }
    const nlohmann::ordered_json body{{"logs", std::move(list)}};
    return io::AdminResponse{
        200, "application/json",
        body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n"};
  });
}

}  // namespace rw::gateway_shell
