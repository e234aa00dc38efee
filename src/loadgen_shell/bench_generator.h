// The open-loop load generator of `radiusward bench` (docs/benchmarking.md):
// sends requests at scheduled times from the start of a step, never waiting
// on answers (no coordinated omission), over many UDP sockets so that the
// 256 Identifiers of one socket (RFC 2865 §3) never limit the rate.
// Latency runs from the scheduled send time to the valid answer;
// retransmissions resend the same bytes (RFC 5080 §2.2.1).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/time.h"
#include "bench/ceiling.h"
#include "bench/histogram.h"
#include "bench/scenario.h"
#include "gateway/datagram.h"

namespace rw::loadgen_shell {

struct GeneratorOptions {
  gateway::Endpoint auth_target{};  // Access-Requests go here.
  gateway::Endpoint acct_target{};  // Accounting-Requests go here.
  bench::Scenario scenario = bench::Scenario::kPap;
  std::vector<bench::BenchUser> users;
  std::string secret;
  std::string run_tag;  // Prefix of Acct-Session-Ids: unique per run and process.
  double rate = 1000;   // Requests per second.
  double duration_s = 5;
  int sockets = 32;
  Duration timeout = Duration::milliseconds(1000);  // Per attempt.
  int retries = 2;                                  // Retransmissions before a request is lost.
  bool require_message_authenticator = true;
  std::string acked_log;  // Appends "Acct-Session-Id Status" per acknowledged record; empty: none.
  bench::LiveSessions live_sessions;  // count 0: fresh sessions (bench/scenario.h).
};

struct GeneratorResult {
  bench::StepResult step;
  bench::LatencyHistogram histogram;
  std::array<std::uint64_t, bench::kVerifyErrorCount> invalid_by_reason{};
  std::uint64_t identifiers_exhausted = 0;  // Counted as lost: no free Identifier on any socket.
  std::uint64_t stray_answers = 0;          // Answers to nothing in flight (late or duplicate).
  std::uint64_t send_errors = 0;
  Duration send_lag_max{};     // Worst lateness of a first send against its schedule.
  bool stopped_early = false;  // stop_sending() ended the schedule before its duration.
};

// Parses "HOST:PORT", "[V6]:PORT" (numeric addresses only).
[[nodiscard]] std::optional<gateway::Endpoint> parse_endpoint(const std::string& text);

// Runs one step to the end: every request answered, lost or refused.
// Fails only on set-up errors (sockets, the secret, the acked log).
[[nodiscard]] Result<GeneratorResult, std::string> run_generator(const GeneratorOptions& options);

// Ends the schedule of every step this process runs, now and later, as if
// its duration had passed: no new request is sent, and those in flight are
// still answered, retransmitted or lost as usual. The step's duration_s is
// then the schedule actually sent. Async-signal-safe (a lock-free atomic
// store): `bench run` calls it on SIGTERM and SIGINT.
void stop_sending() noexcept;

// Adds `other` into `into` (for several generator processes).
void merge_results(GeneratorResult& into, const GeneratorResult& other);

}  // namespace rw::loadgen_shell
