// Node: the libraft instance, its libuv loop and thread, its transport (TLS
// or plain TCP), and the queues that carry submissions in and outcomes out
// (docs/consensus.md traps 1, 9-12).
#include "consensus/node.h"

#include <pthread.h>
#include <uv.h>

#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "base/assert.h"
#include "consensus/data_folder.h"
#include "consensus/fsm_adapter.h"
#include "consensus/proposer.h"
#include "consensus/quiet_log.h"
#include "consensus/raft_c.h"
#include "consensus/raft_heap.h"

// libraft 0.15's plain TCP transport splits each "host:port" address
// (uvIpParse, on the loop thread, at listen and at every connect) with
// strtok, whose position is one static for the whole process. Two Nodes in
// one process (the integration tests run three) then read each other's
// stack buffers: a connect can take another Node's port. This definition,
// which the dynamic linker binds libraft's strtok to, keeps the position per
// thread; for one thread it behaves as the C library's (docs/consensus.md,
// trap 14). It lives here because this object is linked wherever libraft is.
extern "C" char* strtok(char* __restrict text, const char* __restrict delimiters) noexcept {
  thread_local char* position = nullptr;
  return strtok_r(text, delimiters, &position);
}

namespace rw::consensus {

std::string_view to_string(Role role) {
  switch (role) {
    case Role::kUnavailable:
      return "unavailable";
    case Role::kFollower:
      return "follower";
    case Role::kCandidate:
      return "candidate";
    case Role::kLeader:
      return "leader";
  }
  return "unavailable";
}

namespace {

Role role_of(int state) {
  switch (state) {
    case RAFT_FOLLOWER:
      return Role::kFollower;
    case RAFT_CANDIDATE:
      return Role::kCandidate;
    case RAFT_LEADER:
      return Role::kLeader;
    default:
      return Role::kUnavailable;
  }
}

Outcome retry_later() {
  Outcome outcome;
  outcome.kind = OutcomeKind::kRetryLater;
  return outcome;
}

}  // namespace

struct Node::Loop {
  struct Submission {
    std::vector<std::uint8_t> entry;
    Callback callback;
  };
  enum class Phase { kRunning, kStopping, kClosing };

  Loop(NodeOptions node_options, ReplicatedState& replicated)
      : options(std::move(node_options)),
        fsm(replicated, options.snapshot_serialization),
        quiet(Duration::milliseconds(options.quiet_after_ms)) {}

  NodeOptions options;
  uv_loop_t loop{};
  uv_async_t wake{};
  uv_timer_t timer{};
  struct raft_uv_transport transport {};
  std::unique_ptr<TlsTransport> tls_transport;  // Set in TLS mode; else raft_uv_tcp.
  struct raft_io io {};
  struct raft raft {};
  struct raft_tracer tracer {};
  struct raft_transfer transfer_request {};
  FsmAdapter fsm;
  std::unique_ptr<Proposer> proposer;
  std::thread thread;

  // Inbound, any thread to the loop.
  std::mutex in_mutex;
  std::deque<Submission> inbound;
  std::deque<std::function<void()>> controls;
  void post_change(std::function<void()> step, const ChangeCallback& callback);
  bool accepting = true;                // Guarded by in_mutex.
  std::atomic<std::size_t> pending{0};  // Queued or in flight.

  // Outbound, the loop to the deliverer.
  std::mutex out_mutex;
  std::deque<std::function<void()>> completions;

  // Published status.
  mutable std::mutex status_mutex;
  NodeStatus status;
  std::atomic<bool> ready{false};

