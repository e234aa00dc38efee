// The gateway's accounting submission state machine: records of validated
// Accounting-Requests wait here until a Committed from the leader covers
// them, and only then are their NAS requests answered (docs/design.md invariant
// 1). Pure (docs/style.md §1): events and `now` go in, actions come out; the shell
// (io/) owns the TCP connection and the NAS side. The frames are those of
// frames.h (docs/wire_formats.md, "Gateway-to-member frames").
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "base/bytes.h"
#include "base/random.h"
#include "base/time.h"
#include "submission/frames.h"

namespace rw::submission {

// Chosen by the caller for one NAS request to answer later (it maps the
// token to worker, endpoint, Identifier and Request Authenticator).
using WaiterToken = std::uint64_t;
// Names one TCP connection the forwarder asked for; events of a connection
// the forwarder closed or replaced carry an old id and are ignored.
using ConnectionId = std::uint64_t;

// Bounds and timings; docs/limits.md lists them with what happens at each.
struct ForwarderOptions {
  // Submission addresses ("host:port") of the members, tried in turn while
  // the leader is unknown; the only addresses a NotLeader or HelloAck
  // redirect is followed to. Requires: not empty.
  std::vector<std::string> members{};
  // Announced in Hello, for the member's logs.
  std::uint64_t gateway_id = 0;
  // A Submit carries at most this many records and this many bytes of keys
  // and records (within the frame bound of frames.h).
  std::size_t batch_records_max = 512;
  std::size_t batch_bytes_max = 256 * 1024;
  // A record waits at most this long for companions before it is sent
  // (docs/accounting.md "Batching on the gateway"). With send_when_quiet,
  // a record that finds the queue empty and no Submit sent within the last
  // batch_delay goes at once: a quiet gateway adds no wait, a busy one sends
  // at most one Submit per batch_delay unless a batch fills.
  Duration batch_delay = Duration::milliseconds(5);
  bool send_when_quiet = true;
  // Submits in flight on the connection at once (pipelining window).
  std::size_t in_flight_batches_max = 32;
  // With a Submit or a Ping outstanding and nothing at all received from
  // the member for this long, the connection is broken: it is closed and
  // everything in flight is re-submitted elsewhere. A member that is slow to
  // commit but answers Pings keeps its connection (docs/accounting.md
  // "A slow leader is not a dead one"): re-submitting to it would only add
  // the records a second time to the log it is already behind on.
  Duration submit_timeout = Duration::seconds(3);
  // A Submit not answered for this long although the member answers Pings
  // (a member that lost it): the connection is closed and its records are
  // re-submitted, as above. The record key makes a re-submission a no-op.
  Duration commit_timeout = Duration::seconds(30);
  // Connecting plus the HelloAck must take at most this long.
  Duration connect_timeout = Duration::seconds(1);
  // With nothing received for this long a Ping is sent, whether or not
  // Submits are in flight; see submit_timeout.
  Duration idle_ping_interval = Duration::seconds(1);
  // Records accepted and not yet committed, in number and in record bytes.
  // At either bound new records are refused (never dropped once accepted).
  std::size_t pending_records_max = 65536;
  std::size_t pending_bytes_max = 64 * 1024 * 1024;
  // NAS requests waiting on one record (retransmissions, re-sends).
  std::size_t waiters_per_record_max = 8;
  // Reconnection delay: doubles per failed attempt between these bounds,
  // with jitter (a uniform draw in [delay/2, delay]).
  Duration reconnect_backoff_min = Duration::milliseconds(20);
  Duration reconnect_backoff_max = Duration::seconds(1);
  // For this long after the leader's connection is lost, attempts follow
  // each other every reconnect_backoff_min (jittered) instead of backing
  // off: a new leader is elected 0.3-0.7 s after the old one died
  // (docs/consensus.md "Timeouts"), and the records waiting since must
  // reach it at once, not after a grown backoff (docs/consensus.md
  // "Failover under load"). Zero: back off from the first attempt.
  Duration failover_window = Duration::seconds(2);
  // Pause of all submissions after a Busy: doubles per round of Submits
  // refused in a row (the Busy answers to one round count once).
  Duration busy_backoff_min = Duration::milliseconds(5);
  Duration busy_backoff_max = Duration::milliseconds(500);
  // After a Busy of a full member (BusyReason::kQueueFull: its held records
  // at their bound while the exporter drains, or its submission queue
  // full), a steady state rather than a passing one: the pause doubles only
  // up to this, and one Submit at a time probes the member until a
  // Committed, the window then doubling per Committed back to
  // in_flight_batches_max (docs/accounting.md "Sharing a full cluster
  // between gateways").
  Duration queue_full_backoff_max = Duration::milliseconds(50);
  // Simultaneous-Use queries (SessionCountQuery) waiting or in flight. At
  // the bound a new query is answered "unavailable" at once.
  std::size_t session_queries_max = 4096;
  // A query unanswered for this long is forgotten: the gateway's request
  // handler has decided without it by then (its session_query_timeout).
  Duration session_query_timeout = Duration::seconds(1);
};

// Open a TCP connection to `address`, closing the current one if any; then
// report on_connected or on_connection_lost with this id.
struct Connect {
  ConnectionId connection = 0;
  std::string address{};
};
// Write these bytes (whole frames) on the connection, in order.
struct Send {
  ConnectionId connection = 0;
  std::vector<std::uint8_t> bytes{};
};
// Close the connection; no event is expected for it any more.
struct Close {
  ConnectionId connection = 0;
};
// The record this NAS request waited on is committed and applied: send the
// Accounting-Response now (it is the only place an answer comes from).
struct Answer {
  WaiterToken waiter = 0;
  std::uint64_t log_index = 0;
};
// The answer to the Simultaneous-Use query of `waiter`: the open sessions of
// its User-Name in the leader's applied ledger, or none when the query could
// not be asked (too many queries pending). An unanswered query gets no
// SessionCount at all: the waiter's own timeout decides.
struct SessionCount {
  WaiterToken waiter = 0;
  std::optional<std::uint32_t> open_sessions{};
};
using Action = std::variant<Connect, Send, Close, Answer, SessionCount>;
using Actions = std::vector<Action>;

// What on_record did with a record.
enum class Admission {
  kAccepted,        // New pending record; the waiter will be answered.
  kCoalesced,       // Same key already pending; the waiter is attached to it.
  kRefusedFull,     // Pending bound reached: not kept, do not answer (the NAS retries).
  kRefusedWaiters,  // The pending record has waiters_per_record_max waiters already: do not answer.
  kRefusedInvalid,  // Empty record or above kRecordBytesMax: a bug of the caller; do not answer.
};
[[nodiscard]] std::string_view to_string(Admission admission);
// True when the waiter will be answered.
[[nodiscard]] inline bool admitted(Admission admission) {
  return admission == Admission::kAccepted || admission == Admission::kCoalesced;
}

struct RecordOutcome {
  Admission admission = Admission::kAccepted;
  Actions actions{};
};

enum class LinkState {
  kWaiting,      // No connection; the next attempt is due at a set time.
  kConnecting,   // Connect issued, not yet connected.
  kHandshaking,  // Hello sent, HelloAck not yet received.
  kReady,        // Connected to the leader: submitting.
};
[[nodiscard]] std::string_view to_string(LinkState state);

// Counters since construction, for /status and /metrics.
struct ForwarderCounters {
  std::uint64_t accepted = 0;
  std::uint64_t coalesced = 0;
  std::uint64_t refused_full = 0;
  std::uint64_t refused_waiters = 0;
  std::uint64_t refused_invalid = 0;
  std::uint64_t batches_sent = 0;
  std::uint64_t records_sent = 0;  // Re-submissions counted again.
  std::uint64_t batches_committed = 0;
  std::uint64_t records_committed = 0;
  std::uint64_t answers = 0;
  std::uint64_t not_leader = 0;
  std::uint64_t busy = 0;
  std::uint64_t submit_timeouts = 0;  // The member silent for submit_timeout.
  std::uint64_t commit_timeouts = 0;  // A Submit unanswered for commit_timeout, Pings answered.
  std::uint64_t connect_timeouts = 0;
  std::uint64_t connections_lost = 0;
  std::uint64_t connects = 0;
  std::uint64_t protocol_errors = 0;          // Malformed or unexpected frames from a member.
  std::uint64_t records_resubmitted = 0;      // Taken back from flight after loss, timeout or NotLeader.
  std::uint64_t session_queries = 0;          // Simultaneous-Use queries taken.
  std::uint64_t session_answers = 0;          // SessionCountAnswer frames matched to a query.
  std::uint64_t session_queries_refused = 0;  // At session_queries_max: answered unavailable.
  std::uint64_t session_queries_expired = 0;  // Forgotten after session_query_timeout.
  std::uint64_t session_queries_resent = 0;   // Asked again after loss, NotLeader or Busy.
  std::uint64_t redirects_refused = 0;        // NotLeader/HelloAck naming an unconfigured address: ignored.
  std::uint64_t failovers = 0;                // Leader connections lost and a Committed again since.
};

// The counters with stable snake_case names, in declaration order: the
// keys of /status's "submission.counters" object and the `reason` label of
// /metrics' radiusward_submission_events_total (docs/admin_api.md).
[[nodiscard]] std::vector<std::pair<std::string_view, std::uint64_t>> named_counters(
    const ForwarderCounters& counters);

// The last failover: from the loss of the leader's connection to the
// first Committed after it (docs/consensus.md "Failover under load").
struct Failover {
  std::string from{};                 // Address of the connection lost.
  std::string to{};                   // Address of the leader that committed next.
  Duration leader_after{};            // From the loss to a HelloAck naming a leader.
  Duration committed_after{};         // From the loss to the first Committed.
  std::size_t attempts = 0;           // Connections opened meanwhile.
  std::size_t records_in_flight = 0;  // Taken back from flight at the loss, re-submitted.
  std::size_t records_queued = 0;     // Waiting for a Submit when the leader was found.
};

struct ForwarderStatus {
  LinkState state = LinkState::kWaiting;
  std::string address{};            // Of the current connection or of the next attempt.
  std::size_t pending_records = 0;  // Accepted, not yet committed (queued + in flight).
  std::size_t pending_bytes = 0;
  std::size_t queued_records = 0;  // Waiting for a Submit.
  std::size_t in_flight_batches = 0;
  std::size_t in_flight_records = 0;
  // When the oldest pending record was accepted (none pending: empty): how
  // far behind the cluster is, as a NAS waits (docs/accounting.md "Admission
  // by count, and the oldest record's wait").
  std::optional<Instant> oldest_pending_accepted_at{};
  std::size_t session_queries = 0;  // Simultaneous-Use queries waiting or in flight.
  ForwarderCounters counters{};
  std::optional<Failover> last_failover{};
};

// One per gateway process, driven from one thread. Owns copies of the
// records it accepted until a Committed covers them. `random` (borrowed,
// must outlive the forwarder) only jitters backoff delays.
//
// Guarantees, checked by forwarder_test's seeded simulation: an Answer is
// emitted once per admitted waiter, only after a Committed whose Submit held
// the waiter's key, and an accepted record stays until such a Committed,
// whatever connection losses, timeouts, NotLeader and Busy happen meanwhile.
// A record cannot be withdrawn: one whose NAS requests all gave up is still
// submitted, because an earlier Submit may already have stored it.
// It does not persist anything: a gateway that restarts loses its pending
// records, which is safe because none of them was answered (the NAS retries).
class Forwarder {
 public:
  Forwarder(ForwarderOptions options, RandomSource& random);

