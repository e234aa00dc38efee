// The safety invariants of a raft_fixture cluster of ledgers, checked
// after every step by the randomised cluster tests
// (src/consensus/cluster_test.cc) and the whole-system simulator (sim/):
// nothing acknowledged before it is stored on a majority, nothing applied
// that lacks an acknowledged record, no divergence. `Cluster` is a
// BasicFixtureCluster whose State has holds(keys), restores(),
// snapshot_bytes() and records_held(). Test-only.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "accounting/record.h"
#include "consensus/fixture_cluster_for_test.h"

namespace rw::consensus {

struct Acknowledged {
  std::uint64_t index;
  std::vector<std::uint8_t> entry;
  std::vector<accounting::RecordKey> keys;  // of its records
};

// Checks the invariants after every step:
// - every acknowledged entry is stored (in the log or applied) on a majority;
// - every member that applied an acknowledged entry's index holds all of its
//   records in its ledger;
// - members at equal applied index have identical ledger snapshots.
template <class Cluster>
class InvariantChecker {
 public:
  explicit InvariantChecker(Cluster& cluster) : cluster_(cluster), members_(cluster.size()) {}

  void acknowledge(Acknowledged ack) { acknowledged_.push_back(std::move(ack)); }
  [[nodiscard]] const std::vector<Acknowledged>& acknowledged() const { return acknowledged_; }

  // Returns a description of the first violation, or an empty string.
  std::string check() {
    const unsigned n = cluster_.size();
    for (unsigned i = 0; i < n; ++i) {
      // A ledger only gains keys by applying (nothing is exported here), so
      // a key found once stays until the ledger is replaced by a restore.
      Member& member = members_[i];
      if (member.restores != cluster_.state(i).restores()) {
        member.restores = cluster_.state(i).restores();
        member.verified.clear();
      }
      member.verified.resize(acknowledged_.size(), false);
    }
    for (std::size_t a = 0; a < acknowledged_.size(); ++a) {
      const Acknowledged& ack = acknowledged_[a];
      unsigned holders = 0;
      for (unsigned i = 0; i < n; ++i) {
        if (cluster_.raft(i)->last_applied < ack.index) {
          holders += cluster_.stores(i, ack.index, ack.entry);  // In its log.
        } else if (members_[i].verified[a] || cluster_.state(i).holds(ack.keys)) {
          members_[i].verified[a] = true;
          ++holders;
        } else {
          return "member " + std::to_string(i) + " applied index " + std::to_string(ack.index) +
                 " but its ledger lacks a record acknowledged there";
        }
      }
      if (holders < n / 2 + 1)
        return "acknowledged index " + std::to_string(ack.index) + " held by " + std::to_string(holders) +
               " members only";
    }
    for (unsigned a = 0; a < n; ++a) {
      for (unsigned b = a + 1; b < n; ++b) {
        if (cluster_.raft(a)->last_applied == cluster_.raft(b)->last_applied &&
            cluster_.state(a).snapshot_bytes() != cluster_.state(b).snapshot_bytes()) {
          return "members " + std::to_string(a) + " and " + std::to_string(b) + " diverge at applied index " +
                 std::to_string(cluster_.raft(a)->last_applied);
        }
      }
    }
    return {};
  }

 private:
  struct Member {
    unsigned restores = 0;
    std::vector<bool> verified;  // by acknowledgement: its keys were found applied
  };

  Cluster& cluster_;
  std::vector<Acknowledged> acknowledged_;
  std::vector<Member> members_;
};

// Each member's raft state, term, indexes and proposer, for failure messages.
template <class Cluster>
std::string describe(Cluster& cluster) {
  std::string text;
  for (unsigned i = 0; i < cluster.size(); ++i) {
    const struct raft* r = cluster.raft(i);
    text += " [" + std::to_string(i) + " state " + std::to_string(r->state) + " term " +
            std::to_string(r->current_term) + " applied " + std::to_string(r->last_applied) + " commit " +
            std::to_string(r->commit_index) + " last " + std::to_string(raft_last_index(cluster.raft(i))) +
            " in_flight " + std::to_string(cluster.proposer(i).in_flight()) + " ready " +
            std::to_string(cluster.proposer(i).ready()) + " records " +
            std::to_string(cluster.state(i).records_held()) + "]";
  }
  return text;
}

}  // namespace rw::consensus
