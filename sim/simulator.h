// The whole-system deterministic simulator (docs/RELIABILITY.md
// "Simulator"): one thread, virtual time, one seed. NAS clients send
// Accounting-Requests over a simulated UDP network to gateways running the
// real request handler (src/gateway) and forwarder (src/submission); their
// submissions cross simulated TCP connections to members running the real
// submission session and LedgerState (src/member_shell) on the real libraft
// through raft_fixture (src/consensus), and the leader's exporter core
// (src/exporter) moves committed records into a simulated database. Faults
// are drawn from the seed; the invariants are checked after every step.
#pragma once

#include <cstdint>
#include <string>

namespace rw::sim {

struct RunOptions {
  std::uint64_t seed = 1;
  // Every event of the run on stdout: two runs of one seed print the same.
  bool trace = false;
  // Deliberate defects, to show that the invariants catch them (ctest
  // sim_catches_*): kEarlyAnswer answers the NAS as soon as the gateway's
  // forwarder accepts the record, before any commit; kSplitTransaction
  // writes the rows and the cursor in two transactions, so that a commit
  // whose reply is lost keeps the rows but not the cursor move.
  enum class Sabotage { kNone, kEarlyAnswer, kSplitTransaction } sabotage = Sabotage::kNone;
  // Virtual milliseconds of faults and new traffic; then everything heals
  // and the run waits for quiescence (at most quiet_ms more).
  std::int64_t fault_ms = 20'000;
  std::int64_t quiet_ms = 60'000;
};

// What one run saw, for the summary line and the campaign's figures.
struct RunReport {
  std::string violation;                   // Empty when every invariant held.
  std::uint64_t requests = 0;              // NAS requests sent (retransmissions not counted)
  std::uint64_t acknowledged = 0;          // of those, answered to the NAS
  std::uint64_t in_database = 0;           // acknowledged records found in the database (exactly once each)
  std::uint64_t duplicated = 0;            // records found more than once in the database (must be 0)
  std::uint64_t faults = 0;                // fault actions injected
  std::uint64_t steps = 0;                 // raft_fixture steps
  std::int64_t virtual_ms = 0;             // virtual time at the end
  std::int64_t longest_unanswered_ms = 0;  // longest wait of a NAS request for its answer
  std::int64_t recovered_ms = 0;           // from healing to the last request answered and exported
  std::string profile;                     // which faults this seed enables
  std::uint64_t digest = 0;                // hash of the trace: equal on every replay of the seed
};

// The faults seed `seed` enables (RunReport::profile), without running it.
std::string profile_of(std::uint64_t seed);

// Runs one seed in this process. May crash inside libraft (see main.cc).
RunReport run(const RunOptions& options);

}  // namespace rw::sim