  // Loop thread only.
  std::deque<Submission> waiting;
  Phase phase = Phase::kRunning;
  bool close_due = false;
  bool handles_closed = false;
  Role last_role = Role::kUnavailable;
  bool last_ready = false;
  std::string io_error_seen;                  // raft_io's errmsg as of raft_start, then as last reported
  std::string storage_error;                  // NodeStatus::storage_error
  std::uint64_t snapshots_seen = 0;           // SnapshotFigures::taken at the last publish
  std::uint64_t snapshots_in_child_seen = 0;  // SnapshotFigures::in_child, likewise
  std::uint64_t child_failures_seen = 0;      // SnapshotFigures::child_failures, likewise
  std::string failure;                        // NodeStatus::failure, kept once set
  QuietLog quiet;
  std::optional<Instant> compact_barrier_at;  // Set on a quiet leader whose log is compacted.
  std::uint64_t log_bytes_held = 0;           // NodeStatus::log_bytes_held
  std::uint64_t log_bytes_counted_ms = 0;     // uv_now of the latest count

  void log(LogLevel level, std::string_view message) const {
    if (options.log) options.log(level, message);
  }

  void notify() {
    if (!handles_closed) uv_async_send(&wake);
  }

  void complete(std::function<void()> completion) {
    {
      std::lock_guard lock(out_mutex);
      completions.push_back(std::move(completion));
    }
    if (options.on_completions_ready) options.on_completions_ready();
  }

  void finish(Callback& callback, const Outcome& outcome) {
    pending.fetch_sub(1, std::memory_order_relaxed);
    complete([callback = std::move(callback), outcome] { callback(outcome); });
  }

  void refuse_waiting(const Outcome& outcome) {
    while (!waiting.empty()) {
      finish(waiting.front().callback, outcome);
      waiting.pop_front();
    }
  }

  // One loop turn: never called from inside a libraft callback (trap 6).
  void turn() {
    std::deque<Submission> arrived;
    std::deque<std::function<void()>> control;
    {
      std::lock_guard lock(in_mutex);
      arrived.swap(inbound);
      control.swap(controls);
    }
    for (auto& step : control) step();
    for (auto& submission : arrived) waiting.push_back(std::move(submission));

    if (phase == Phase::kRunning) {
      proposer->on_turn();
      while (!waiting.empty()) {
        if (!proposer->ready()) {
          refuse_waiting(proposer->refusal());
          break;
        }
        if (!proposer->has_room()) break;
        Submission next = std::move(waiting.front());
        waiting.pop_front();
        proposer->propose(std::move(next.entry),
                          [this, callback = std::move(next.callback)](const Outcome& outcome) mutable {
                            finish(callback, outcome);
                          });
      }
    } else {
      refuse_waiting(retry_later());
    }
    if (close_due && phase == Phase::kStopping) close();
    if (phase == Phase::kRunning) on_quiet_check();
    publish();
  }

  // Memory that only load needs goes back once the log is quiet.
  void on_quiet_check() {
    const Instant now{.ns = static_cast<std::int64_t>(uv_now(&loop)) * 1'000'000};
    if (compact_barrier_at && now >= *compact_barrier_at) {
      compact_barrier_at.reset();
      // Not when load came back meanwhile and called the compaction off.
      if (fsm.compaction_due() && proposer->propose_barrier()) {
        log(LogLevel::kDebug,
            fmt::format("raft member {}: barrier appended to compact a quiet log", options.id));
      }
    }
    if (!quiet.on_turn(now, raft_last_applied(&raft))) return;
    const std::uint64_t buffer_bytes = fsm.snapshot_figures().buffer_bytes;
    if (fsm.release_snapshot_buffer()) {
      log(LogLevel::kDebug, fmt::format("raft member {}: log quiet, snapshot buffer of {} bytes released",
                                        options.id, buffer_bytes));
    }
    // The barrier moves the applied index, so the compacted log is quiet
    // again later, then holds one entry: this runs once per burst.
    if (const std::size_t held = log_entry_bytes(raft.log);
        options.compact_quiet_log_bytes != 0 && held >= options.compact_quiet_log_bytes) {
      fsm.compact_on_next_apply();
      log(LogLevel::kDebug,
          fmt::format("raft member {}: log quiet with {} bytes of entries in memory, compacting at the next "
                      "applied entry",
                      options.id, held));
      if (proposer->is_leader()) {
        compact_barrier_at = now + Duration::milliseconds(options.compact_barrier_delay_ms);
      }
    }
  }