  // The first connection attempt, to the first member.
  [[nodiscard]] Actions start(Instant now);

  // A validated Accounting-Request became `record` with `key`. Copies the
  // record when accepted; may emit a Submit at once when a batch is full.
  [[nodiscard]] RecordOutcome on_record(Instant now, const RecordKey& key, Bytes record, WaiterToken waiter);
  // on_record for records taken together from the shell's queue: admit each
  // (the same admission, nothing sent), then send_admitted once, so that
  // they leave together (one Submit for a batch's worth) rather than the
  // first one alone because the gateway was quiet when it came.
  [[nodiscard]] Admission admit_record(Instant now, const RecordKey& key, Bytes record, WaiterToken waiter);
  [[nodiscard]] Actions send_admitted(Instant now);

  // Asks the leader how many sessions of `user_name` are open (Simultaneous-
  // Use). Sent at once when connected to the leader, else when a leader
  // takes it; asked again on the next connection after a loss, NotLeader or
  // Busy, until session_query_timeout. Emits SessionCount{waiter, count}
  // when the answer comes. Requires: 1..kUserNameBytesMax bytes.
  [[nodiscard]] Actions on_session_query(Instant now, std::string_view user_name, WaiterToken waiter);

  // The shell's TCP connect succeeded: sends Hello.
  [[nodiscard]] Actions on_connected(Instant now, ConnectionId connection);
  // One whole frame (from FrameReader::next) received on `connection`.
  [[nodiscard]] Actions on_frame(Instant now, ConnectionId connection, Bytes frame);
  // The connect failed, or the connection broke (read or write error, EOF).
  [[nodiscard]] Actions on_connection_lost(Instant now, ConnectionId connection);
  // Batch delays, timeouts, backoffs, pings. Call it at next_deadline() or later.
  [[nodiscard]] Actions on_tick(Instant now);
  // When on_tick next has work, or no deadline when it has none.
  [[nodiscard]] std::optional<Instant> next_deadline() const;
  // Until when a record given to on_record now would only be queued, when
  // connected to the leader with room in the window and send_when_quiet:
  // the queue's flush, or else the end of the batching delay since the last
  // Submit (a record is sent at once from then on), or a Busy's pause.
  // Before then the shell may let records gather on its side and give them
  // all at this instant instead of waking for each one, unless they fill a
  // batch (docs/accounting.md "Waking the submission thread"). No value: a
  // record now may be sent at once, or the forwarder is in another state.
  [[nodiscard]] std::optional<Instant> records_wait_until(Instant now) const;

