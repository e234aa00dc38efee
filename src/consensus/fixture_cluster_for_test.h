// A three-member cluster on libraft's in-memory raft_fixture (deterministic,
// virtual time), each member a state machine (the real accounting ledger, or
// the toy DedupLog) behind the production FsmAdapter and a production
// Proposer, so tests acknowledge by the same rule as Node. Test-only.
#pragma once

extern "C" {
#include <raft/fixture.h>
}

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/assert.h"
#include "consensus/dedup_log_for_test.h"
#include "consensus/envelope.h"
#include "consensus/fsm_adapter.h"
#include "consensus/ledger_for_test.h"
#include "consensus/proposer.h"

namespace rw::consensus {

// One submission's fate as the submitter sees it.
struct Submitted {
  std::vector<std::uint8_t> entry;
  std::optional<Outcome> outcome;  // Absent until the callback ran.
};

// `State` is a ReplicatedState with holds(entry) (every record of the entry
// applied), copies(entry), restores() and a static entry(name) making a
// distinct entry per name: DedupLog or TestLedger.
template <class State>
class BasicFixtureCluster {
 public:
  struct Options {
    unsigned servers = 3;
    unsigned snapshot_threshold = 1 << 20;
    unsigned snapshot_trailing = 1 << 19;
    std::size_t max_in_flight = 16;
    std::size_t log_bytes_max = 0;  // FsmAdapter::bound_log_bytes; 0: off
  };

  explicit BasicFixtureCluster(Options options) : options_(options) {
    RW_ASSERT(raft_fixture_initialize(&fixture_) == 0);
    for (unsigned i = 0; i < options.servers; ++i) grow();
    struct raft_configuration configuration {};
    RW_ASSERT(raft_fixture_configuration(&fixture_, options.servers, &configuration) == 0);
    RW_ASSERT(raft_fixture_bootstrap(&fixture_, &configuration) == 0);
    raft_configuration_close(&configuration);
    RW_ASSERT(raft_fixture_start(&fixture_) == 0);
    started_ = true;
  }
  ~BasicFixtureCluster() { raft_fixture_close(&fixture_); }
  BasicFixtureCluster(const BasicFixtureCluster&) = delete;
  BasicFixtureCluster& operator=(const BasicFixtureCluster&) = delete;

  // Adds an empty, non-voting server (not in any configuration yet).
  unsigned grow() {
    const unsigned i = static_cast<unsigned>(states_.size());
    states_.push_back(std::make_unique<State>());
    adapters_.push_back(std::make_unique<FsmAdapter>(*states_.back()));
    RW_ASSERT(raft_fixture_grow(&fixture_, adapters_.back()->fsm()) == 0);
    struct raft* r = raft_fixture_get(&fixture_, i);
    adapters_.back()->attach(r);
    raft_set_snapshot_threshold(r, options_.snapshot_threshold);
    raft_set_snapshot_trailing(r, options_.snapshot_trailing);
    if (options_.log_bytes_max != 0) {
      adapters_.back()->bound_log_bytes(options_.log_bytes_max, options_.snapshot_threshold,
                                        options_.snapshot_trailing);
    }
    proposers_.push_back(
        std::make_unique<Proposer>(r, Proposer::Options{.max_in_flight = options_.max_in_flight}, [] {}));
    // A server grown into a running fixture starts by itself, empty.
    if (started_) RW_ASSERT(raft_start(r) == 0);
    return i;
  }

  // One fixture event, then a loop turn on every live member (on_turn runs
  // outside libraft callbacks, as in Node).
  void step() {
    raft_fixture_step(&fixture_);
    for (unsigned i = 0; i < size(); ++i) {
      if (raft_fixture_alive(&fixture_, i)) proposers_[i]->on_turn();
    }
  }

  // Steps until `done` or `max_ms` of virtual time; returns done().
  bool step_until(const std::function<bool()>& done, unsigned max_ms) {
    const raft_time deadline = raft_fixture_time(&fixture_) + max_ms;
    while (!done()) {
      if (raft_fixture_time(&fixture_) >= deadline) return false;
      step();
    }
    return true;
  }

