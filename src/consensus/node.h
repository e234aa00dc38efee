// consensus::Node: one member of the replicated log. A libraft node over
// mutually authenticated TLS 1.3 (raft_uv + TlsTransport) or, in the explicit
// plaintext mode, plain TCP (raft_uv_tcp), on a libuv loop that the Node owns
// and runs on its own thread. Applies the committed log to a ReplicatedState; takes
// submissions from any thread. Design and mitigations: docs/consensus.md.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "consensus/log_level.h"
#include "consensus/outcome.h"
#include "consensus/replicated_state.h"
#include "consensus/snapshot_figures.h"
#include "consensus/tls_transport.h"

namespace rw::consensus {

// A voting member: its raft id (> 0) and its "IPv4:port" address.
struct Member {
  std::uint64_t id = 0;
  std::string address;
};

enum class Role { kUnavailable, kFollower, kCandidate, kLeader };
[[nodiscard]] std::string_view to_string(Role role);

// A consistent copy of the node's state, published by the loop thread every
// poll interval (libraft has no state-change callback, docs/consensus.md trap 9).
struct NodeStatus {
  Role role = Role::kUnavailable;
  bool ready_for_work = false;  // Leader whose barrier of its term committed.
  std::uint64_t leader_id = 0;  // 0: no known leader.
  std::string leader_address;
  std::uint64_t term = 0;
  std::uint64_t commit_index = 0;
  // The last entry in this member's log, committed or not: what a lone
  // survivor keeps of the old history (docs/operations.md "Two disks lost
  // for good").
  std::uint64_t last_log_index = 0;
  std::uint64_t last_applied = 0;
  std::size_t pending_submissions = 0;  // Queued or in flight.
  TlsTransportCounters transport;       // All zero in plaintext mode.
  SnapshotFigures snapshots;            // Snapshots this member took (trap 8).
  // Bytes of the entries in libraft's in-memory log (log_entry_bytes), as of
  // at most a second ago: what raft.log_bytes_max bounds.
  std::uint64_t log_bytes_held = 0;
  // Set once libraft turned a running node RAFT_UNAVAILABLE, which 0.15.0
  // never leaves: raft_errmsg, else raft_uv's errmsg, else that there is
  // none. The process must then exit and be restarted (docs/consensus.md,
  // "Known library problems seen in tests").
  std::string failure;
  // Empty, or "DATA_DIR: libraft's message" once a write to data_dir failed
  // after start (a full disk: "... no space left on device"). libraft stops
  // writing for good then, yet keeps its role (docs/RELIABILITY.md "Full
  // disk, database outage and quorum loss"), so the process must exit.
  std::string storage_error;
};

// ThreadSanitizer's allocator can deadlock a forked child of a
// multi-threaded process on a lock another thread held at the fork (seen
// 2026-12-03: the child waiting in SizeClassAllocator64::GetFromAllocator
// for the whole 120 s deadline), so a TSan build serialises snapshots on the
// loop unless told otherwise; release and asan builds test the child
// (docs/consensus.md "Under ThreadSanitizer").
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RW_NODE_UNDER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(RW_NODE_UNDER_TSAN)
inline constexpr SnapshotSerialization kDefaultSnapshotSerialization = SnapshotSerialization::kOnLoop;
#else
inline constexpr SnapshotSerialization kDefaultSnapshotSerialization = SnapshotSerialization::kInChild;
#endif
#undef RW_NODE_UNDER_TSAN

struct NodeOptions {
  std::uint64_t id = 0;
  std::string address;  // "IPv4:port"; bound before raft_init (trap 12) or, with TLS, in raft_start.
  // Set: the raft port binds here instead ("IPv4:port", e.g. 0.0.0.0:7201)
  // while peers still dial `address`, which forwards to it (a Kubernetes
  // Service's ClusterIP). The configuration keeps `address`.
  std::string bind_address;
  std::string data_dir;  // Created if missing. Needs O_DIRECT or tmpfs (trap 11).
  // The voters of the first configuration, bootstrapped on the first start
  // only (a used folder answers RAFT_CANTBOOTSTRAP: a restart, trap 12).
  std::vector<Member> voters;
  // False for a member that joins an existing cluster empty (a replacement):
  // it waits to be added by the leader and catches up by snapshot.
  bool bootstrap = true;
  // True: before starting, append a configuration whose only voter is this
  // member to its log (raft_recover), so that the last member of a cluster
  // that lost a majority of its disks for good leads again and can add
  // empty replacements (docs/operations.md "Two disks lost for good"). Run
  // it once, on one member, with every other member stopped; refused on an
  // empty data_dir. Records committed by a majority that did not include
  // this member are lost.
  bool recover_alone = false;
  // Set: raft traffic goes over TLS 1.3 with member certificates (the
  // production mode; docs/security.md "Raft port"). Unset: plain TCP, for the
  // explicit plaintext mode only. An empty tls->is_member accepts the ids of
  // `voters`; tls->log empty gets `log`.
  std::optional<TlsTransportOptions> tls;