  // The decoded member frames; on_frame dispatches to these. Public so that
  // tests can drive them directly. Events of another connection are ignored.
  [[nodiscard]] Actions on_hello_ack(Instant now, ConnectionId connection, const HelloAck& ack);
  [[nodiscard]] Actions on_committed(Instant now, ConnectionId connection, const Committed& committed);
  [[nodiscard]] Actions on_not_leader(Instant now, ConnectionId connection, const NotLeader& not_leader);
  [[nodiscard]] Actions on_busy(Instant now, ConnectionId connection, const Busy& busy);
  [[nodiscard]] Actions on_session_count_answer(Instant now, ConnectionId connection,
                                                const SessionCountAnswer& answer);

  [[nodiscard]] ForwarderStatus status() const;
  // Cheap, for a shell that logs each failover once: counters().failovers
  // grows when last_failover() changes.
  [[nodiscard]] const ForwarderCounters& counters() const { return counters_; }
  [[nodiscard]] const std::optional<Failover>& last_failover() const { return last_failover_; }

 private:
  struct PendingRecord {
    std::vector<std::uint8_t> bytes;
    std::vector<WaiterToken> waiters;
    std::optional<std::uint64_t> request_id;  // Set while in flight.
    Instant accepted_at{};
  };
  // One accepted record, in acceptance order; stale once its record is
  // committed (or the key was accepted again later).
  struct Arrival {
    Instant accepted_at{};
    RecordKey key{};
  };
  struct Batch {
    std::vector<RecordKey> keys;
    Instant deadline;
  };
  struct SessionQuery {
    std::string user_name;
    WaiterToken waiter = 0;
    Instant expires{};
  };