  void publish() {
    if (phase == Phase::kClosing) return;
    NodeStatus next;
    next.role = role_of(raft_state(&raft));
    raft_id leader_id = 0;
    const char* leader_address = nullptr;
    raft_leader(&raft, &leader_id, &leader_address);
    next.leader_id = leader_id;
    if (leader_address != nullptr) next.leader_address = leader_address;
    next.term = raft.current_term;
    next.commit_index = raft.commit_index;
    next.last_log_index = raft_last_index(&raft);
    next.last_applied = raft_last_applied(&raft);
    next.pending_submissions = pending.load(std::memory_order_relaxed);
    next.ready_for_work = proposer->ready();
    if (tls_transport) next.transport = tls_transport->counters();
    next.snapshots = fsm.snapshot_figures();
    // The walk is O(entries): once a second.
    if (const std::uint64_t now_ms = uv_now(&loop); now_ms - log_bytes_counted_ms >= 1000) {
      log_bytes_counted_ms = now_ms;
      log_bytes_held = log_entry_bytes(raft.log);
    }
    next.log_bytes_held = log_bytes_held;
    if (next.snapshots.taken != snapshots_seen) {
      snapshots_seen = next.snapshots.taken;
      // A snapshot holds the loop: past half the election timeout, a
      // leader's followers come close to electing another (trap 8).
      const bool long_pause = next.snapshots.last_us > std::uint64_t{options.election_timeout_ms} * 500;
      const bool forked = next.snapshots.in_child != snapshots_in_child_seen;
      snapshots_in_child_seen = next.snapshots.in_child;
      log(long_pause ? LogLevel::kWarning : LogLevel::kDebug,
          fmt::format("raft member {}: snapshot at index {} took {} ms on the loop thread{}{}", options.id,
                      next.last_applied, next.snapshots.last_us / 1000,
                      forked ? ", serialised in a child process"
                             : fmt::format(" ({} bytes)", next.snapshots.last_bytes),
                      long_pause ? fmt::format(", more than half of raft.election_timeout_ms ({}): lower the "
                                               "ledger bounds or raise the timeout (docs/limits.md)",
                                               options.election_timeout_ms)
                                 : ""));
    }
    if (next.snapshots.child_failures != child_failures_seen) {
      child_failures_seen = next.snapshots.child_failures;
      log(LogLevel::kWarning,
          fmt::format("raft member {}: a snapshot could not be serialised in a child process ({}); snapshots "
                      "are now serialised on the loop thread until the member restarts ({})",
                      options.id, fsm.child_failure(), kChildSnapshotsDoc));
    }
    // libraft reports a failed write (a full disk) only in raft_io's errmsg
    // and stops writing for good while keeping its role: the member must
    // say so and exit (docs/consensus.md "Known library problems seen in
    // tests").
    if (const std::string_view io_error = io.errmsg; !io_error.empty() && io_error != io_error_seen) {
      io_error_seen = io_error;
      storage_error = fmt::format("{}: {}{}", options.data_dir, io_error, space_note());
      log(LogLevel::kError, fmt::format("raft member {}: storage error in {}", options.id, storage_error));
    }
    // libraft 0.15.0 crashes (SIGSEGV inside its log, no radiusward frame)
    // when a leader's next segment cannot be allocated, before this poll
    // could see the error above. So the member stops first: with less than
    // one segment free, that allocation is the one that fails.
    if (storage_error.empty()) {
      std::error_code failed;
      const std::filesystem::space_info space = std::filesystem::space(options.data_dir, failed);
      if (!failed && space.available < options.segment_bytes) {
        storage_error = fmt::format("{}: less than one log segment ({} bytes) free{}", options.data_dir,
                                    options.segment_bytes, space_note());
        log(LogLevel::kError, fmt::format("raft member {}: storage error in {}", options.id, storage_error));
      }
    }
    next.storage_error = storage_error;
    if (next.role != last_role) {
      if (next.role == Role::kUnavailable && failure.empty()) {
        // libraft 0.15.0 goes RAFT_UNAVAILABLE after a failed disk write
        // (term, vote, entries) or a failed reply, and never comes back.
        // raft_errmsg is often empty on this path; raft_uv keeps the failed
        // I/O's message in its own errmsg.
        failure = raft_errmsg(&raft);
        if (failure.empty()) failure = io.errmsg;
        if (failure.empty()) failure = "libraft gave no reason";
        log(LogLevel::kError,
            fmt::format("raft member {}: libraft turned the node unavailable in term {}: {}", options.id,
                        next.term, failure));
      } else {
        log(LogLevel::kInfo,
            fmt::format("raft member {}: {} in term {}", options.id, to_string(next.role), next.term));
      }
      last_role = next.role;
    }
    if (next.ready_for_work != last_ready) {
      // The end of a failover as the cluster sees it: gateways' Submits are
      // taken from here on (docs/consensus.md "Failover under load").
      if (next.ready_for_work) {
        log(LogLevel::kInfo,
            fmt::format("raft member {}: ready for work in term {} (own-term barrier committed)", options.id,
                        next.term));
      }
      last_ready = next.ready_for_work;
    }
    next.failure = failure;
    ready.store(next.ready_for_work, std::memory_order_release);
    std::lock_guard lock(status_mutex);
    status = std::move(next);
  }

