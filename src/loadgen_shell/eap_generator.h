// The EAP load of `radiusward bench eap` (docs/benchmarking.md "EAP"): many
// supplicants (eap_supplicant.h) at once, each a whole EAP-over-RADIUS
// conversation (RFC 3579: EAP-Message, State, Message-Authenticator) from
// the EAP-Response/Identity to the Access-Accept with its MS-MPPE keys.
// Conversations start on a schedule (open loop: `rate` per second, or all
// at once for a boot storm) into at most `concurrency` in-flight slots;
// each slot has its own UDP socket and Identifier, and one round in flight
// at a time, driven by the answers. Latency runs from the scheduled start
// to the verified Access-Accept; a start that finds no free slot waits,
// and the wait counts.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "base/time.h"
#include "bench/ceiling.h"
#include "bench/histogram.h"
#include "bench/report.h"
#include "bench/scenario.h"
#include "gateway/datagram.h"
#include "loadgen_shell/eap_supplicant.h"

namespace rw::loadgen_shell {

struct EapLoadOptions {
  gateway::Endpoint target{};
  std::string secret;
  SupplicantConfig supplicant;
  std::vector<bench::BenchUser> users;  // Taken in turn; EAP-TLS uses only the names.
  double rate = 100;                    // Conversations started per second; 0: all at once.
  std::uint64_t count = 0;              // Conversations; 0: rate * duration_s.
  double duration_s = 5;
  int concurrency = 256;  // Slots: conversations in flight at most.
  // Per round trip: the first wait; each retransmission doubles it (up to
  // 16 s) with ±10 % jitter, as RFC 5080 §2.2.1 has a NAS do.
  Duration timeout = Duration::milliseconds(2000);
  int retries = 3;                             // Retransmissions of one round before it is lost.
  Duration deadline = Duration::seconds(120);  // After the last start, the rest count as lost.
};

struct EapLoadResult {
  bench::StepResult step;  // sent = started, answered = accepted with the right keys, lost = the rest.
  bench::LatencyHistogram histogram;
  std::uint64_t accepted = 0;
  std::uint64_t timed_out = 0;  // A round unanswered after every retry.
  std::array<std::uint64_t, kSupplicantErrorCount> failed_by_reason{};
  std::uint64_t stray_answers = 0;  // Unverifiable, late or duplicate answers (dropped).
  std::uint64_t rounds = 0;         // Access-Requests sent, not counting retransmissions.
  double elapsed_s = 0;             // First scheduled start to the last conversation's end.
  double generator_cpu_s = 0;       // User + system CPU of this process over the run.
  double wall_s = 0;                // The run's wall time (its CPU over this: how full its core was).
};

// Runs the whole load; fails only on set-up errors (TLS files, sockets).
[[nodiscard]] Result<EapLoadResult, std::string> run_eap_load(const EapLoadOptions& options);

[[nodiscard]] nlohmann::json to_json(const EapLoadResult& result);

// One step for the ceiling search: the load at `options.rate` with the
// servers' /proc usage sampled, judged by `criteria`.
struct EapCeilingOptions {
  EapLoadOptions load;
  std::vector<int> watched_pids;
  bench::SearchOptions search;
  bench::PassCriteria criteria;
  Duration settle = Duration::milliseconds(2000);
  std::string label;
};

// The step-and-bisect search of bench/ceiling.h with EAP conversations per
// second as the rate; the report has the shape of `bench ceiling`'s, with
// each step's EAP counts and the generator's CPU per authentication.
[[nodiscard]] Result<nlohmann::json, std::string> run_eap_ceiling(const EapCeilingOptions& options);

}  // namespace rw::loadgen_shell
