// The whole-system simulator; see simulator.h and docs/RELIABILITY.md
// "Simulator" for the model. The shells of the real processes (sockets,
// threads, libuv) are replaced here by a seeded event queue; every decision
// is made by the production cores.
#include "sim/simulator.h"

extern "C" {
#include <raft/fixture.h>
}

#include <algorithm>
#include <cstdio>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "accounting/accounting_request_for_test.h"
#include "accounting/entry.h"
#include "base/random.h"
#include "config/clients_file.h"
#include "config/users_file.h"
#include "consensus/fixture_cluster_for_test.h"
#include "consensus/ledger_invariants_for_test.h"
#include "exporter/export_core.h"
#include "gateway/gateway_state.h"
#include "gateway/request_handler.h"
#include "member_shell/ledger_state.h"
#include "member_shell/submission_session.h"
#include "radius/authenticator.h"
#include "radius/dictionary.h"
#include "radius/packet.h"
#include "submission/forwarder.h"
#include "submission/frames.h"

namespace rw::sim {
namespace {

constexpr unsigned kMembers = 3;
constexpr unsigned kGateways = 2;
constexpr unsigned kNases = 3;
constexpr std::int64_t kEpochUnixMs = 1'760'000'000'000;  // Virtual time 0 on the wall clock.
constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
constexpr std::string_view kSecret =
    "testing123";  // AccountingRequest (accounting_request_for_test.h) signs with it.

std::uint64_t fnv1a(std::uint64_t hash, Bytes bytes) {
  for (std::uint8_t b : bytes) hash = (hash ^ b) * 0x100000001b3ULL;
  return hash;
}
std::uint64_t fnv1a(std::uint64_t hash, std::string_view text) {
  return fnv1a(hash, Bytes(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
}

// A member's replicated state: the member's real LedgerState behind the
// consensus port, plus what the invariants read (InvariantChecker) and the
// applied entries' hashes for the prefix check.
class SimLedger final : public consensus::ReplicatedState {
 public:
  void apply(std::uint64_t index, Bytes entry) override {
    applied_.emplace_back(index, fnv1a(0xcbf29ce484222325ULL, entry));
    state_.apply(index, entry);
    snapshot_.reset();
  }
  [[nodiscard]] std::vector<std::uint8_t> snapshot() const override { return state_.snapshot(); }
  void snapshot_into(std::vector<std::uint8_t>& out) const override { state_.snapshot_into(out); }
  [[nodiscard]] std::size_t snapshot_size_bound() const override { return state_.snapshot_size_bound(); }
  [[nodiscard]] bool restore(Bytes snapshot) override {
    if (!state_.restore(snapshot)) return false;
    snapshot_.reset();
    ++restores_;
    return true;
  }

  [[nodiscard]] bool holds(const std::vector<accounting::RecordKey>& keys) const {
    return std::all_of(keys.begin(), keys.end(), [&](const auto& key) { return state_.knows(key); });
  }
  // True if every record of a records entry is in the window (as
  // TestLedger::holds); false for other entries.
  [[nodiscard]] bool holds(const std::vector<std::uint8_t>& entry) const {
    auto decoded = accounting::decode_entry(entry);
    if (!decoded || decoded->type != accounting::EntryType::kRecords) return false;
    return std::all_of(decoded->records.begin(), decoded->records.end(),
                       [&](const auto& record) { return state_.knows(record.key); });
  }
  [[nodiscard]] unsigned restores() const { return restores_; }
  [[nodiscard]] const std::vector<std::uint8_t>& snapshot_bytes() const {
    if (!snapshot_) snapshot_ = state_.snapshot();
    return *snapshot_;
  }
  [[nodiscard]] std::size_t records_held() const { return state_.figures().records_held; }
  [[nodiscard]] member_shell::LedgerState& state() { return state_; }
  // (index, hash) of each entry applied since the last call.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> take_applied() { return std::exchange(applied_, {}); }

 private:
  member_shell::LedgerState state_;
  mutable std::optional<std::vector<std::uint8_t>> snapshot_;
  unsigned restores_ = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> applied_;
};

using Cluster = consensus::BasicFixtureCluster<SimLedger>;

// Which faults a seed enables, and how hard they strike.
struct Profile {
  unsigned udp_loss_pct = 0;
  unsigned udp_duplicate_pct = 0;
  std::int64_t udp_delay_max_ms = 2;  // Uniform delays reorder datagrams.
  bool member_crashes = false;
  bool raft_partitions = false;
  bool gateway_cuts = false;
  bool gateway_crashes = false;
  bool slow_disks = false;
  bool disk_faults = false;  // raft_fixture_io_fault on one member.
  bool database_outages = false;
  unsigned database_refusal_pct = 0;
  unsigned database_lost_commit_pct = 0;  // Committed, but the reply is lost.
  bool snapshots = false;                 // Low thresholds: snapshots and installs.

  [[nodiscard]] std::string describe() const {
    std::string text = "udp_loss=" + std::to_string(udp_loss_pct) +
                       "% dup=" + std::to_string(udp_duplicate_pct) +
                       "% delay<=" + std::to_string(udp_delay_max_ms) + "ms";
    if (member_crashes) text += " member_crashes";
    if (raft_partitions) text += " raft_partitions";
    if (gateway_cuts) text += " gateway_cuts";
    if (gateway_crashes) text += " gateway_crashes";
    if (slow_disks) text += " slow_disks";
    if (disk_faults) text += " disk_faults";
    if (database_outages) text += " db_outages";
    if (database_refusal_pct) text += " db_refusals=" + std::to_string(database_refusal_pct) + "%";
    if (database_lost_commit_pct)
      text += " db_lost_commits=" + std::to_string(database_lost_commit_pct) + "%";
    if (snapshots) text += " snapshots";
    return text;
  }
};

// The first draws of a seed choose its faults.
Profile draw_profile(SeededRandom& random) {
  auto below = [&](std::uint64_t bound) { return random.below(bound); };
  Profile p;
  static constexpr unsigned kLoss[] = {0, 0, 5, 20};
  p.udp_loss_pct = kLoss[below(4)];
  p.udp_duplicate_pct = below(2) != 0 ? 10 : 0;
  static constexpr std::int64_t kDelay[] = {2, 30, 300};
  p.udp_delay_max_ms = kDelay[below(3)];
  p.member_crashes = below(2) != 0;
  p.raft_partitions = below(2) != 0;
  p.gateway_cuts = below(2) != 0;
  p.gateway_crashes = below(2) != 0;
  p.slow_disks = below(2) != 0;
  p.disk_faults = below(4) == 0;
  p.database_outages = below(2) != 0;
  p.database_refusal_pct = below(3) == 0 ? 10 : 0;
  p.database_lost_commit_pct = below(3) == 0 ? 10 : 0;
  p.snapshots = below(3) == 0;
  return p;
}
// The database the exporter writes to, with the SQL sinks' protocol
// (member_shell/sql_export_sink.h): one transaction per batch that checks
// the cursor against the floor, skips records at or below it, inserts the
// rest and moves the cursor. It counts every record written above the
// cursor by key, so a record the ledger offered twice (at two log indices)
// shows as a duplicate even though the real log table would skip it.
class Database {
 public:
  struct Written {
    std::uint64_t exported_through = 0;
  };
  using Failure = exporter::Failure;

  std::optional<Failure> refuse_now(SeededRandom& random, unsigned refusal_pct) const {
    if (down_) return Failure::kUnavailable;
    if (refusal_pct != 0 && random.below(100) < refusal_pct) return Failure::kRejected;
    return std::nullopt;
  }

  std::uint64_t cursor() const { return cursor_; }
  // The transaction; returns the cursor after it, or kCursorBehind.
  std::variant<std::uint64_t, Failure> write(std::span<const accounting::HeldRecord> records,
                                             std::uint64_t floor) {
    if (cursor_ < floor) return Failure::kCursorBehind;
    // The cursor read at the start of the transaction: records of one entry share its index.
    const std::uint64_t read = cursor_;
    for (const auto& held : records) {
      if (held.index <= read) continue;
      ++rows_[held.record.key];
      cursor_ = std::max(cursor_, held.index);
    }
    return cursor_;
  }
  [[nodiscard]] unsigned rows(const accounting::RecordKey& key) const {
    auto found = rows_.find(key);
    return found == rows_.end() ? 0 : found->second;
  }
  [[nodiscard]] const std::map<accounting::RecordKey, unsigned>& all_rows() const { return rows_; }
  void set_down(bool down) { down_ = down; }
  // Sabotage kSplitTransaction: the cursor's own transaction was lost.
  void rewind_cursor(std::uint64_t cursor) { cursor_ = cursor; }
  [[nodiscard]] bool down() const { return down_; }

 private:
  std::uint64_t cursor_ = 0;
  std::map<accounting::RecordKey, unsigned> rows_;
  bool down_ = false;
};

struct NasRequest {
  std::vector<std::uint8_t> bytes;
  std::array<std::uint8_t, 16> authenticator{};
  std::uint8_t identifier = 0;
  std::int64_t first_sent_ms = 0;
  std::int64_t answered_ms = -1;
  unsigned tries = 0;
};

struct Nas {
  gateway::Endpoint endpoint;
  std::vector<NasRequest> requests;
  std::map<std::uint8_t, std::size_t> outstanding;  // Identifier -> request.
  std::uint8_t next_identifier = 0;
  unsigned primary = 0;  // Gateway it sends to first; after 3 tries it fails over.
  std::int64_t retry_ms = 1000;
};

// One simulated TCP connection between a gateway and a member: in order,
// with latency, until it breaks (a crash closes it, a cut silences it).
struct Link {
  unsigned gateway = 0;
  std::uint64_t gateway_life = 0;
  submission::ConnectionId connection = 0;
  unsigned member = 0;
  std::uint64_t member_life = 0;
  bool open = true;
  bool silent = false;  // Cut: bytes vanish, nobody is told.
  std::int64_t to_member_ms = 0;
  std::int64_t to_gateway_ms = 0;
  submission::FrameReader member_reader;
  submission::FrameReader gateway_reader;
  std::unique_ptr<member_shell::SubmissionSession> session;
};

class Simulation;

// The gateway's AccountingSink: the shell's SubmissionClient, minus the
// thread and queue: hands the record straight to the forwarder.
class ForwarderSink final : public gateway::AccountingSink {
 public:
  explicit ForwarderSink(Simulation& sim, unsigned gateway) : sim_(sim), gateway_(gateway) {}
  bool submit(const accounting::RecordKey& key, Bytes record, gateway::Ticket ticket) override;

 private:
  Simulation& sim_;
  unsigned gateway_;
};

struct Gateway {
  bool up = true;
  std::uint64_t life = 0;  // Incremented by each restart: stale events are ignored.
  std::unique_ptr<gateway::GatewayCounters> counters;
  std::unique_ptr<ForwarderSink> sink;
  std::unique_ptr<gateway::RequestHandler> handler;
  std::unique_ptr<submission::Forwarder> forwarder;
  std::int64_t armed_ms = kNever;  // When a forwarder tick is scheduled.
  submission::Actions pending_actions;
  std::set<unsigned> cut_from;  // Members it cannot reach.
};

// A member's process around its raft_fixture server: the Node's queue
// (consensus/node.cc turn()), its submission sessions and its exporter.
struct Member {
  struct Submission {
    std::vector<std::uint8_t> entry;
    consensus::Proposer::Done done;
  };
  std::uint64_t life = 0;
  std::deque<Submission> waiting;
  std::optional<exporter::ExportCore> exporter;
  bool export_scheduled = false;
};

class Simulation {
 public:
  explicit Simulation(const RunOptions& options)
      : options_(options),
        random_(options.seed),
        profile_(draw_profile(random_)),
        cluster_(
            {.snapshot_threshold = profile_.snapshots ? 16 + static_cast<unsigned>(below(48)) : 1'000'000,
             .snapshot_trailing = 4 + static_cast<unsigned>(below(8)),
             .max_in_flight = 16}),
        checker_(cluster_),
        recipe_(std::make_shared<const accounting::KeyRecipe>(accounting::KeyRecipe::freeradius_default())),
        handler_random_(options.seed ^ 0x5eed),
        secret_(*radius::SharedSecret::create(as_bytes(kSecret))) {
    report_.profile = profile_.describe();
    trace("profile " + report_.profile);
    build_gateway_state();
    for (unsigned i = 0; i < kMembers; ++i) book_[i + 1] = address_of(i);
    for (unsigned g = 0; g < kGateways; ++g) start_gateway(g);
    for (unsigned n = 0; n < kNases; ++n) {
      Nas nas;
      nas.endpoint.address = {10, 0, 0, static_cast<std::uint8_t>(n + 1)};
      nas.endpoint.port = static_cast<std::uint16_t>(40000 + n);
      nas.primary = n % kGateways;
      nas.retry_ms = 500 + static_cast<std::int64_t>(below(2500));
      nas.next_identifier = static_cast<std::uint8_t>(below(256));
      nases_.push_back(std::move(nas));
      schedule_new_request(n, 10 + static_cast<std::int64_t>(below(200)));
    }
    for (unsigned m = 0; m < kMembers; ++m) start_exporter(m);
    faulty_member_ = static_cast<unsigned>(below(kMembers));
    if (fault_actions_enabled())
      schedule(100 + static_cast<std::int64_t>(below(500)), [this] { inject_fault(); });
    schedule(options_.fault_ms, [this] { heal(); });
  }

  ~Simulation() { closing_ = true; }
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  RunReport run() {
    const std::int64_t end = options_.fault_ms + options_.quiet_ms;
    while (report_.violation.empty() && !quiescent_) {
      const std::int64_t fixture_ms = static_cast<std::int64_t>(raft_fixture_time(cluster_.fixture()));
      const std::int64_t event_ms = events_.empty() ? kNever : events_.top().at_ms;
      if (std::min(fixture_ms, event_ms) > end) {
        fail("no quiescence " + std::to_string(options_.quiet_ms) +
             " ms after healing: " + what_is_missing());
        break;
      }
      if (fixture_ms <= event_ms) {
        now_ms_ = std::max(now_ms_, fixture_ms);
        step_fixture();
      } else {
        now_ms_ = std::max(now_ms_, event_ms);
        Event event = events_.top();
        events_.pop();
        event.run();
      }
    }
    report_.virtual_ms = now_ms_;
    report_.digest = digest_;
    final_checks();
    return report_;
  }

  // --- called by ForwarderSink ---
  bool on_gateway_record(unsigned g, const accounting::RecordKey& key, Bytes record, gateway::Ticket ticket) {
    Gateway& gw = gateways_[g];
    submission::RecordKey wire_key = key.bytes;
    submission::RecordOutcome outcome = gw.forwarder->on_record(instant(), wire_key, record, ticket);
    for (auto& action : outcome.actions) gw.pending_actions.push_back(std::move(action));
    if (current_request_) key_of_request_[*current_request_] = key;
    if (options_.sabotage == RunOptions::Sabotage::kEarlyAnswer && submission::admitted(outcome.admission)) {
      const std::uint64_t life = gw.life;
      schedule(0, [this, g, life, ticket] {
        if (gateways_[g].life == life && gateways_[g].up) answer_nas(g, ticket, 0);
      });
    }
    return submission::admitted(outcome.admission);
  }

 private:
  struct Event {
    std::int64_t at_ms;
    std::uint64_t order;
    std::function<void()> run;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.at_ms != b.at_ms ? a.at_ms > b.at_ms : a.order > b.order;
    }
  };

  // --- plumbing ---

  std::uint64_t below(std::uint64_t bound) { return random_.below(bound); }
  bool chance(unsigned pct) { return pct != 0 && below(100) < pct; }
  Instant instant() const { return Instant{(now_ms_ + 1'000'000) * 1'000'000}; }
  void schedule(std::int64_t delay_ms, std::function<void()> run) {
    events_.push(Event{now_ms_ + std::max<std::int64_t>(delay_ms, 0), next_order_++, std::move(run)});
  }
  void trace(const std::string& line) {
    const std::string text = std::to_string(now_ms_) + " " + line;
    digest_ = fnv1a(fnv1a(digest_, text), "\n");
    if (options_.trace) std::printf("%s\n", text.c_str());
  }
  // The first violation ends the run; the final checks still add theirs,
  // so that no later finding hides behind a tolerated first one (main.cc).
  void fail(const std::string& violation) {
    const std::string text = "at " + std::to_string(now_ms_) + " ms: " + violation;
    report_.violation += report_.violation.empty() ? text : " || also: " + text;
    trace("VIOLATION " + text);
  }
  static std::string address_of(unsigned member) { return "m" + std::to_string(member + 1) + ":1812"; }
  bool faults_on() const { return !healed_; }

  bool fault_actions_enabled() const {
    return profile_.member_crashes || profile_.raft_partitions || profile_.gateway_cuts ||
           profile_.gateway_crashes || profile_.slow_disks || profile_.disk_faults ||
           profile_.database_outages;
  }

  void build_gateway_state() {
    auto dictionary = radius::Dictionary::builtin();
    auto users = config::UsersFile::parse("", "users", dictionary, gateway::gateway_users_limits());
    RW_ASSERT(users.has_value());
    auto clients = config::parse_clients(
        "client nases {\n  ipaddr = 10.0.0.0/24\n  secret = testing123\n  require_message_authenticator = "
        "no\n}\n",
        "clients.conf");
    RW_ASSERT(clients.has_value());
    gateway::GatewayOptions gateway_options;
    auto state =
        gateway::GatewayState::build({dictionary, clients->clients, std::move(*users), gateway_options});
    RW_ASSERT(state.has_value());
    gateway_state_ = *state;
  }

  // --- gateways ---

  void start_gateway(unsigned g) {
    Gateway& gw = gateways_[g];
    gw.up = true;
    ++gw.life;
    gw.armed_ms = kNever;
    gw.pending_actions.clear();
    gw.counters = std::make_unique<gateway::GatewayCounters>();
    gw.sink = std::make_unique<ForwarderSink>(*this, g);
    gw.handler = std::make_unique<gateway::RequestHandler>(
        gateway_state_, handler_random_, *gw.counters, nullptr,
        gateway::AccountingSetup{.sink = gw.sink.get(), .recipe = recipe_});
    submission::ForwarderOptions forwarder_options;
    for (unsigned m = 0; m < kMembers; ++m) forwarder_options.members.push_back(address_of(m));
    forwarder_options.gateway_id = g + 1;
    gw.forwarder = std::make_unique<submission::Forwarder>(forwarder_options, handler_random_);
    apply_gateway(g, gw.forwarder->start(instant()));
    const std::uint64_t life = gw.life;
    schedule(100, [this, g, life] { gateway_handler_tick(g, life); });
  }

  void crash_gateway(unsigned g) {
    Gateway& gw = gateways_[g];
    if (!gw.up) return;
    gw.up = false;
    ++gw.life;
    for (std::uint64_t id : links_where([&](const Link& link) { return link.gateway == g; }))
      close_link(id, /*tell_gateway=*/false);
    gw.handler.reset();
    gw.forwarder.reset();
  }

  void gateway_handler_tick(unsigned g, std::uint64_t life) {
    Gateway& gw = gateways_[g];
    if (gw.life != life || !gw.up) return;
    gw.handler->on_tick(instant());
    schedule(100, [this, g, life] { gateway_handler_tick(g, life); });
  }

  void arm(unsigned g) {
    Gateway& gw = gateways_[g];
    const std::optional<Instant> deadline = gw.forwarder->next_deadline();
    if (!deadline) return;
    const std::int64_t at = std::max(now_ms_ + 1, (deadline->ns + 999'999) / 1'000'000 - 1'000'000);
    if (gw.armed_ms <= at && gw.armed_ms > now_ms_) return;
    gw.armed_ms = at;
    const std::uint64_t life = gw.life;
    schedule(at - now_ms_, [this, g, life, at] {
      Gateway& again = gateways_[g];
      if (again.life != life || !again.up || again.armed_ms != at) return;
      again.armed_ms = kNever;
      apply_gateway(g, again.forwarder->on_tick(instant()));
    });
  }

  void apply_gateway(unsigned g, submission::Actions actions) {
    Gateway& gw = gateways_[g];
    const std::uint64_t life = gw.life;
    for (auto& action : actions) {
      if (gw.life != life) return;
      if (auto* connect = std::get_if<submission::Connect>(&action)) {
        connect_link(g, connect->connection, connect->address);
      } else if (auto* send = std::get_if<submission::Send>(&action)) {
        send_to_member(g, send->connection, std::move(send->bytes));
      } else if (auto* close = std::get_if<submission::Close>(&action)) {
        const submission::ConnectionId connection = close->connection;
        for (std::uint64_t id : links_where([&](const Link& link) {
               return link.gateway == g && link.gateway_life == life && link.connection == connection;
             }))
          close_link(id, /*tell_gateway=*/false);
      } else if (auto* answer = std::get_if<submission::Answer>(&action)) {
        answer_nas(g, answer->waiter, answer->log_index);
      }
    }
    if (gw.life == life && gw.up) arm(g);
  }

  void answer_nas(unsigned g, std::uint64_t waiter, std::uint64_t log_index) {
    Gateway& gw = gateways_[g];
    std::array<std::uint8_t, radius::kMaxPacketLength> reply{};
    auto deferred = gw.handler->on_answer(
        instant(), gateway::Answer{.ticket = waiter, .kind = gateway::AnswerKind::kRecord, .committed = true},
        reply);
    if (!deferred) return;
    trace("g" + std::to_string(g) + " answers waiter " + std::to_string(waiter) + " at index " +
          std::to_string(log_index));
    send_udp_to_nas(deferred->to, std::vector<std::uint8_t>(reply.begin(), reply.begin() + deferred->length));
  }

  // --- UDP between NASes and gateways ---

  void send_udp(std::function<void()> deliver) {
    if (faults_on() && chance(profile_.udp_loss_pct)) return;
    const unsigned copies = faults_on() && chance(profile_.udp_duplicate_pct) ? 2 : 1;
    for (unsigned c = 0; c < copies; ++c)
      schedule(1 + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(profile_.udp_delay_max_ms))),
               deliver);
  }

  void send_udp_to_gateway(unsigned n, unsigned g, std::vector<std::uint8_t> datagram) {
    send_udp([this, n, g, datagram = std::move(datagram)] {
      Gateway& gw = gateways_[g];
      if (!gw.up) return;
      const gateway::Arrival arrival{
          .listener = gateway::Listener::kAccounting, .socket = 0, .unix_ms = kEpochUnixMs + now_ms_};
      std::array<std::uint8_t, radius::kMaxPacketLength> reply{};
      current_request_ = authenticator_of(datagram);
      const std::size_t length =
          gw.handler->on_datagram(instant(), arrival, nases_[n].endpoint, datagram, reply);
      current_request_.reset();
      apply_gateway(g, std::exchange(gw.pending_actions, {}));
      // A retransmission answered from the duplicate cache.
      if (length > 0 && gw.up)
        send_udp_to_nas(nases_[n].endpoint, std::vector<std::uint8_t>(reply.begin(), reply.begin() + length));
    });
  }

  void send_udp_to_nas(const gateway::Endpoint& to, std::vector<std::uint8_t> datagram) {
    for (unsigned n = 0; n < kNases; ++n) {
      if (nases_[n].endpoint == to) {
        send_udp([this, n, datagram = std::move(datagram)] { nas_receive(n, datagram); });
        return;
      }
    }
    fail("a gateway answered an address that is no NAS");
  }

  static std::array<std::uint8_t, 16> authenticator_of(const std::vector<std::uint8_t>& datagram) {
    std::array<std::uint8_t, 16> a{};
    if (datagram.size() >= 20) std::copy(datagram.begin() + 4, datagram.begin() + 20, a.begin());
    return a;
  }

  // --- NASes ---

  void schedule_new_request(unsigned n, std::int64_t delay_ms) {
    schedule(delay_ms, [this, n] {
      if (now_ms_ < options_.fault_ms) {
        new_request(n);
        schedule_new_request(n, 20 + static_cast<std::int64_t>(below(300)));
      }
    });
  }

  void new_request(unsigned n) {
    Nas& nas = nases_[n];
    if (nas.outstanding.size() >= 64) return;  // As a NAS bounds its in-flight accounting.
    while (nas.outstanding.contains(nas.next_identifier)) ++nas.next_identifier;
    const std::size_t number = nas.requests.size();
    const unsigned session = static_cast<unsigned>(number / 3);
    accounting::testing::RequestSpec spec;
    spec.identifier = nas.next_identifier++;
    spec.status_type = number % 3 == 0   ? accounting::status::kStart
                       : number % 3 == 1 ? accounting::status::kInterimUpdate
                                         : accounting::status::kStop;
    spec.user_name = "user" + std::to_string(session % 11);
    spec.session_id = "s" + std::to_string(n) + "-" + std::to_string(session);
    spec.nas_ip = std::array<std::uint8_t, 4>{10, 0, 0, static_cast<std::uint8_t>(n + 1)};
    spec.nas_port = session % 13;
    if (number % 3 != 0) {
      spec.session_time_s = static_cast<std::uint32_t>(60 * (number % 3));
      spec.input_octets = static_cast<std::uint32_t>(1000 * number);
    }
    const accounting::testing::AccountingRequest request(spec);
    const Bytes wire = request.packet().wire();
    NasRequest sent;
    sent.bytes.assign(wire.begin(), wire.end());
    sent.authenticator = authenticator_of(sent.bytes);
    sent.identifier = spec.identifier;
    sent.first_sent_ms = now_ms_;
    nas.requests.push_back(std::move(sent));
    nas.outstanding[spec.identifier] = number;
    ++report_.requests;
    trace("nas" + std::to_string(n) + " sends request " + std::to_string(number) + " id " +
          std::to_string(spec.identifier));
    transmit(n, number);
  }

  void transmit(unsigned n, std::size_t number) {
    Nas& nas = nases_[n];
    NasRequest& request = nas.requests[number];
    if (request.answered_ms >= 0) return;
    const unsigned g = (nas.primary + request.tries / 3) % kGateways;
    ++request.tries;
    send_udp_to_gateway(n, g, request.bytes);
    schedule(nas.retry_ms, [this, n, number] { transmit(n, number); });
  }

  void nas_receive(unsigned n, const std::vector<std::uint8_t>& datagram) {
    Nas& nas = nases_[n];
    auto packet = radius::Packet::parse(datagram);
    if (!packet) return fail("a NAS received a malformed datagram");
    auto found = nas.outstanding.find(packet->identifier());
    if (found == nas.outstanding.end()) return;  // Late duplicate of an answered request.
    NasRequest& request = nas.requests[found->second];
    if (!radius::verify_response_authenticator(*packet, request.authenticator, secret_))
      return;  // Another request's.
    if (packet->code() != radius::Code::kAccountingResponse)
      return fail("a NAS received no Accounting-Response");
    request.answered_ms = now_ms_;
    report_.longest_unanswered_ms = std::max(report_.longest_unanswered_ms, now_ms_ - request.first_sent_ms);
    const std::size_t number = found->second;
    nas.outstanding.erase(found);
    ++report_.acknowledged;
    auto key = key_of_request_.find(request.authenticator);
    if (key == key_of_request_.end()) return fail("a NAS was answered for a request no gateway submitted");
    // Invariant: answered only after its record is committed on a majority
    // (the checker holds every acknowledged key to a majority, every step).
    if (!acknowledged_keys_.contains(key->second))
      return fail("nas" + std::to_string(n) + " request " + std::to_string(number) +
                  " answered before its record was committed");
    trace("nas" + std::to_string(n) + " answered request " + std::to_string(number));
  }

  // --- simulated TCP between gateways and members ---

  std::int64_t tcp_delay() { return 1 + static_cast<std::int64_t>(below(3)); }

  std::optional<unsigned> member_at(const std::string& address) const {
    for (unsigned m = 0; m < kMembers; ++m) {
      if (address_of(m) == address) return m;
    }
    return std::nullopt;
  }

  bool member_up(unsigned m) { return cluster_.alive(m); }

  void connect_link(unsigned g, submission::ConnectionId connection, const std::string& address) {
    const std::uint64_t gateway_life = gateways_[g].life;
    schedule(tcp_delay(), [this, g, connection, address, gateway_life] {
      Gateway& gw = gateways_[g];
      if (gw.life != gateway_life || !gw.up) return;
      const std::optional<unsigned> m = member_at(address);
      if (!m || !member_up(*m) || gw.cut_from.contains(*m)) {
        // Refused (a dead process) or, across a cut, timed out by the forwarder.
        if (m && gw.cut_from.contains(*m)) return;
        apply_gateway(g, gw.forwarder->on_connection_lost(instant(), connection));
        return;
      }
      const std::uint64_t id = next_link_++;
      Link& link = links_[id];
      link.gateway = g;
      link.gateway_life = gateway_life;
      link.connection = connection;
      link.member = *m;
      link.member_life = members_[*m].life;
      link.session = std::make_unique<member_shell::SubmissionSession>(*m + 1, book_);
      apply_gateway(g, gw.forwarder->on_connected(instant(), connection));
    });
  }

  Link* gateway_link(unsigned g, submission::ConnectionId connection) {
    for (auto& [id, link] : links_) {
      if (link.gateway == g && link.gateway_life == gateways_[g].life && link.connection == connection &&
          link.open)
        return &link;
    }
    return nullptr;
  }

  void send_to_member(unsigned g, submission::ConnectionId connection, std::vector<std::uint8_t> bytes) {
    Link* link = gateway_link(g, connection);
    if (link == nullptr || link->silent) return;
    std::uint64_t id = 0;
    for (auto& [key, value] : links_) {
      if (&value == link) id = key;
    }
    link->to_member_ms = std::max(link->to_member_ms, now_ms_ + tcp_delay());
    schedule(link->to_member_ms - now_ms_,
             [this, id, bytes = std::move(bytes)] { member_receive(id, bytes); });
  }

  // Feeds `bytes` to `reader` and hands each whole frame to `on_frame`,
  // which returns false when the link is gone (closed, or its end restarted).
  bool for_each_frame(submission::FrameReader& reader, const std::vector<std::uint8_t>& bytes,
                      const std::function<bool(Bytes)>& on_frame) {
    Bytes rest(bytes);
    while (!rest.empty()) {
      rest = rest.subspan(reader.feed(rest));
      for (;;) {
        auto frame = reader.next();
        if (!frame) {
          fail("a frame reader refused the bytes of its peer");
          return false;
        }
        if (!*frame) break;
        if (!on_frame(**frame)) return false;
      }
    }
    return true;
  }

  void member_receive(std::uint64_t id, const std::vector<std::uint8_t>& bytes) {
    auto found = links_.find(id);
    if (found == links_.end() || !found->second.open || found->second.silent) return;
    Link& link = found->second;
    for_each_frame(link.member_reader, bytes, [&](Bytes frame) {
      carry_out(id, link.session->on_frame(frame, view(link.member)));
      return links_.contains(id) && links_.at(id).open;
    });
  }

  member_shell::MemberView view(unsigned m) {
    const struct raft* r = cluster_.raft(m);
    member_shell::MemberView v;
    switch (raft_state(const_cast<struct raft*>(r))) {
      case RAFT_FOLLOWER:
        v.role = consensus::Role::kFollower;
        break;
      case RAFT_CANDIDATE:
        v.role = consensus::Role::kCandidate;
        break;
      case RAFT_LEADER:
        v.role = consensus::Role::kLeader;
        break;
      default:
        v.role = consensus::Role::kUnavailable;
    }
    v.ready_for_work = cluster_.proposer(m).ready();
    raft_id leader = 0;
    const char* leader_address = nullptr;
    raft_leader(const_cast<struct raft*>(r), &leader, &leader_address);
    v.leader_id = leader;
    v.ledger_accepting = cluster_.state(m).state().accepting();
    v.ledger = &cluster_.state(m).state();
    v.now_unix_ms = kEpochUnixMs + now_ms_;
    return v;
  }

  // The member shell's handling of one SessionAnswer (SubmissionServer).
  void carry_out(std::uint64_t id, member_shell::SessionAnswer answer) {
    Link& link = links_.at(id);
    if (!answer.reply.empty()) send_to_gateway(id, std::move(answer.reply));
    if (answer.entry) {
      const unsigned m = link.member;
      const std::uint64_t request_id = answer.request_id;
      std::vector<std::uint8_t> entry = *answer.entry;
      const consensus::Node::SubmitStatus status = submit_to_node(
          m, std::move(*answer.entry), [this, id, request_id, m, entry](const consensus::Outcome& outcome) {
            if (closing_) return;
            if (outcome.kind == consensus::OutcomeKind::kCommitted) on_committed(m, outcome.index, entry);
            auto again = links_.find(id);
            if (again == links_.end() || !again->second.open) return;
            carry_out(id, again->second.session->on_outcome(request_id, outcome));
          });
      if (status != consensus::Node::SubmitStatus::kQueued)
        carry_out(id, link.session->on_submit_refused(request_id, status));
    }
    if (answer.close && links_.contains(id) && links_.at(id).open) close_link(id, /*tell_gateway=*/true);
  }

  void send_to_gateway(std::uint64_t id, std::vector<std::uint8_t> bytes) {
    Link& link = links_.at(id);
    if (link.silent) return;
    link.to_gateway_ms = std::max(link.to_gateway_ms, now_ms_ + tcp_delay());
    schedule(link.to_gateway_ms - now_ms_,
             [this, id, bytes = std::move(bytes)] { gateway_receive(id, bytes); });
  }

  void gateway_receive(std::uint64_t id, const std::vector<std::uint8_t>& bytes) {
    auto found = links_.find(id);
    if (found == links_.end() || !found->second.open || found->second.silent) return;
    Link& link = found->second;
    const unsigned g = link.gateway;
    const std::uint64_t life = link.gateway_life;
    if (gateways_[g].life != life) return;
    for_each_frame(link.gateway_reader, bytes, [&](Bytes frame) {
      apply_gateway(g, gateways_[g].forwarder->on_frame(instant(), link.connection, frame));
      return links_.contains(id) && links_.at(id).open && gateways_[g].life == life;
    });
  }

  // The open links that satisfy `pred`, collected first: closing erases.
  std::vector<std::uint64_t> links_where(const std::function<bool(const Link&)>& pred) const {
    std::vector<std::uint64_t> ids;
    for (const auto& [id, link] : links_) {
      if (link.open && pred(link)) ids.push_back(id);
    }
    return ids;
  }

  void close_link(std::uint64_t id, bool tell_gateway) {
    Link& link = links_.at(id);
    link.open = false;
    if (tell_gateway && !link.silent) {
      const unsigned g = link.gateway;
      const std::uint64_t life = link.gateway_life;
      const submission::ConnectionId connection = link.connection;
      schedule(tcp_delay(), [this, g, life, connection] {
        if (gateways_[g].life != life || !gateways_[g].up) return;
        apply_gateway(g, gateways_[g].forwarder->on_connection_lost(instant(), connection));
      });
    }
    links_.erase(id);
  }

  // --- members ---

  // consensus::Node::submit and the queue its loop turn drains.
  consensus::Node::SubmitStatus submit_to_node(unsigned m, std::vector<std::uint8_t> entry,
                                               consensus::Proposer::Done done) {
    if (!member_up(m)) return consensus::Node::SubmitStatus::kStopped;
    if (members_[m].waiting.size() + cluster_.proposer(m).in_flight() >= 4096)
      return consensus::Node::SubmitStatus::kQueueFull;
    members_[m].waiting.push_back({std::move(entry), std::move(done)});
    return consensus::Node::SubmitStatus::kQueued;
  }

  void turn(unsigned m) {
    Member& member = members_[m];
    consensus::Proposer& proposer = cluster_.proposer(m);
    while (!member.waiting.empty()) {
      if (!proposer.ready()) {
        const consensus::Outcome refusal = proposer.refusal();
        auto waiting = std::exchange(member.waiting, {});
        for (auto& submission : waiting) submission.done(refusal);
        break;
      }
      if (!proposer.has_room()) break;
      Member::Submission next = std::move(member.waiting.front());
      member.waiting.pop_front();
      proposer.propose(std::move(next.entry), std::move(next.done));
    }
  }

  void on_committed(unsigned m, std::uint64_t index, const std::vector<std::uint8_t>& entry) {
    consensus::Acknowledged ack{index, entry, {}};
    if (auto decoded = accounting::decode_entry(entry);
        decoded && decoded->type == accounting::EntryType::kRecords) {
      for (const auto& record : decoded->records) {
        ack.keys.push_back(record.key);
        acknowledged_keys_.insert(record.key);
      }
    }
    trace("m" + std::to_string(m) + " committed index " + std::to_string(index) + " records " +
          std::to_string(ack.keys.size()));
    checker_.acknowledge(std::move(ack));
  }

  void step_fixture() {
    cluster_.step();
    ++report_.steps;
    for (unsigned m = 0; m < kMembers; ++m) {
      if (cluster_.alive(m)) turn(m);
      for (const auto& [index, hash] : cluster_.state(m).take_applied()) {
        auto [it, fresh] = applied_hash_.emplace(index, hash);
        if (!fresh && it->second != hash)
          return fail("members applied different entries at index " + std::to_string(index));
      }
    }
    apply_disk_latencies();
    if (std::string violation = checker_.check(); !violation.empty())
      fail(violation + consensus::describe(cluster_));
  }

  void crash_member(unsigned m) {
    if (!cluster_.alive(m)) return;
    trace("crash m" + std::to_string(m));
    raft_fixture_kill(cluster_.fixture(), m);
    Member& member = members_[m];
    ++member.life;
    member.waiting.clear();  // The process dies with its queue: nobody hears back.
    member.exporter.reset();
    for (std::uint64_t id : links_where([&](const Link& link) { return link.member == m; }))
      close_link(id, /*tell_gateway=*/true);
  }

  void restart_member(unsigned m) {
    if (cluster_.alive(m)) return;
    trace("restart m" + std::to_string(m));
    raft_fixture_revive(cluster_.fixture(), m);
    start_exporter(m);
  }

  // --- the exporter: ExportLoop::step (member_shell/export_loop.cc) on the sim's database ---

  void start_exporter(unsigned m) {
    Member& member = members_[m];
    member.exporter.emplace(exporter::CoreOptions{});
    const std::uint64_t life = member.life;
    schedule(20, [this, m, life] { export_round(m, life); });
  }

  void export_round(unsigned m, std::uint64_t life) {
    Member& member = members_[m];
    if (member.life != life || !member.exporter) return;
    const unsigned wait = export_step(m, *member.exporter);
    if (!report_.violation.empty()) return;
    schedule(std::max<unsigned>(wait, 1), [this, m, life] { export_round(m, life); });
  }

  unsigned export_step(unsigned m, exporter::ExportCore& core) {
    core.on_round(cluster_.alive(m) && cluster_.proposer(m).ready());
    if (!core.active()) return core.follower_wait_ms();
    member_shell::LedgerState& ledger = cluster_.state(m).state();
    const member_shell::LedgerFigures figures = ledger.figures();
    if (core.needs_cursor()) {
      if (auto failure = database_.refuse_now(random_, healed_ ? 0 : profile_.database_refusal_pct))
        return core.on_failure(*failure);
      if (!core.on_cursor(database_.cursor(), figures.exported_through)) {
        fail("export cursor alarm: database cursor " + std::to_string(database_.cursor()) +
             " below the ledger's " + std::to_string(figures.exported_through));
        return core.alarm_recheck_ms();
      }
    }
    submit_cursor(m, core, figures.exported_through);
    const std::vector<accounting::HeldRecord> batch = ledger.records_after(core.cursor(), core.fetch_max());
    const exporter::Plan plan = core.plan(batch);
    if (plan.mode == exporter::Plan::Mode::kNothing) return 20;
    if (auto failure = database_.refuse_now(random_, healed_ ? 0 : profile_.database_refusal_pct))
      return core.on_failure(*failure);
    auto written = database_.write(std::span<const accounting::HeldRecord>(batch).first(plan.records),
                                   figures.exported_through);
    if (auto* failure = std::get_if<exporter::Failure>(&written)) {
      fail("database cursor behind the ledger's exported_through");
      return core.on_failure(*failure);
    }
    trace("m" + std::to_string(m) + " exported " + std::to_string(plan.records) + " records through " +
          std::to_string(std::get<std::uint64_t>(written)));
    if (!healed_ && chance(profile_.database_lost_commit_pct)) {
      // The transaction committed, but the exporter never heard so.
      if (options_.sabotage == RunOptions::Sabotage::kSplitTransaction)
        database_.rewind_cursor(core.cursor());
      return core.on_failure(exporter::Failure::kUnavailable);
    }
    core.on_written(std::get<std::uint64_t>(written));
    submit_cursor(m, core, figures.exported_through);
    return 0;
  }

  void submit_cursor(unsigned m, exporter::ExportCore& core, std::uint64_t ledger_exported_through) {
    // As ExportLoop: resubmission paced by the monotonic clock (virtual
    // time here), the entry stamped with the wall clock.
    const Instant monotonic = Instant{} + Duration::milliseconds(static_cast<std::int64_t>(now_ms_));
    const std::int64_t wall = kEpochUnixMs + now_ms_;
    const std::optional<std::uint64_t> cursor = core.cursor_to_submit(ledger_exported_through, monotonic);
    if (!cursor) return;
    const auto status = submit_to_node(m, accounting::encode_export_cursor_entry(*cursor, wall),
                                       [](const consensus::Outcome&) {});
    if (status == consensus::Node::SubmitStatus::kQueued) core.on_submitted(*cursor, monotonic);
  }

  // --- faults ---

  void inject_fault() {
    if (healed_) return;
    raft_fixture* f = cluster_.fixture();
    ++report_.faults;
    switch (below(9)) {
      case 0:
        if (profile_.member_crashes) {
          unsigned dead = 0;
          for (unsigned m = 0; m < kMembers; ++m) dead += !cluster_.alive(m);
          const unsigned victim = static_cast<unsigned>(below(kMembers));
          if (dead == 0 || below(4) == 0) crash_member(victim);
        }
        break;
      case 1:
        if (profile_.member_crashes) restart_member(static_cast<unsigned>(below(kMembers)));
        break;
      case 2:
        if (profile_.raft_partitions) {
          const unsigned i = static_cast<unsigned>(below(kMembers));
          const unsigned j = (i + 1 + static_cast<unsigned>(below(kMembers - 1))) % kMembers;
          const bool cut = !raft_fixture_saturated(f, i, j);
          trace(std::string(cut ? "partition " : "heal ") + std::to_string(i) + "->" + std::to_string(j));
          if (cut) {
            raft_fixture_saturate(f, i, j);
          } else {
            raft_fixture_desaturate(f, i, j);
          }
        }
        break;
      case 3:
        if (profile_.gateway_cuts) {
          const unsigned g = static_cast<unsigned>(below(kGateways));
          const unsigned m = static_cast<unsigned>(below(kMembers));
          Gateway& gw = gateways_[g];
          if (gw.cut_from.contains(m)) {
            trace("reconnect g" + std::to_string(g) + " m" + std::to_string(m));
            gw.cut_from.erase(m);
          } else {
            trace("cut g" + std::to_string(g) + " m" + std::to_string(m));
            gw.cut_from.insert(m);
            for (auto& [id, link] : links_) {
              if (link.gateway == g && link.member == m) link.silent = true;
            }
          }
        }
        break;
      case 4:
        if (profile_.gateway_crashes) {
          const unsigned g = static_cast<unsigned>(below(kGateways));
          if (gateways_[g].up) {
            trace("crash g" + std::to_string(g));
            crash_gateway(g);
            schedule(100 + static_cast<std::int64_t>(below(2000)), [this, g] {
              if (!gateways_[g].up) {
                trace("restart g" + std::to_string(g));
                start_gateway(g);
              }
            });
          }
        }
        break;
      case 5:
        if (profile_.slow_disks) {
          const unsigned m = static_cast<unsigned>(below(kMembers));
          set_disk_latency(m, below(3) == 0 ? 200 + static_cast<unsigned>(below(400))
                                            : 1 + static_cast<unsigned>(below(60)));
        }
        break;
      case 6:
        raft_fixture_set_network_latency(f, static_cast<unsigned>(below(kMembers)),
                                         1 + static_cast<unsigned>(below(40)));
        break;
      case 7:
        if (profile_.database_outages && !database_.down()) {
          trace("database down");
          database_.set_down(true);
          schedule(200 + static_cast<std::int64_t>(below(5000)), [this] {
            trace("database up");
            database_.set_down(false);
          });
        }
        break;
      case 8:
        // One member per seed: libraft 0.15.0 leaves a member unavailable
        // after a disk fault, and production restarts such a process while
        // the fixture cannot (src/consensus/cluster_test.cc).
        if (profile_.disk_faults && below(3) == 0) {
          trace("disk fault m" + std::to_string(faulty_member_));
          raft_fixture_io_fault(f, faulty_member_, static_cast<int>(below(5)), 1);
        }
        break;
    }
    schedule(50 + static_cast<std::int64_t>(below(700)), [this] { inject_fault(); });
  }

  // The fixture stamps each write with the latency of its start, so a
  // latency lowered under a slow write in flight lets later writes finish
  // first, which no disk written through one file does and libraft 0.15.0
  // does not survive (a member then never counts its last entry as stored).
  // A new latency therefore takes effect once the member's writes are done.
  void set_disk_latency(unsigned m, unsigned ms) {
    disk_latency_due_[m] = ms;
    apply_disk_latencies();
  }
  void apply_disk_latencies() {
    for (unsigned m = 0; m < kMembers; ++m) {
      struct raft* r = cluster_.raft(m);
      if (disk_latency_due_[m] && r->last_stored == raft_last_index(r)) {
        raft_fixture_set_disk_latency(cluster_.fixture(), m, *disk_latency_due_[m]);
        disk_latency_due_[m].reset();
      }
    }
  }

  void heal() {
    healed_ = true;
    healed_at_ms_ = now_ms_;
    trace("heal");
    raft_fixture* f = cluster_.fixture();
    for (unsigned m = 0; m < kMembers; ++m) {
      restart_member(m);
      set_disk_latency(m, 10);
      raft_fixture_set_network_latency(f, m, 15);
      for (unsigned j = 0; j < kMembers; ++j) {
        if (m != j && raft_fixture_saturated(f, m, j)) raft_fixture_desaturate(f, m, j);
      }
    }
    for (unsigned g = 0; g < kGateways; ++g) {
      gateways_[g].cut_from.clear();
      if (!gateways_[g].up) start_gateway(g);
    }
    database_.set_down(false);
    schedule(250, [this] { check_quiescence(); });
  }

  // A follower whose log holds entries that libraft never counts as
  // stored, so that its commit index stays below them: seen with libraft
  // 0.15.0 in an idle cluster (docs/RELIABILITY.md "Simulator", findings).
  std::string stall() {
    std::string text;
    for (unsigned m = 0; m < kMembers; ++m) {
      struct raft* r = cluster_.raft(m);
      if (usable(m) && r->last_stored < raft_last_index(r))
        text += " (libraft stall: member " + std::to_string(m) + " stored " + std::to_string(r->last_stored) +
                " of its log's " + std::to_string(raft_last_index(r)) + ")";
    }
    return text;
  }

  bool usable(unsigned m) { return raft_state(cluster_.raft(m)) != RAFT_UNAVAILABLE; }

  // What still keeps the run from quiescence; empty when nothing does.
  std::string what_is_missing() {
    for (unsigned n = 0; n < kNases; ++n) {
      if (!nases_[n].outstanding.empty())
        return "nas" + std::to_string(n) + " has " + std::to_string(nases_[n].outstanding.size()) +
               " unanswered requests" + consensus::describe(cluster_);
    }
    std::size_t missing = 0;
    for (const auto& key : acknowledged_keys_) missing += database_.rows(key) == 0;
    if (missing != 0) {
      const accounting::LedgerCounters counters = cluster_.state(0).state().figures().counters;
      return std::to_string(missing) + " of " + std::to_string(acknowledged_keys_.size()) +
             " committed records not in the database (cursor " + std::to_string(database_.cursor()) + ", " +
             std::to_string(database_.all_rows().size()) + " rows; member 0 applied " +
             std::to_string(counters.records_applied) + " duplicate " +
             std::to_string(counters.records_duplicate) + " exported " +
             std::to_string(counters.records_exported) + ")" + consensus::describe(cluster_);
    }
    std::optional<unsigned> first;
    for (unsigned m = 0; m < kMembers; ++m) {
      if (!usable(m)) continue;
      if (!first) {
        first = m;
      } else if (cluster_.raft(m)->last_applied != cluster_.raft(*first)->last_applied ||
                 cluster_.state(m).snapshot_bytes() != cluster_.state(*first).snapshot_bytes()) {
        return "members have not converged" + stall() + consensus::describe(cluster_);
      }
    }
    unsigned usable_members = 0;
    for (unsigned m = 0; m < kMembers; ++m) usable_members += usable(m);
    if (usable_members < 2) return "fewer than two usable members" + consensus::describe(cluster_);
    return {};
  }

  void check_quiescence() {
    if (what_is_missing().empty()) {
      quiescent_ = true;
      report_.recovered_ms = now_ms_ - healed_at_ms_;
      trace("quiescent");
      return;
    }
    schedule(250, [this] { check_quiescence(); });
  }

  void final_checks() {
    for (const auto& [key, rows] : database_.all_rows()) {
      if (rows > 1) ++report_.duplicated;
    }
    std::uint64_t not_once = 0;
    for (unsigned n = 0; n < kNases; ++n) {
      for (const NasRequest& request : nases_[n].requests) {
        if (request.answered_ms < 0) continue;
        const unsigned rows = database_.rows(key_of_request_.at(request.authenticator));
        report_.in_database += rows == 1;
        not_once += rows != 1;
      }
    }
    if (not_once != 0)
      fail(std::to_string(not_once) + " acknowledged records are not in the database exactly once");
    if (report_.duplicated != 0)
      fail(std::to_string(report_.duplicated) + " records duplicated in the database");
  }

  RunOptions options_;
  // Set by the destructor: raft_fixture_close (in cluster_'s destructor)
  // fires the pending apply callbacks, after the links they would answer on
  // are gone (members are destroyed in reverse order).
  bool closing_ = false;
  SeededRandom random_;
  Profile profile_;
  Cluster cluster_;
  consensus::InvariantChecker<Cluster> checker_;
  std::shared_ptr<const accounting::KeyRecipe> recipe_;
  SeededRandom handler_random_;
  radius::SharedSecret secret_;
  std::shared_ptr<const gateway::GatewayState> gateway_state_;
  member_shell::SubmissionAddressBook book_;

  std::priority_queue<Event, std::vector<Event>, Later> events_;
  std::uint64_t next_order_ = 0;
  std::int64_t now_ms_ = 0;
  std::uint64_t digest_ = 0xcbf29ce484222325ULL;

  std::array<Gateway, kGateways> gateways_{};
  std::array<Member, kMembers> members_{};
  std::vector<Nas> nases_;
  std::map<std::uint64_t, Link> links_;
  std::uint64_t next_link_ = 1;
  Database database_;
  unsigned faulty_member_ = 0;
  std::array<std::optional<unsigned>, kMembers> disk_latency_due_{};

  std::optional<std::array<std::uint8_t, 16>> current_request_;
  std::map<std::array<std::uint8_t, 16>, accounting::RecordKey> key_of_request_;
  std::set<accounting::RecordKey> acknowledged_keys_;
  std::map<std::uint64_t, std::uint64_t> applied_hash_;  // Log index -> hash of the entry applied there.
  bool healed_ = false;
  std::int64_t healed_at_ms_ = 0;
  bool quiescent_ = false;
  RunReport report_;
};

bool ForwarderSink::submit(const accounting::RecordKey& key, Bytes record, gateway::Ticket ticket) {
  return sim_.on_gateway_record(gateway_, key, record, ticket);
}

}  // namespace

std::string profile_of(std::uint64_t seed) {
  SeededRandom random(seed);
  return draw_profile(random).describe();
}

RunReport run(const RunOptions& options) {
  Simulation simulation(options);
  return simulation.run();
}

}  // namespace rw::sim