  void begin_stop(bool transfer) {
    if (phase != Phase::kRunning) return;
    phase = Phase::kStopping;
    ready.store(false, std::memory_order_release);
    refuse_waiting(retry_later());
    if (transfer && proposer->is_leader()) {
      const std::uint64_t target = proposer->most_up_to_date_follower();
      if (target != 0) {
        transfer_request.data = this;
        const int rv = raft_transfer(&raft, &transfer_request, target, &Loop::on_transferred);
        if (rv == 0) {
          log(LogLevel::kInfo,
              fmt::format("raft member {}: transferring leadership to {}", options.id, target));
          return;
        }
        log(LogLevel::kWarning,
            fmt::format("raft member {}: leadership transfer refused: {}", options.id, raft_strerror(rv)));
      }
    }
    close();
  }

  static void on_transferred(struct raft_transfer* request) {
    auto* self = static_cast<Loop*>(request->data);
    raft_id leader_id = 0;
    const char* address = nullptr;
    raft_leader(&self->raft, &leader_id, &address);
    self->log(LogLevel::kInfo, fmt::format("raft member {}: leadership transfer ended, leader now {}",
                                           self->options.id, leader_id));
    self->close_due = true;  // Closed on the next turn, outside this callback.
    self->notify();
  }

  void close() {
    phase = Phase::kClosing;
    ready.store(false, std::memory_order_release);
    uv_timer_stop(&timer);
    raft_close(&raft, &Loop::on_raft_closed);
  }

  static void on_raft_closed(struct raft* closed) {
    auto* self = static_cast<Loop*>(closed->data);
    raft_uv_close(&self->io);
    self->release_transport();
    self->handles_closed = true;
    uv_close(reinterpret_cast<uv_handle_t*>(&self->timer), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&self->wake), nullptr);
    {
      std::lock_guard lock(self->status_mutex);
      self->status.role = Role::kUnavailable;
      self->status.ready_for_work = false;
    }
  }

  // raft_io's async_work: `request->work` on a libuv pool thread, then
  // `callback` on the loop. After raft_close the callback is dropped: the
  // library is going away and its snapshot with it (FsmAdapter reaps the
  // child in any case).
  struct AsyncWork {
    uv_work_t work{};
    Loop* loop = nullptr;
    struct raft_io_async_work* request = nullptr;
    raft_io_async_work_cb callback = nullptr;
    int status = 0;
  };
  static int queue_async_work(struct raft_io* raft_io, struct raft_io_async_work* request,
                              raft_io_async_work_cb callback) {
    // raft_init points the io's data at the raft instance, whose data is us.
    auto* self = static_cast<Loop*>(static_cast<struct raft*>(raft_io->data)->data);
    auto job = std::make_unique<AsyncWork>();
    job->work.data = job.get();
    job->loop = self;
    job->request = request;
    job->callback = callback;
    const int rv = uv_queue_work(
        &self->loop, &job->work,
        [](uv_work_t* work) {
          auto* queued = static_cast<AsyncWork*>(work->data);
          queued->status = queued->request->work(queued->request);
        },
        [](uv_work_t* work, int uv_status) {
          const std::unique_ptr<AsyncWork> done(static_cast<AsyncWork*>(work->data));
          if (done->loop->phase == Phase::kClosing) return;
          done->callback(done->request, uv_status != 0 ? RAFT_CANCELED : done->status);
        });
    if (rv != 0) return RAFT_IOERR;
    (void)job.release();  // Freed by the after-work callback.
    return 0;
  }

