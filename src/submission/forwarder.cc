// The gateway's pending-accounting state machine (forwarder.h). Every path
// that takes a record out of flight puts it back at the front of the queue,
// so nothing accepted is forgotten; only on_committed erases records.
#include "submission/forwarder.h"

#include <algorithm>

#include "base/assert.h"

namespace rw::submission {
namespace {

// Bytes of a record's share in a Submit frame: key, length field, record.
constexpr std::size_t kRecordOverheadBytes = 16 + 2;

std::vector<std::uint8_t> encode_one(const Frame& frame) {
  std::vector<std::uint8_t> bytes;
  encode_frame(frame, bytes);
  return bytes;
}

// Builds the action in place: g++ 12 warns falsely (maybe-uninitialized)
// when a temporary variant holding a vector is moved into the vector.
template <class T>
void emit(Actions& actions, T action) {
  actions.emplace_back(std::in_place_type<T>, std::move(action));
}

std::uint64_t random_u64(RandomSource& random) {
  std::array<std::uint8_t, 8> bytes{};
  random.fill(bytes);
  std::uint64_t value = 0;
  for (std::uint8_t b : bytes) value = value << 8 | b;
  return value;
}

}  // namespace

std::string_view to_string(Admission admission) {
  switch (admission) {
    case Admission::kAccepted:
      return "accepted";
    case Admission::kCoalesced:
      return "coalesced";
    case Admission::kRefusedFull:
      return "refused_full";
    case Admission::kRefusedWaiters:
      return "refused_waiters";
    case Admission::kRefusedInvalid:
      return "refused_invalid";
  }
  return "unknown";
}

std::string_view to_string(LinkState state) {
  switch (state) {
    case LinkState::kWaiting:
      return "waiting";
    case LinkState::kConnecting:
      return "connecting";
    case LinkState::kHandshaking:
      return "handshaking";
    case LinkState::kReady:
      return "ready";
  }
  return "unknown";
}

std::vector<std::pair<std::string_view, std::uint64_t>> named_counters(const ForwarderCounters& c) {
  return {
      {"accepted", c.accepted},
      {"coalesced", c.coalesced},
      {"refused_full", c.refused_full},
      {"refused_waiters", c.refused_waiters},
      {"refused_invalid", c.refused_invalid},
      {"batches_sent", c.batches_sent},
      {"records_sent", c.records_sent},
      {"batches_committed", c.batches_committed},
      {"records_committed", c.records_committed},
      {"answers", c.answers},
      {"not_leader", c.not_leader},
      {"busy", c.busy},
      {"submit_timeouts", c.submit_timeouts},
      {"commit_timeouts", c.commit_timeouts},
      {"connect_timeouts", c.connect_timeouts},
      {"connections_lost", c.connections_lost},
      {"connects", c.connects},
      {"protocol_errors", c.protocol_errors},
      {"records_resubmitted", c.records_resubmitted},
      {"session_queries", c.session_queries},
      {"session_answers", c.session_answers},
      {"session_queries_refused", c.session_queries_refused},
      {"session_queries_expired", c.session_queries_expired},
      {"session_queries_resent", c.session_queries_resent},
      {"redirects_refused", c.redirects_refused},
      {"failovers", c.failovers},
  };
}

Forwarder::Forwarder(ForwarderOptions options, RandomSource& random)
    : options_(std::move(options)),
      random_(random),
      window_(options_.in_flight_batches_max),
      busy_backoff_(options_.busy_backoff_min) {
  RW_ASSERT(!options_.members.empty());
  RW_ASSERT(options_.batch_records_max >= 1 && options_.batch_records_max <= kSubmitRecordsMax);
  // One record of the largest size must fit a batch, and a batch must fit a frame.
  RW_ASSERT(options_.batch_bytes_max >= kRecordBytesMax + kRecordOverheadBytes);
  RW_ASSERT(submit_frame_bytes(0, options_.batch_bytes_max) <= kLengthPrefixBytes + kFrameBodyBytesMax);
  RW_ASSERT(options_.in_flight_batches_max >= 1);
  RW_ASSERT(options_.waiters_per_record_max >= 1);
}

Actions Forwarder::start(Instant now) {
  Actions actions;
  connect_to(now, options_.members[member_cursor_++ % options_.members.size()], actions);
  return actions;
}

std::size_t Forwarder::record_cost(std::size_t record_bytes) const {
  return record_bytes + kRecordOverheadBytes;
}

bool Forwarder::live(const Arrival& arrival) const {
  auto found = records_.find(arrival.key);
  return found != records_.end() && found->second.accepted_at == arrival.accepted_at;
}

void Forwarder::prune_arrivals() {
  while (!arrivals_.empty() && !live(arrivals_.front())) arrivals_.pop_front();
  // Records are committed about in the order they were accepted, so stale
  // arrivals sit mostly at the front. One pending record held back for
  // long (Busy, a lost connection) keeps the committed ones behind it,
  // though: rebuilt once they outnumber the pending records, the list
  // stays within twice the pending records (and their bound).
  if (arrivals_.size() > 2 * records_.size() + 1024) {
    std::erase_if(arrivals_, [this](const Arrival& arrival) { return !live(arrival); });
  }
}

RecordOutcome Forwarder::on_record(Instant now, const RecordKey& key, Bytes record, WaiterToken waiter) {
  RecordOutcome outcome;
  outcome.admission = admit_record(now, key, record, waiter);
  if (outcome.admission == Admission::kAccepted) pump(now, outcome.actions);
  return outcome;
}

Actions Forwarder::send_admitted(Instant now) {
  Actions actions;
  pump(now, actions);
  return actions;
}

Admission Forwarder::admit_record(Instant now, const RecordKey& key, Bytes record, WaiterToken waiter) {
  if (record.empty() || record.size() > kRecordBytesMax) {
    ++counters_.refused_invalid;
    return Admission::kRefusedInvalid;
  }
  if (auto found = records_.find(key); found != records_.end()) {
    // Coalescing: a NAS retransmission or re-send maps to the same key and
    // must not be submitted twice (docs/design.md invariant 2); it waits on the
    // record already pending, in flight or not.
    std::vector<WaiterToken>& waiters = found->second.waiters;
    if (std::find(waiters.begin(), waiters.end(), waiter) != waiters.end()) {
      ++counters_.coalesced;
      return Admission::kCoalesced;
    }
    if (waiters.size() >= options_.waiters_per_record_max) {
      ++counters_.refused_waiters;
      return Admission::kRefusedWaiters;
    }
    waiters.push_back(waiter);
    ++counters_.coalesced;
    return Admission::kCoalesced;
  }
  if (records_.size() >= options_.pending_records_max ||
      pending_bytes_ + record.size() > options_.pending_bytes_max) {
    ++counters_.refused_full;
    return Admission::kRefusedFull;
  }
  PendingRecord pending;
  pending.bytes.assign(record.begin(), record.end());
  pending.waiters.push_back(waiter);
  pending.accepted_at = now;
  records_.emplace(key, std::move(pending));
  arrivals_.push_back(Arrival{.accepted_at = now, .key = key});
  pending_bytes_ += record.size();
  if (queue_.empty()) {
    const bool quiet = options_.send_when_quiet && (!last_sent_ || now >= *last_sent_ + options_.batch_delay);
    flush_at_ = quiet ? now : now + options_.batch_delay;
  }
  queue_.push_back(key);
  queued_bytes_ += record_cost(record.size());
  ++counters_.accepted;
  return Admission::kAccepted;
}

Actions Forwarder::on_session_query(Instant now, std::string_view user_name, WaiterToken waiter) {
  RW_ASSERT(!user_name.empty() && user_name.size() <= kUserNameBytesMax);
  Actions actions;
  expire_session_queries(now);
  if (queries_queued_.size() + queries_in_flight_.size() >= options_.session_queries_max) {
    ++counters_.session_queries_refused;
    emit(actions, SessionCount{waiter, std::nullopt});
    return actions;
  }
  ++counters_.session_queries;
  queries_queued_.push_back(SessionQuery{.user_name = std::string(user_name),
                                         .waiter = waiter,
                                         .expires = now + options_.session_query_timeout});
  send_session_queries(now, actions);
  return actions;
}

void Forwarder::send_session_queries(Instant now, Actions& actions) {
  if (state_ != LinkState::kReady || now < hold_until_) return;
  while (!queries_queued_.empty()) {
    const std::uint64_t request_id = next_request_id_++;
    SessionQuery& query = queries_queued_.front();
    emit(actions, Send{connection_, encode_one(SessionCountQuery{.request_id = request_id,
                                                                 .user_name = query.user_name})});
    queries_in_flight_.emplace(request_id, std::move(query));
    queries_queued_.pop_front();
  }
}

void Forwarder::requeue_session_queries() {
  // Reads: asking again is harmless. Oldest (lowest request id) first.
  for (auto it = queries_in_flight_.rbegin(); it != queries_in_flight_.rend(); ++it) {
    queries_queued_.push_front(std::move(it->second));
    ++counters_.session_queries_resent;
  }
  queries_in_flight_.clear();
}

void Forwarder::expire_session_queries(Instant now) {
  // Bounded by session_queries_max. Nothing is emitted: the waiter's own
  // timeout has decided by now.
  std::erase_if(queries_queued_, [&](const SessionQuery& query) {
    if (now < query.expires) return false;
    ++counters_.session_queries_expired;
    return true;
  });
  std::erase_if(queries_in_flight_, [&](const auto& entry) {
    if (now < entry.second.expires) return false;
    ++counters_.session_queries_expired;
    return true;
  });
}

Actions Forwarder::on_session_count_answer(Instant now, ConnectionId connection,
                                           const SessionCountAnswer& answer) {
  Actions actions;
  if (!current(connection)) return actions;
  auto found = queries_in_flight_.find(answer.request_id);
  if (found == queries_in_flight_.end()) {
    // Expired meanwhile, or a request id this gateway never used.
    if (answer.request_id >= next_request_id_) {
      ++counters_.protocol_errors;
      drop_link(now, std::nullopt, actions);
    }
    return actions;
  }
  ++counters_.session_answers;
  emit(actions, SessionCount{found->second.waiter, answer.open_sessions});
  queries_in_flight_.erase(found);
  return actions;
}

bool Forwarder::current(ConnectionId connection) const {
  return connection == connection_ && state_ != LinkState::kWaiting;
}

void Forwarder::pump(Instant now, Actions& actions) {
  if (state_ != LinkState::kReady || now < hold_until_) return;
  send_session_queries(now, actions);
  while (!queue_.empty() && in_flight_.size() < window_) {
    const bool full =
        queue_.size() >= options_.batch_records_max || queued_bytes_ >= options_.batch_bytes_max;
    const bool due = flush_at_ && now >= *flush_at_;
    if (!full && !due) break;
    send_batch(now, actions);
  }
  if (queue_.empty()) flush_at_.reset();
}

void Forwarder::send_batch(Instant now, Actions& actions) {
  const std::uint64_t request_id = next_request_id_++;
  Batch batch;
  batch.deadline = now + options_.commit_timeout;
  Submit submit{.request_id = request_id};
  std::size_t bytes = 0;
  while (!queue_.empty() && batch.keys.size() < options_.batch_records_max) {
    const RecordKey& key = queue_.front();
    PendingRecord& record = records_.at(key);
    const std::size_t cost = record_cost(record.bytes.size());
    if (!batch.keys.empty() && bytes + cost > options_.batch_bytes_max) break;
    RW_ASSERT(!record.request_id);
    record.request_id = request_id;
    bytes += cost;
    queued_bytes_ -= cost;
    submit.records.push_back({key, record.bytes});
    batch.keys.push_back(key);
    queue_.pop_front();
  }
  counters_.batches_sent += 1;
  counters_.records_sent += batch.keys.size();
  last_sent_ = now;
  emit(actions, Send{connection_, encode_one(submit)});
  in_flight_.emplace(request_id, std::move(batch));
}

void Forwarder::requeue_batch(Instant now, std::uint64_t request_id) {
  auto found = in_flight_.find(request_id);
  RW_ASSERT(found != in_flight_.end());
  const std::vector<RecordKey>& keys = found->second.keys;
  // Back at the front, in their order: they are the oldest records.
  for (auto key = keys.rbegin(); key != keys.rend(); ++key) {
    PendingRecord& record = records_.at(*key);
    RW_ASSERT(record.request_id == request_id);
    record.request_id.reset();
    queue_.push_front(*key);
    queued_bytes_ += record_cost(record.bytes.size());
  }
  counters_.records_resubmitted += keys.size();
  in_flight_.erase(found);
  // They have waited already: send them as soon as a leader takes them.
  if (!queue_.empty()) flush_at_ = now;
}

void Forwarder::requeue_all_in_flight(Instant now) {
  // Newest first, so that the oldest batch ends up at the very front.
  while (!in_flight_.empty()) requeue_batch(now, std::prev(in_flight_.end())->first);
}

void Forwarder::connect_to(Instant now, std::string address, Actions& actions) {
  if (leader_lost_at_) ++failover_.attempts;
  connection_ = next_connection_++;
  state_ = LinkState::kConnecting;
  address_ = std::move(address);
  link_deadline_ = now + options_.connect_timeout;
  ping_nonce_.reset();
  ++counters_.connects;
  emit(actions, Connect{connection_, address_});
}

Duration Forwarder::jittered(Duration base) {
  if (base.ns <= 1) return base;
  const std::uint64_t half = static_cast<std::uint64_t>(base.ns / 2);
  return Duration::nanoseconds(static_cast<std::int64_t>(half + random_u64(random_) % (half + 1)));
}

void Forwarder::note_leader_lost(Instant now) {
  // A failover already under way (a leader lost again before anything
  // committed) keeps its start: its records have waited since then.
  if (leader_lost_at_) return;
  leader_lost_at_ = now;
  failover_ = Failover{.from = address_, .records_in_flight = records_.size() - queue_.size()};
}

bool Forwarder::in_failover_window(Instant now) const {
  return leader_lost_at_ && now < *leader_lost_at_ + options_.failover_window;
}

void Forwarder::drop_link(Instant now, std::optional<std::string_view> address, Actions& actions) {
  if (state_ == LinkState::kReady) note_leader_lost(now);
  if (state_ != LinkState::kWaiting) emit(actions, Close{connection_});
  requeue_all_in_flight(now);
  requeue_session_queries();
  ping_nonce_.reset();
  state_ = LinkState::kWaiting;
  // Only configured members are followed (docs/security.md "Submission
  // port"): a member, or anyone answering in its place, cannot send the
  // gateway's records elsewhere.
  if (address && !address->empty() &&
      std::find(options_.members.begin(), options_.members.end(), *address) == options_.members.end()) {
    ++counters_.redirects_refused;
    address.reset();
  }
  // A redirect to a named leader is followed at once, unless redirects keep
  // going round (members disagreeing during an election): then it backs off too.
  if (address && !address->empty() && redirects_ <= 2 * options_.members.size()) {
    ++redirects_;
    address_ = std::string(*address);
    link_deadline_ = now;
    return;
  }
  address_ = address && !address->empty() ? std::string(*address)
                                          : options_.members[member_cursor_++ % options_.members.size()];
  Duration delay = options_.reconnect_backoff_min;
  if (in_failover_window(now)) {
    // Polling the members until one leads or names the new leader: the
    // election ends within the window, and every attempt is one short
    // connection (the backoff protects members from a gateway that cannot
    // find a leader for longer, not from this).
    link_deadline_ = now + jittered(delay);
    return;
  }
  for (std::size_t i = 0; i < failed_attempts_ && delay < options_.reconnect_backoff_max; ++i)
    delay = delay + delay;
  delay = std::min(delay, options_.reconnect_backoff_max);
  ++failed_attempts_;
  link_deadline_ = now + jittered(delay);
}

Actions Forwarder::on_connected(Instant now, ConnectionId connection) {
  Actions actions;
  if (!current(connection) || state_ != LinkState::kConnecting) return actions;
  state_ = LinkState::kHandshaking;
  last_received_ = now;
  emit(actions, Send{connection_, encode_one(Hello{.gateway_id = options_.gateway_id})});
  return actions;
}

Actions Forwarder::on_frame(Instant now, ConnectionId connection, Bytes frame) {
  Actions actions;
  if (!current(connection)) return actions;
  auto decoded = decode_frame(frame);
  if (!decoded) {
    ++counters_.protocol_errors;
    drop_link(now, std::nullopt, actions);
    return actions;
  }
  last_received_ = now;
  if (auto* ack = std::get_if<HelloAck>(&*decoded)) return on_hello_ack(now, connection, *ack);
  if (auto* committed = std::get_if<Committed>(&*decoded)) return on_committed(now, connection, *committed);
  if (auto* not_leader = std::get_if<NotLeader>(&*decoded))
    return on_not_leader(now, connection, *not_leader);
  if (auto* busy = std::get_if<Busy>(&*decoded)) return on_busy(now, connection, *busy);
  if (auto* count = std::get_if<SessionCountAnswer>(&*decoded)) {
    return on_session_count_answer(now, connection, *count);
  }
  if (auto* pong = std::get_if<Pong>(&*decoded); pong && ping_nonce_ == pong->nonce) {
    ping_nonce_.reset();
    return actions;
  }
  // Hello, Submit or Ping from a member, or a Pong nobody asked for.
  ++counters_.protocol_errors;
  drop_link(now, std::nullopt, actions);
  return actions;
}

Actions Forwarder::on_hello_ack(Instant now, ConnectionId connection, const HelloAck& ack) {
  Actions actions;
  if (!current(connection)) return actions;
  if (state_ != LinkState::kHandshaking) {
    ++counters_.protocol_errors;
    drop_link(now, std::nullopt, actions);
    return actions;
  }
  if (!ack.is_leader) {
    ++counters_.not_leader;
    // Follow the leader it names, unless it names this very member.
    std::optional<std::string_view> leader = ack.leader;
    if (leader && *leader == address_) leader.reset();
    drop_link(now, leader, actions);
    return actions;
  }
  state_ = LinkState::kReady;
  window_ = options_.in_flight_batches_max;  // Another leader, or the same one afresh.
  failed_attempts_ = 0;
  redirects_ = 0;
  if (leader_lost_at_) {
    failover_.leader_after = now - *leader_lost_at_;
    failover_.records_queued = queue_.size();
  }
  // Records that waited for a leader have waited long enough.
  if (!queue_.empty()) flush_at_ = now;
  pump(now, actions);
  return actions;
}

Actions Forwarder::on_committed(Instant now, ConnectionId connection, const Committed& committed) {
  Actions actions;
  if (!current(connection)) return actions;
  auto found = in_flight_.find(committed.request_id);
  if (state_ != LinkState::kReady || found == in_flight_.end()) {
    // Not a request of this connection in flight: the member is confused.
    ++counters_.protocol_errors;
    drop_link(now, std::nullopt, actions);
    return actions;
  }
  // docs/design.md invariant 1: the only place answers come from.
  for (const RecordKey& key : found->second.keys) {
    auto record = records_.find(key);
    RW_ASSERT(record != records_.end() && record->second.request_id == committed.request_id);
    for (WaiterToken waiter : record->second.waiters) {
      emit(actions, Answer{waiter, committed.log_index});
      ++counters_.answers;
    }
    pending_bytes_ -= record->second.bytes.size();
    records_.erase(record);
  }
  prune_arrivals();
  ++counters_.batches_committed;
  counters_.records_committed += found->second.keys.size();
  if (leader_lost_at_) {
    failover_.to = address_;
    failover_.committed_after = now - *leader_lost_at_;
    last_failover_ = failover_;
    leader_lost_at_.reset();
    ++counters_.failovers;
  }
  in_flight_.erase(found);
  busy_backoff_ = options_.busy_backoff_min;
  window_ = std::min(window_ * 2, options_.in_flight_batches_max);
  pump(now, actions);
  return actions;
}

Actions Forwarder::on_not_leader(Instant now, ConnectionId connection, const NotLeader& not_leader) {
  Actions actions;
  if (!current(connection)) return actions;
  ++counters_.not_leader;
  // The member stored nothing of this request, nor will it of any other on
  // this connection: take everything back and go where it points.
  std::optional<std::string_view> leader = not_leader.leader;
  if (leader && *leader == address_) leader.reset();
  drop_link(now, leader, actions);
  return actions;
}

Actions Forwarder::on_busy(Instant now, ConnectionId connection, const Busy& busy) {
  Actions actions;
  if (!current(connection)) return actions;
  if (auto query = queries_in_flight_.find(busy.request_id);
      state_ == LinkState::kReady && query != queries_in_flight_.end()) {
    // A new leader before its barrier: ask again after the same pause as
    // records, within the query's own timeout.
    ++counters_.busy;
    ++counters_.session_queries_resent;
    queries_queued_.push_front(std::move(query->second));
    queries_in_flight_.erase(query);
    hold_after_busy(now, busy.request_id, options_.busy_backoff_max);
    return actions;
  }
  if (state_ != LinkState::kReady || !in_flight_.contains(busy.request_id)) {
    ++counters_.protocol_errors;
    drop_link(now, std::nullopt, actions);
    return actions;
  }
  ++counters_.busy;
  requeue_batch(now, busy.request_id);
  if (busy.reason == BusyReason::kQueueFull) {
    // docs/accounting.md "Sharing a full cluster between gateways": a full
    // member takes a batch when its exporter has made room, and refuses the
    // rest after receiving and decoding it. Probing with one Submit after
    // pauses of at most queue_full_backoff_max, instead of resending the
    // whole window after pauses that grow to half a second, keeps refused
    // Submits from loading the member and takes the room soon after it is
    // made.
    window_ = 1;
    hold_after_busy(now, busy.request_id, options_.queue_full_backoff_max);
  } else {
    hold_after_busy(now, busy.request_id, options_.busy_backoff_max);
  }
  return actions;
}

void Forwarder::hold_after_busy(Instant now, std::uint64_t request_id, Duration cap) {
  // The Busy answers to Submits sent together come together: a new leader
  // before its barrier refuses every batch in flight. They are one refusal,
  // so the pause doubles once per round, not once per batch (it doubled per
  // Busy: four batches refused once made it 80 ms, seven the whole 500 ms,
  // past a barrier of a few ms; docs/consensus.md "Failover under load").
  if (request_id < busy_round_) return;
  hold_until_ = now + jittered(std::min(busy_backoff_, cap));
  busy_backoff_ = std::min(busy_backoff_ + busy_backoff_, cap);
  busy_round_ = next_request_id_;
}

Actions Forwarder::on_connection_lost(Instant now, ConnectionId connection) {
  Actions actions;
  if (!current(connection)) return actions;
  ++counters_.connections_lost;
  if (state_ == LinkState::kReady) note_leader_lost(now);
  // The shell already closed it: no Close action.
  state_ = LinkState::kWaiting;
  drop_link(now, std::nullopt, actions);
  return actions;
}

void Forwarder::on_tick_link(Instant now, Actions& actions) {
  switch (state_) {
    case LinkState::kWaiting:
      if (now >= link_deadline_) connect_to(now, address_, actions);
      return;
    case LinkState::kConnecting:
    case LinkState::kHandshaking:
      if (now >= link_deadline_) {
        ++counters_.connect_timeouts;
        drop_link(now, std::nullopt, actions);
      }
      return;
    case LinkState::kReady:
      break;
  }
  // Liveness is what the member sends, not how fast it commits: a leader
  // behind on its disk answers Pings (docs/accounting.md "A slow leader is
  // not a dead one").
  if (awaiting_member() && now >= last_received_ + options_.submit_timeout) {
    ++counters_.submit_timeouts;
    drop_link(now, std::nullopt, actions);
    return;
  }
  if (!in_flight_.empty() && now >= in_flight_.begin()->second.deadline) {
    ++counters_.commit_timeouts;
    drop_link(now, std::nullopt, actions);
    return;
  }
  if (!ping_nonce_ && now >= last_received_ + options_.idle_ping_interval) {
    ping_nonce_ = random_u64(random_);
    emit(actions, Send{connection_, encode_one(Ping{.nonce = *ping_nonce_})});
  }
}

Actions Forwarder::on_tick(Instant now) {
  Actions actions;
  expire_session_queries(now);
  on_tick_link(now, actions);
  pump(now, actions);
  return actions;
}

std::optional<Instant> Forwarder::next_deadline() const {
  std::optional<Instant> earliest;
  auto consider = [&earliest](Instant at) {
    if (!earliest || at < *earliest) earliest = at;
  };
  if (state_ != LinkState::kReady) {
    consider(link_deadline_);
    return earliest;
  }
  // Request ids grow with send time, so the first batch has the earliest deadline.
  if (!in_flight_.empty()) consider(in_flight_.begin()->second.deadline);
  if (awaiting_member()) consider(last_received_ + options_.submit_timeout);
  if (!ping_nonce_) consider(last_received_ + options_.idle_ping_interval);
  if (flush_at_ && !queue_.empty() && in_flight_.size() < window_) {
    consider(std::max(*flush_at_, hold_until_));
  }
  // Queries held back by a Busy go out when the pause ends.
  if (!queries_queued_.empty()) consider(hold_until_);
  return earliest;
}

std::optional<Instant> Forwarder::records_wait_until(Instant now) const {
  // Only in the steady state of a busy gateway: connected to the leader,
  // room in the window, sending at most one Submit per batch_delay.
  if (state_ != LinkState::kReady || !options_.send_when_quiet || in_flight_.size() >= window_) {
    return std::nullopt;
  }
  Instant until = hold_until_;
  if (!queue_.empty() && flush_at_) {
    until = std::max(until, *flush_at_);  // They would join the queue.
  } else if (queue_.empty() && last_sent_) {
    until = std::max(until, *last_sent_ + options_.batch_delay);  // Quiet from then on: sent at once.
  }
  if (until <= now) return std::nullopt;
  return until;
}

ForwarderStatus Forwarder::status() const {
  ForwarderStatus status;
  status.state = state_;
  status.address = address_;
  status.pending_records = records_.size();
  status.pending_bytes = pending_bytes_;
  status.queued_records = queue_.size();
  status.in_flight_batches = in_flight_.size();
  status.in_flight_records = records_.size() - queue_.size();
  // Records leave only in on_committed, which prunes: the front is the
  // oldest pending record's.
  if (!arrivals_.empty()) status.oldest_pending_accepted_at = arrivals_.front().accepted_at;
  status.session_queries = queries_queued_.size() + queries_in_flight_.size();
  status.counters = counters_;
  status.last_failover = last_failover_;
  return status;
}

}  // namespace rw::submission