  void pump(Instant now, Actions& actions);
  void send_batch(Instant now, Actions& actions);
  void requeue_all_in_flight(Instant now);
  void send_session_queries(Instant now, Actions& actions);
  void requeue_session_queries();
  void expire_session_queries(Instant now);
  void requeue_batch(Instant now, std::uint64_t request_id);
  void connect_to(Instant now, std::string address, Actions& actions);
  // Closes the current connection (if any), takes everything back from
  // flight and schedules the next attempt at `address` or the next member.
  void drop_link(Instant now, std::optional<std::string_view> address, Actions& actions);
  // Pauses submissions after a Busy for `request_id`, doubling the pause
  // once per round of Submits up to `cap`.
  void hold_after_busy(Instant now, std::uint64_t request_id, Duration cap);
  void on_tick_link(Instant now, Actions& actions);
  // The connection to the leader is about to go (it was kReady): starts a
  // failover record, and the window of quick attempts.
  void note_leader_lost(Instant now);
  [[nodiscard]] bool in_failover_window(Instant now) const;
  // A Submit or a Ping waits for the member's answer on the current connection.
  [[nodiscard]] bool awaiting_member() const { return ping_nonce_.has_value() || !in_flight_.empty(); }
  [[nodiscard]] Duration jittered(Duration base);
  [[nodiscard]] bool current(ConnectionId connection) const;
  [[nodiscard]] std::size_t record_cost(std::size_t record_bytes) const;
  // Whether `arrival` is still a pending record's.
  [[nodiscard]] bool live(const Arrival& arrival) const;
  // Drops stale arrivals from the front, and rebuilds the list when stale
  // ones behind a long-pending record would let it grow past the pending
  // records. Afterwards the front, if any, is the oldest pending record's.
  void prune_arrivals();