  // Where the member's warning about a failed snapshot child points.
  static constexpr std::string_view kChildSnapshotsDoc =
      R"(docs/consensus.md "Snapshots in a child process")";

  static void on_trace(struct raft_tracer* tracer, const char* file, int line, const char* message) {
    auto* self = static_cast<Loop*>(tracer->impl);
    self->log(LogLevel::kDebug, fmt::format("libraft {}:{}: {}", file, line, message));
  }

  // The analog of raft_uv_tcp_close for either transport.
  void release_transport() {
    if (tls_transport) {
      tls_transport.reset();
    } else {
      raft_uv_tcp_close(&transport);
    }
  }

  [[nodiscard]] Result<void, StartError> init_transport();
  [[nodiscard]] Result<void, StartError> open();
  [[nodiscard]] Result<void, StartError> configure_and_start();
  [[nodiscard]] Result<void, StartError> recover_alone();

  // libraft says "not enough space to allocate N bytes" when a segment
  // cannot be allocated; the operator looks for ENOSPC and the free space.
  // Nothing when the folder has room for a segment: the failure was
  // something else (a busy port, say) and the free space would mislead.
  std::string space_note() const {
    std::error_code failed;
    const std::filesystem::space_info space = std::filesystem::space(options.data_dir, failed);
    if (failed || space.available >= options.segment_bytes) return {};
    return fmt::format(" (ENOSPC, no space left on device: {} bytes free on its file system)",
                       space.available);
  }
  void abandon(bool raft_initialised);
};

Result<void, StartError> Node::Loop::init_transport() {
  if (options.tls) {
    TlsTransportOptions tls = *options.tls;
    if (!tls.is_member) {
      tls.is_member = [voters = options.voters](std::uint64_t id) {
        for (const Member& voter : voters) {
          if (voter.id == id) return true;
        }
        return false;
      };
    }
    if (!tls.log) tls.log = options.log;
    if (tls.bind_address.empty()) tls.bind_address = options.bind_address;
    auto created = TlsTransport::create(&transport, &loop, std::move(tls));
    if (!created) return fail(StartError{std::move(created.error())});
    tls_transport = std::move(*created);
    return {};
  }
  if (const int rv = raft_uv_tcp_init(&transport, &loop); rv != 0) {
    return fail(StartError{fmt::format("raft_uv_tcp_init: {}", raft_strerror(rv))});
  }
  // The bind address must be set before raft_init (trap 12).
  const std::string& bind = options.bind_address.empty() ? options.address : options.bind_address;
  if (const int rv = raft_uv_tcp_set_bind_address(&transport, bind.c_str()); rv != 0) {
    raft_uv_tcp_close(&transport);
    return fail(StartError{fmt::format("raft bind address {}: {}", bind, raft_strerror(rv))});
  }
  return {};
}