  // Failover on loopback is election_timeout..2x plus a vote round trip;
  // 300 ms keeps 4x margin over the 30-70 ms stalls seen (trap 13).
  unsigned election_timeout_ms = 300;
  unsigned heartbeat_timeout_ms = 50;
  bool pre_vote = true;
  // Far above the defaults (1024 / 128): snapshots are serialised on the loop
  // thread and caused the 30-60 ms tail (trap 8).
  unsigned snapshot_threshold = 16384;
  unsigned snapshot_trailing = 8192;
  // The raft log held in memory, in bytes (FsmAdapter::bound_log_bytes): a
  // snapshot once the entries since the last reach half of it, and only the
  // trailing entries that fit in the other half. 0: entry counts only.
  std::size_t log_bytes_max = 0;
  // With log_bytes_max: each member snapshots at its own point of the
  // period (FsmAdapter::stagger_snapshots), so that the members' snapshot
  // pauses do not coincide (docs/consensus.md "Staggered snapshots").
  bool stagger_snapshots = true;
  // Where snapshots are serialised: in a forked child while the loop goes
  // on (the default), or on the loop thread, which a snapshot then holds
  // for its whole serialisation (docs/consensus.md "Snapshots in a child
  // process").
  SnapshotSerialization snapshot_serialization = kDefaultSnapshotSerialization;
  unsigned connect_retry_delay_ms = 100;
  // Size of each open segment libraft preallocates in data_dir (it keeps a
  // few ready ahead of need): the space a member takes before it writes a
  // record, and how much log a full disk still lets it append.
  std::size_t segment_bytes = 8 << 20;

  std::size_t max_in_flight = 16;  // raft_apply awaiting callbacks.
  std::size_t max_queued = 65536;  // Submissions queued plus in flight.
  unsigned poll_interval_ms = 10;  // Status and leadership polling (trap 9).
  unsigned transfer_timeout_ms = 1000;

  // Library trace messages (trap 10) and the node's own events. Called on the
  // loop thread or in start(); must be thread-safe and quick.
  std::function<void(LogLevel, std::string_view)> log;
  bool trace_library = true;  // Route libraft's tracer into `log` at debug level.
  // Called on the loop thread when completions are ready to be delivered;
  // must only wake the thread that calls deliver_completions().
  std::function<void()> on_completions_ready;
  // A log with no entry applied for this long is quiet (QuietLog): the node
  // frees its snapshot buffer (FsmAdapter::release_snapshot_buffer), once
  // per quiet spell (docs/limits.md "Member memory budget"). 0: never.
  unsigned quiet_after_ms = 5000;
  // On a quiet log holding at least this many bytes of entries, every member
  // compacts it (FsmAdapter::compact_on_next_apply) and the leader appends a
  // barrier `compact_barrier_delay_ms` later for them to apply: an idle
  // cluster does not keep the last burst's log, up to raft.log_bytes_max,
  // in memory (docs/limits.md "Member memory budget"). 0: never.
  std::size_t compact_quiet_log_bytes = std::size_t{1} << 20;
  // Followers learn of the last commit a heartbeat or so after the leader,
  // and go quiet that much later: the barrier waits for them.
  unsigned compact_barrier_delay_ms = 1000;
};

// Why start() failed; `message` names the call and the library's reason.
struct StartError {
  std::string message;
};

class Node {
 public:
  // Receives a submission's outcome, on the thread that calls deliver_completions().
  using Callback = std::function<void(const Outcome&)>;
  // Receives a membership change's result: 0 or a libraft error, with its text.
  using ChangeCallback = std::function<void(int status, std::string_view message)>;

  enum class SubmitStatus { kQueued, kQueueFull, kStopped };

  // Opens the data folder, bootstraps or recovers, and starts the loop thread.
  // Borrows `state`, which only the loop thread touches until stop() returns.
  [[nodiscard]] static Result<std::unique_ptr<Node>, StartError> start(NodeOptions options,
                                                                       ReplicatedState& state);
  ~Node();  // stop(false) if still running.
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Any thread. Queues `entry` (one log entry; pack many records into it) for
  // the loop thread (trap 1). kQueued: `callback` runs exactly once, from
  // deliver_completions(), with Committed only under the acknowledgement rule
  // (outcome.h). kQueueFull / kStopped: nothing queued, callback never runs.
  [[nodiscard]] SubmitStatus submit(std::vector<std::uint8_t> entry, Callback callback);

  // Any thread, but one at a time. Runs up to `max` ready callbacks (submissions
  // and membership changes) on the calling thread; returns how many ran.
  std::size_t deliver_completions(std::size_t max = SIZE_MAX);

  // Any thread. Membership changes, on the leader only (else the callback
  // gets RAFT_NOTLEADER). add_voter: raft_add then raft_assign(voter);
  // remove_member: raft_remove; replace_member: remove `old_id`, then add
  // `replacement` (which may reuse the id: a member that lost its disk and
  // started empty with bootstrap = false).
  void add_voter(Member member, ChangeCallback callback);
  void remove_member(std::uint64_t id, ChangeCallback callback);
  void replace_member(std::uint64_t old_id, Member replacement, ChangeCallback callback);

  // Any thread. The latest published status.
  [[nodiscard]] NodeStatus status() const;
  [[nodiscard]] bool ready_for_work() const;
  [[nodiscard]] std::uint64_t id() const;

  // Any thread but the loop's; idempotent. A leader with transfer_leadership
  // first hands leadership to the most up-to-date follower (bounded by
  // transfer_timeout_ms), then the node closes: queued submissions get
  // RetryLater, in-flight ones Unknown. Joins the loop thread.
  void stop(bool transfer_leadership);

 private:
  struct Loop;
  explicit Node(std::unique_ptr<Loop> loop);
  std::unique_ptr<Loop> loop_;
};

}  // namespace rw::consensus