  ForwarderOptions options_;
  RandomSource& random_;

  std::map<RecordKey, PendingRecord> records_;
  std::deque<RecordKey> queue_;   // Records not in flight, oldest first.
  std::deque<Arrival> arrivals_;  // Every record accepted and maybe pending, oldest first.
  std::size_t queued_bytes_ = 0;  // Frame bytes the queued records take.
  std::size_t pending_bytes_ = 0;
  std::optional<Instant> flush_at_{};   // When the queue must be sent even if no batch is full.
  std::optional<Instant> last_sent_{};  // When the last Submit left (send_when_quiet).
  std::map<std::uint64_t, Batch> in_flight_;
  std::deque<SessionQuery> queries_queued_;                  // Not sent on the current connection.
  std::map<std::uint64_t, SessionQuery> queries_in_flight_;  // By request id.
  std::uint64_t next_request_id_ = 1;

  LinkState state_ = LinkState::kWaiting;
  ConnectionId connection_ = 0;
  ConnectionId next_connection_ = 1;
  std::string address_{};
  Instant link_deadline_{};  // Connect/handshake deadline, or next attempt when waiting.
  Instant last_received_{};
  std::optional<std::uint64_t> ping_nonce_{};
  std::size_t member_cursor_ = 0;
  std::size_t failed_attempts_ = 0;  // Since the last kReady.
  std::size_t redirects_ = 0;        // Since the last kReady.
  Instant hold_until_{};             // No Submit before this (after Busy).
  // Submits in flight at most now: in_flight_batches_max, or fewer while
  // probing a full member (from 1 after its Busy, doubling per Committed).
  std::size_t window_ = 0;
  Duration busy_backoff_{};
  std::uint64_t busy_round_ = 0;  // Busy for a request id below this: same round as the last pause.
  // Since the leader's connection was lost, until the next Committed.
  std::optional<Instant> leader_lost_at_{};
  Failover failover_{};
  std::optional<Failover> last_failover_{};

  ForwarderCounters counters_{};
};

}  // namespace rw::submission