Result<void, StartError> Node::Loop::open() {
  if (auto created = create_data_folder(options.data_dir); !created) {
    return fail(
        StartError{fmt::format("cannot create data folder {}: {}", options.data_dir, created.error())});
  }
  if (const int rv = uv_loop_init(&loop); rv != 0) {
    return fail(StartError{fmt::format("uv_loop_init: {}", uv_strerror(rv))});
  }
  if (auto initialised = init_transport(); !initialised) {
    uv_loop_close(&loop);
    return fail(initialised.error());
  }
  if (const int rv = raft_uv_init(&io, &loop, options.data_dir.c_str(), &transport); rv != 0) {
    std::string message = fmt::format("raft_uv_init({}): {}", options.data_dir, io.errmsg);
    release_transport();
    uv_loop_close(&loop);
    return fail(StartError{std::move(message)});
  }
  // libraft 0.15's raft_uv is a version 1 raft_io, without the async_work
  // that FSM version 3 (snapshots serialised off the loop) needs: the node
  // adds its own, on its loop's pool (docs/consensus.md "Snapshots in a
  // child process").
  io.version = 2;
  io.async_work = &Loop::queue_async_work;
  raft_uv_set_connect_retry_delay(&io, options.connect_retry_delay_ms);
  raft_uv_set_segment_size(&io, options.segment_bytes);
  tracer.impl = this;
  tracer.enabled = options.trace_library;
  tracer.emit = &Loop::on_trace;
  raft_uv_set_tracer(&io, &tracer);  // Trap 10: the library is silent otherwise.

  fsm.attach(&raft);
  if (const int rv = raft_init(&raft, &io, fsm.fsm(), options.id, options.address.c_str()); rv != 0) {
    // Trap 11: the I/O probe refuses file systems without O_DIRECT or AIO.
    const std::string reason = raft_errmsg(&raft);
    std::string message =
        fmt::format("raft_init (data folder {}): {}{}", options.data_dir, reason, space_note());
    if (reason.find("file system") != std::string::npos) {
      message +=
          " (libraft needs a file system with O_DIRECT and Linux AIO, such as ext4, xfs or btrfs; "
          "see docs/consensus.md)";
    }
    raft_uv_close(&io);
    release_transport();
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    return fail(StartError{std::move(message)});
  }
  raft.data = this;
  if (options.trace_library) raft.tracer = &tracer;
  return {};
}

Result<void, StartError> Node::Loop::configure_and_start() {
  raft_set_election_timeout(&raft, options.election_timeout_ms);
  raft_set_heartbeat_timeout(&raft, options.heartbeat_timeout_ms);
  raft_set_pre_vote(&raft, options.pre_vote);
  raft_set_snapshot_threshold(&raft, options.snapshot_threshold);
  raft_set_snapshot_trailing(&raft, options.snapshot_trailing);
  if (options.log_bytes_max != 0) {
    fsm.bound_log_bytes(options.log_bytes_max, options.snapshot_threshold, options.snapshot_trailing);
    // Member k of n snapshots (k - 1)/n of a period ahead of the first
    // (docs/consensus.md "Staggered snapshots").
    if (options.stagger_snapshots && !options.voters.empty()) {
      const std::uint64_t n = options.voters.size();
      fsm.stagger_snapshots(static_cast<double>((options.id - 1) % n) / static_cast<double>(n));
    }
  }

  if (options.recover_alone) {
    if (auto recovered = recover_alone(); !recovered) return recovered;
  } else if (options.bootstrap) {
    struct raft_configuration configuration {};
    raft_configuration_init(&configuration);
    for (const Member& voter : options.voters) {
      if (const int rv = raft_configuration_add(&configuration, voter.id, voter.address.c_str(), RAFT_VOTER);
          rv != 0) {
        raft_configuration_close(&configuration);
        return fail(StartError{fmt::format("raft configuration member {} ({}): {}", voter.id, voter.address,
                                           raft_strerror(rv))});
      }
    }
    const int rv = raft_bootstrap(&raft, &configuration);
    raft_configuration_close(&configuration);
    if (rv == 0) {
      log(LogLevel::kInfo,
          fmt::format("raft member {}: bootstrapped {} voters", options.id, options.voters.size()));
    } else if (rv == RAFT_CANTBOOTSTRAP) {
      // Trap 12: the folder was used before; this is a restart.
      log(LogLevel::kInfo, fmt::format("raft member {}: recovering from {}", options.id, options.data_dir));
    } else {
      return fail(StartError{fmt::format("raft_bootstrap: {}", raft_errmsg(&raft))});
    }
  }
  if (const int rv = raft_start(&raft); rv != 0) {
    // A failed listen leaves its reason in the transport, not in raft.
    std::string reason = raft_errmsg(&raft);
    if (reason.empty()) reason = transport.errmsg;
    if (reason.empty()) reason = raft_strerror(rv);
    return fail(StartError{fmt::format("raft_start ({}): {}{}", options.data_dir, reason, space_note())});
  }
  io_error_seen = io.errmsg;  // The probe's notes, not a failure.
  return {};
}