  void step_for(unsigned ms) {
    step_until([] { return false; }, ms);
  }

  // The live member that is leader and ready for work, if any; of several
  // (a deposed leader that has not heard of the new term yet), the one with
  // the highest term.
  [[nodiscard]] std::optional<unsigned> ready_leader() const {
    std::optional<unsigned> best;
    for (unsigned i = 0; i < size(); ++i) {
      if (!alive(i) || !proposers_[i]->ready()) continue;
      if (!best || raft(i)->current_term > raft(*best)->current_term) best = i;
    }
    return best;
  }

  bool step_until_ready_leader(unsigned max_ms = 10000) {
    return step_until([&] { return ready_leader().has_value(); }, max_ms);
  }

  // Submits through member i's Proposer; the outcome lands in the result.
  std::shared_ptr<Submitted> submit(unsigned i, std::vector<std::uint8_t> entry) {
    auto submitted = std::make_shared<Submitted>();
    submitted->entry = entry;
    if (!proposers_[i]->has_room()) {
      Outcome busy;
      busy.kind = OutcomeKind::kRetryLater;
      submitted->outcome = busy;
      return submitted;
    }
    proposers_[i]->propose(std::move(entry),
                           [submitted](const Outcome& outcome) { submitted->outcome = outcome; });
    return submitted;
  }

  // True if member i stores `entry` at `index`: in its log, or applied.
  [[nodiscard]] bool stores(unsigned i, std::uint64_t index, const std::vector<std::uint8_t>& entry) const {
    const struct raft* r = raft(i);
    if (r->last_applied >= index) return states_[i]->holds(entry);
    const struct raft_log& log = r->log;
    const std::size_t count = log.back >= log.front ? log.back - log.front : log.size - log.front + log.back;
    if (index <= log.offset || index > log.offset + count) return false;
    const struct raft_entry& stored = log.entries[(log.front + (index - log.offset - 1)) % log.size];
    if (stored.type != RAFT_COMMAND) return false;
    const auto payload =
        open_envelope(Bytes(static_cast<const std::uint8_t*>(stored.buf.base), stored.buf.len));
    return payload && std::equal(payload->begin(), payload->end(), entry.begin(), entry.end());
  }

  // The bytes of the entries member i holds in its in-memory log.
  [[nodiscard]] std::size_t log_bytes(unsigned i) const { return log_entry_bytes(raft(i)->log); }

  [[nodiscard]] unsigned size() const { return static_cast<unsigned>(states_.size()); }
  [[nodiscard]] struct raft_fixture* fixture() { return &fixture_; }
  [[nodiscard]] struct raft* raft(unsigned i) const {
    return raft_fixture_get(const_cast<raft_fixture*>(&fixture_), i);
  }
  [[nodiscard]] State& state(unsigned i) { return *states_[i]; }
  [[nodiscard]] const FsmAdapter& adapter(unsigned i) const { return *adapters_[i]; }
  [[nodiscard]] FsmAdapter& adapter(unsigned i) { return *adapters_[i]; }
  [[nodiscard]] Proposer& proposer(unsigned i) { return *proposers_[i]; }
  [[nodiscard]] bool alive(unsigned i) const {
    return raft_fixture_alive(const_cast<raft_fixture*>(&fixture_), i);
  }

 private:
  Options options_;
  // Declared before the fixture's users: raft_fixture_close (in the
  // destructor body) fires pending callbacks into the proposers.
  std::vector<std::unique_ptr<State>> states_;
  std::vector<std::unique_ptr<FsmAdapter>> adapters_;
  std::vector<std::unique_ptr<Proposer>> proposers_;
  struct raft_fixture fixture_ {};
  bool started_ = false;
};

using FixtureCluster = BasicFixtureCluster<DedupLog>;
using LedgerCluster = BasicFixtureCluster<TestLedger>;

inline std::vector<std::uint8_t> entry_of(const std::string& text) { return {text.begin(), text.end()}; }

}  // namespace rw::consensus
