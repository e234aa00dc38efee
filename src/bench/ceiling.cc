// Step verdicts and the climb-then-bisect search (ceiling.h).
#include "bench/ceiling.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace rw::bench {

StepVerdict judge(const StepResult& result, const PassCriteria& criteria) {
  std::string reason;
  const auto add = [&reason](const std::string& why) {
    if (!reason.empty()) reason += "; ";
    reason += why;
  };
  if (result.lost > criteria.lost_max) add(fmt::format("lost {}", result.lost));
  if (result.p99 > criteria.p99_max) {
    add(fmt::format("p99 {} ms > {} ms", result.p99.to_ms(), criteria.p99_max.to_ms()));
  }
  const double needed = criteria.answered_fraction_min * result.target_rate;
  if (result.answered_rate() < needed) {
    add(fmt::format("answered {:.0f}/s < {:.0f}/s", result.answered_rate(), needed));
  }
  return {reason.empty(), reason};
}

CeilingSearch::CeilingSearch(const SearchOptions& options)
    : options_(options), next_(std::min(options.start_rate, options.max_rate)) {}

std::optional<double> CeilingSearch::next_rate() const {
  if (phase_ == Phase::kDone || steps_ >= options_.max_steps) return std::nullopt;
  return next_;
}

void CeilingSearch::on_step(double rate, bool passed) {
  ++steps_;
  if (passed) {
    best_pass_ = std::max(best_pass_, rate);
  } else {
    lowest_fail_ = lowest_fail_ ? std::min(*lowest_fail_, rate) : rate;
  }
  if (phase_ == Phase::kClimbing) {
    if (passed) {
      if (rate >= options_.max_rate) {
        passed_at_max_ = true;
        phase_ = Phase::kDone;
        return;
      }
      next_ = std::min(rate * options_.factor + options_.increment, options_.max_rate);
      if (next_ <= rate) phase_ = Phase::kDone;  // A search that cannot climb is over.
      return;
    }
    phase_ = Phase::kBisecting;
  }
  if (phase_ == Phase::kBisecting) {
    finish_if_narrow();
    if (phase_ != Phase::kDone) next_ = std::round((best_pass_ + *lowest_fail_) / 2);
  }
}

void CeilingSearch::finish_if_narrow() {
  const double width = *lowest_fail_ - best_pass_;
  if (width <= std::max(1.0, options_.resolution * *lowest_fail_)) phase_ = Phase::kDone;
}

Ceiling CeilingSearch::ceiling() const {
  // Lower bound: the climb never failed (it reached max_rate or ran out of steps).
  const bool lower_bound = !lowest_fail_.has_value() && best_pass_ > 0;
  return {best_pass_, lower_bound || passed_at_max_};
}

}  // namespace rw::bench
