// Tests of the bench JSON model: round trips of step results and histograms.
#include "bench/report.h"

#include <gtest/gtest.h>

namespace rw::bench {
namespace {

TEST(Report, StepResultRoundTrips) {
  StepResult result{.target_rate = 1000,
                    .duration_s = 5,
                    .sent = 5000,
                    .answered = 4990,
                    .lost = 10,
                    .retransmissions = 12,
                    .invalid = 1,
                    .p50 = Duration::microseconds(150),
                    .p99 = Duration::milliseconds(3),
                    .max = Duration::milliseconds(900)};
  const nlohmann::json json = to_json(result);
  EXPECT_DOUBLE_EQ(json.at("answered_rate").get<double>(), 998);
  const auto back = step_result_from_json(json);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->answered, 4990u);
  EXPECT_EQ(back->p99.ns, result.p99.ns);
  EXPECT_FALSE(step_result_from_json(nlohmann::json{{"target_rate", "x"}}));
}

TEST(Report, HistogramRoundTrips) {
  LatencyHistogram histogram;
  for (int i = 1; i <= 100; ++i) histogram.record(Duration::microseconds(i * 37));
  const auto back = histogram_from_json(histogram_to_json(histogram));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->count(), 100u);
  EXPECT_EQ(back->percentile(0.99).ns, histogram.percentile(0.99).ns);
  EXPECT_EQ(back->max().ns, histogram.max().ns);
  EXPECT_FALSE(histogram_from_json(nlohmann::json{{"buckets", {{100000, 1}}}, {"max_us", 1}}));
}

TEST(Report, CeilingText) {
  EXPECT_EQ(format_ceiling({.rate = 12345, .lower_bound = false}), "12,345/s");
  EXPECT_EQ(format_ceiling({.rate = 64000, .lower_bound = true}), "≥ 64,000/s");
  EXPECT_EQ(format_ceiling({.rate = 500, .lower_bound = false}), "500/s");
}

}  // namespace
}  // namespace rw::bench
