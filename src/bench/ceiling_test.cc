// Tests of the step verdict and the climb-then-bisect ceiling search on
// synthetic step results: a server with a known capacity is simulated by a
// function of the rate, no network, no clock.
#include "bench/ceiling.h"

#include <gtest/gtest.h>

#include <functional>
#include <vector>

namespace rw::bench {
namespace {

StepResult good_step(double rate) {
  StepResult result;
  result.target_rate = rate;
  result.duration_s = 5;
  result.sent = static_cast<std::uint64_t>(rate * 5);
  result.answered = result.sent;
  result.p99 = Duration::milliseconds(2);
  return result;
}

TEST(JudgeStep, PassesWhenAllAnsweredQuickly) {
  const StepVerdict verdict = judge(good_step(1000));
  EXPECT_TRUE(verdict.passed);
  EXPECT_EQ(verdict.reason, "");
}

TEST(JudgeStep, FailsOnAnyLoss) {
  StepResult result = good_step(1000);
  result.lost = 1;
  const StepVerdict verdict = judge(result);
  EXPECT_FALSE(verdict.passed);
  EXPECT_EQ(verdict.reason, "lost 1");
}

TEST(JudgeStep, FailsWhenP99AboveFiveHundredMilliseconds) {
  StepResult result = good_step(1000);
  result.p99 = Duration::milliseconds(501);
  EXPECT_FALSE(judge(result).passed);
  result.p99 = Duration::milliseconds(500);
  EXPECT_TRUE(judge(result).passed);
}

TEST(JudgeStep, FailsBelowNinetyPercentAnswered) {
  StepResult result = good_step(1000);
  result.answered = 4499;  // 899.8/s of 1000/s.
  EXPECT_FALSE(judge(result).passed);
  result.answered = 4500;
  EXPECT_TRUE(judge(result).passed);
}

// Runs a search against a server that passes every rate up to `capacity`.
std::vector<double> run(const SearchOptions& options, double capacity, Ceiling& ceiling) {
  CeilingSearch search(options);
  std::vector<double> rates;
  while (auto rate = search.next_rate()) {
    rates.push_back(*rate);
    search.on_step(*rate, *rate <= capacity);
  }
  ceiling = search.ceiling();
  return rates;
}

TEST(CeilingSearch, DoublesThenBisectsToTheCapacity) {
  Ceiling ceiling;
  const std::vector<double> rates =
      run({.start_rate = 1000, .factor = 2, .max_rate = 1e6, .resolution = 0.05}, 5000, ceiling);
  // Climb 1000, 2000, 4000, 8000 (fails), then bisect 6000, 5000, 5500, 5250.
  const std::vector<double> want{1000, 2000, 4000, 8000, 6000, 5000, 5500, 5250};
  EXPECT_EQ(rates, want);
  EXPECT_EQ(ceiling.rate, 5000);
  EXPECT_FALSE(ceiling.lower_bound);
}

TEST(CeilingSearch, ArithmeticStepsWithIncrement) {
  Ceiling ceiling;
  const std::vector<double> rates = run(
      {.start_rate = 100, .factor = 1, .increment = 100, .max_rate = 1e6, .resolution = 0.2}, 250, ceiling);
  const std::vector<double> want{100, 200, 300, 250};
  EXPECT_EQ(rates, want);
  EXPECT_EQ(ceiling.rate, 250);
}

TEST(CeilingSearch, EveryStepPassedIsALowerBound) {
  Ceiling ceiling;
  const std::vector<double> rates = run({.start_rate = 1000, .factor = 4, .max_rate = 20000}, 1e9, ceiling);
  const std::vector<double> want{1000, 4000, 16000, 20000};
  EXPECT_EQ(rates, want);
  EXPECT_EQ(ceiling.rate, 20000);
  EXPECT_TRUE(ceiling.lower_bound);
}

TEST(CeilingSearch, FirstStepFailingBisectsTowardZero) {
  Ceiling ceiling;
  run({.start_rate = 1000, .factor = 2, .resolution = 0.1}, 300, ceiling);
  EXPECT_GE(ceiling.rate, 250);
  EXPECT_LE(ceiling.rate, 300);
  EXPECT_FALSE(ceiling.lower_bound);
}

TEST(CeilingSearch, NothingPassesGivesZero) {
  Ceiling ceiling;
  run({.start_rate = 1000, .factor = 2, .resolution = 0.05}, 0, ceiling);
  EXPECT_EQ(ceiling.rate, 0);
  EXPECT_FALSE(ceiling.lower_bound);
}

TEST(CeilingSearch, StopsAtMaxSteps) {
  Ceiling ceiling;
  const std::vector<double> rates =
      run({.start_rate = 1, .factor = 2, .max_rate = 1e9, .max_steps = 3}, 1e12, ceiling);
  EXPECT_EQ(rates.size(), 3u);
  EXPECT_EQ(ceiling.rate, 4);
  EXPECT_TRUE(ceiling.lower_bound);
}

TEST(CeilingSearch, NoisyPassAboveAFailDoesNotRaiseTheBracket) {
  // A later pass above an earlier fail (noise) still counts as the best pass.
  CeilingSearch search({.start_rate = 1000, .factor = 2, .resolution = 0.01});
  search.on_step(1000, true);
  search.on_step(2000, false);
  ASSERT_EQ(search.next_rate(), 1500);
  search.on_step(1500, true);
  ASSERT_EQ(search.next_rate(), 1750);
  search.on_step(1750, false);
  EXPECT_EQ(search.ceiling().rate, 1500);
}

}  // namespace
}  // namespace rw::bench