// raft_recover with this member as the only voter (NodeOptions::recover_alone).
// A folder without libraft's metadata files was never used: it holds no log
// to recover, and recovering it would start a new cluster of one.
Result<void, StartError> Node::Loop::recover_alone() {
  const std::filesystem::path folder(options.data_dir);
  std::error_code ignored;
  if (!std::filesystem::exists(folder / "metadata1", ignored) &&
      !std::filesystem::exists(folder / "metadata2", ignored)) {
    return fail(
        StartError{fmt::format("recover: {} holds no raft log; nothing to recover", options.data_dir)});
  }
  struct raft_configuration alone {};
  raft_configuration_init(&alone);
  int rv = raft_configuration_add(&alone, options.id, options.address.c_str(), RAFT_VOTER);
  if (rv == 0) rv = raft_recover(&raft, &alone);
  raft_configuration_close(&alone);
  if (rv != 0)
    return fail(StartError{fmt::format("raft_recover ({}): {}", options.data_dir, raft_strerror(rv))});
  log(LogLevel::kWarning, fmt::format("raft member {}: recovered from {} as the only voter; add the other "
                                      "members again with `radiusward ctl members add`",
                                      options.id, options.data_dir));
  return {};
}

// Releases what open() set up after a later failure; runs the loop until
// libraft's close completes.
void Node::Loop::abandon(bool raft_initialised) {
  if (raft_initialised) {
    raft_close(&raft, [](struct raft* closed) {
      auto* self = static_cast<Loop*>(closed->data);
      raft_uv_close(&self->io);
      self->release_transport();
    });
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  uv_loop_close(&loop);
}

Result<std::unique_ptr<Node>, StartError> Node::start(NodeOptions options, ReplicatedState& state) {
  RW_ASSERT(options.id != 0);
  RW_ASSERT(options.max_in_flight > 0 && options.max_queued > 0 && options.poll_interval_ms > 0);
  install_raft_heap();  // Before the first libraft allocation of this Node.
  auto loop = std::make_unique<Loop>(std::move(options), state);
  if (auto opened = loop->open(); !opened) return fail(opened.error());
  if (auto started = loop->configure_and_start(); !started) {
    loop->abandon(true);
    return fail(started.error());
  }
  Loop* self = loop.get();
  self->proposer =
      std::make_unique<Proposer>(&self->raft, Proposer::Options{.max_in_flight = self->options.max_in_flight},
                                 [self] { self->notify(); });
  self->wake.data = self;
  self->timer.data = self;
  RW_ASSERT(uv_async_init(&self->loop, &self->wake,
                          [](uv_async_t* handle) { static_cast<Loop*>(handle->data)->turn(); }) == 0);
  RW_ASSERT(uv_timer_init(&self->loop, &self->timer) == 0);
  RW_ASSERT(uv_timer_start(
                &self->timer, [](uv_timer_t* handle) { static_cast<Loop*>(handle->data)->turn(); },
                self->options.poll_interval_ms, self->options.poll_interval_ms) == 0);
  self->publish();
  // The loop thread owns every raft_* call from here on (trap 1).
  self->thread = std::thread([self] {
    pthread_setname_np(pthread_self(), "rw-raft");
    // SIGPIPE goes to the writing thread: blocked here, it changes nothing
    // for the rest of the process.
    block_sigpipe_in_this_thread();
    uv_run(&self->loop, UV_RUN_DEFAULT);
  });
  return std::unique_ptr<Node>(new Node(std::move(loop)));
}

Node::Node(std::unique_ptr<Loop> loop) : loop_(std::move(loop)) {}

Node::~Node() { stop(false); }

std::uint64_t Node::id() const { return loop_->options.id; }

bool Node::ready_for_work() const { return loop_->ready.load(std::memory_order_acquire); }

Node::SubmitStatus Node::submit(std::vector<std::uint8_t> entry, Callback callback) {
  Loop& l = *loop_;
  {
    std::lock_guard lock(l.in_mutex);
    if (!l.accepting) return SubmitStatus::kStopped;
    if (l.pending.load(std::memory_order_relaxed) >= l.options.max_queued) return SubmitStatus::kQueueFull;
    l.pending.fetch_add(1, std::memory_order_relaxed);
    l.inbound.push_back(Loop::Submission{std::move(entry), std::move(callback)});
  }
  uv_async_send(&l.wake);  // Coalesces: one turn takes every queued submission.
  return SubmitStatus::kQueued;
}

std::size_t Node::deliver_completions(std::size_t max) {
  std::size_t ran = 0;
  while (ran < max) {
    std::function<void()> next;
    {
      std::lock_guard lock(loop_->out_mutex);
      if (loop_->completions.empty()) break;
      next = std::move(loop_->completions.front());
      loop_->completions.pop_front();
    }
    next();
    ++ran;
  }
  return ran;
}

namespace {

std::string change_message(int status) { return status == 0 ? std::string("ok") : raft_strerror(status); }

}  // namespace

// Hands a membership change to the loop thread; a stopping node answers at
// once with RAFT_SHUTDOWN instead.
void Node::Loop::post_change(std::function<void()> step, const ChangeCallback& callback) {
  std::unique_lock lock(in_mutex);
  if (!accepting) {
    lock.unlock();
    complete([callback] { callback(RAFT_SHUTDOWN, change_message(RAFT_SHUTDOWN)); });
    return;
  }
  controls.push_back(std::move(step));
  lock.unlock();
  uv_async_send(&wake);
}

void Node::add_voter(Member member, ChangeCallback callback) {
  Loop& l = *loop_;
  auto step = [&l, member = std::move(member), callback]() mutable {
    auto done = [&l, callback](int status) {
      l.complete([callback, status] { callback(status, change_message(status)); });
    };
    if (l.phase != Loop::Phase::kRunning) return done(RAFT_SHUTDOWN);
    l.proposer->add_voter(member.id, member.address, done);
  };
  l.post_change(std::move(step), callback);
}

void Node::remove_member(std::uint64_t id, ChangeCallback callback) {
  Loop& l = *loop_;
  auto step = [&l, id, callback] {
    auto done = [&l, callback](int status) {
      l.complete([callback, status] { callback(status, change_message(status)); });
    };
    if (l.phase != Loop::Phase::kRunning) return done(RAFT_SHUTDOWN);
    l.proposer->remove_member(id, done);
  };
  l.post_change(std::move(step), callback);
}

void Node::replace_member(std::uint64_t old_id, Member replacement, ChangeCallback callback) {
  // Raft §4.1: one server at a time, the removal first, so the majority
  // never counts the lost disk's copy.
  remove_member(old_id, [this, replacement = std::move(replacement), callback](
                            int status, std::string_view message) mutable {
    if (status != 0) return callback(status, message);
    add_voter(std::move(replacement), callback);
  });
}

NodeStatus Node::status() const {
  std::lock_guard lock(loop_->status_mutex);
  return loop_->status;
}

void Node::stop(bool transfer_leadership) {
  Loop& l = *loop_;
  if (!l.thread.joinable()) return;
  {
    std::lock_guard lock(l.in_mutex);
    l.accepting = false;
    l.controls.push_back([&l, transfer_leadership] { l.begin_stop(transfer_leadership); });
  }
  uv_async_send(&l.wake);
  l.thread.join();
  const int rv = uv_loop_close(&l.loop);
  RW_ASSERT(rv == 0);
}

}  // namespace rw::consensus
