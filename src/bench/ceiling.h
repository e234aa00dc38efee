// The ceiling search of `radiusward bench ceiling` (docs/benchmarking.md):
// the offered rate rises step by step; a step passes only if nothing is
// lost, the p99 is at most 500 ms and at least 90 % of the target rate is
// answered. After the first failed step the search bisects between the last
// passing and the failed rate. Pure: the shell runs each step and reports
// its result; this decides the verdict and the next rate.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/time.h"

namespace rw::bench {

// What one step measured, whoever ran it.
struct StepResult {
  double target_rate = 0;      // Requests per second offered.
  double duration_s = 0;       // The scheduled length of the step.
  std::uint64_t sent = 0;      // Distinct requests sent (not counting retransmissions).
  std::uint64_t answered = 0;  // Requests with a valid, expected answer.
  std::uint64_t lost = 0;      // No valid answer within the timeout after every retry.
  std::uint64_t retransmissions = 0;
  std::uint64_t invalid = 0;  // Responses that failed verification.
  Duration p50{};
  Duration p99{};
  Duration max{};

  [[nodiscard]] double answered_rate() const { return duration_s > 0 ? answered / duration_s : 0; }
};

// The pass rule of a step (issue 5, "The method").
struct PassCriteria {
  std::uint64_t lost_max = 0;
  Duration p99_max = Duration::milliseconds(500);
  double answered_fraction_min = 0.9;
};

struct StepVerdict {
  bool passed = false;
  std::string reason;  // Empty when passed: "lost 3", "p99 612 ms > 500 ms", ...
};

[[nodiscard]] StepVerdict judge(const StepResult& result, const PassCriteria& criteria = {});

// How the offered rate moves.
struct SearchOptions {
  double start_rate = 1000;
  // While climbing, the next rate is rate * factor + increment (a factor of
  // 1 with an increment gives arithmetic steps). Requires: the result grows.
  double factor = 2;
  double increment = 0;
  // Climbing stops here; when even this rate passes, the ceiling is a lower bound.
  double max_rate = 1'000'000;
  // Bisection stops when the bracket is narrower than this fraction of the
  // failed rate (and never bisects below 1 request per second).
  double resolution = 0.05;
  // A hard bound on the number of steps, whatever happens.
  int max_steps = 20;
};

// The outcome of a search.
struct Ceiling {
  double rate = 0;           // The highest passing rate; 0 when none passed.
  bool lower_bound = false;  // Every climbing step passed: the true ceiling is at least `rate`.
};

// Drives the search: ask next_rate(), run the step, report on_step().
class CeilingSearch {
 public:
  explicit CeilingSearch(const SearchOptions& options);

  // The rate of the next step, or nothing when the search is over.
  [[nodiscard]] std::optional<double> next_rate() const;
  // Records the verdict of the step run at `rate` (the last next_rate()).
  void on_step(double rate, bool passed);
  [[nodiscard]] Ceiling ceiling() const;
  [[nodiscard]] int steps() const { return steps_; }

 private:
  enum class Phase { kClimbing, kBisecting, kDone };

  void finish_if_narrow();

  SearchOptions options_;
  Phase phase_ = Phase::kClimbing;
  double next_ = 0;
  double best_pass_ = 0;
  std::optional<double> lowest_fail_;
  bool passed_at_max_ = false;
  int steps_ = 0;
};

}  // namespace rw::bench
