#include "admin/metrics_rates.h"

#include <gtest/gtest.h>

namespace rw::admin {
namespace {

std::vector<MetricSample> page(const std::string& text) {
  auto parsed = parse_metrics(text);
  EXPECT_TRUE(parsed) << (parsed ? "" : parsed.error());
  return parsed ? *parsed : std::vector<MetricSample>{};
}

TEST(MetricsRates, ParsesNamesLabelsAndValues) {
  const auto samples = page(
      "# HELP x y\n# TYPE radiusward_member_sessions gauge\nradiusward_member_sessions 812\n"
      "radiusward_gateway_drops_total{reason=\"malformed\",x=\"a\\\"b\"} 3 1700000000\n");
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].name, "radiusward_member_sessions");
  EXPECT_EQ(samples[0].value, 812);
  ASSERT_EQ(samples[1].labels.size(), 2u);
  EXPECT_EQ(samples[1].labels[0], (std::pair<std::string, std::string>{"reason", "malformed"}));
  EXPECT_EQ(samples[1].labels[1].second, "a\"b");
  EXPECT_EQ(samples[1].value, 3);
}

TEST(MetricsRates, RefusesWhatIsNoMetricsPage) {
  for (const char* text : {"", "# only comments\n", "<html>", "x{a=\"1\" 2\n", "x 1abc\n", "{a=\"1\"} 2\n"}) {
    EXPECT_FALSE(parse_metrics(text)) << text;
  }
}

TEST(MetricsRates, RatesPerSecondWithTotalsAndBreakdowns) {
  const auto before = page(
      "radiusward_member_ledger_events_total{reason=\"records_applied\"} 1000\n"
      "radiusward_member_ledger_events_total{reason=\"records_duplicate\"} 5\n"
      "radiusward_member_records_held 40\n"
      "radiusward_gateway_drops_total{reason=\"malformed\"} 1\n"
      "radiusward_gateway_drops_total{reason=\"unknown_client\"} 7\n");
  const auto after = page(
      "radiusward_member_ledger_events_total{reason=\"records_applied\"} 2024\n"
      "radiusward_member_ledger_events_total{reason=\"records_duplicate\"} 5\n"
      "radiusward_member_records_held 64\n"
      "radiusward_gateway_drops_total{reason=\"malformed\"} 5\n"
      "radiusward_gateway_drops_total{reason=\"unknown_client\"} 7\n");
  EXPECT_EQ(render_rates(before, after, 2.0),
            "                   PER SECOND  VALUE\n"
            "datagrams dropped         2.0     12\n"
            "  malformed               2.0      5\n"
            "records committed       512.0   2024\n"
            "duplicate records         0.0      5\n"
            "held records                      64\n");
}

TEST(MetricsRates, AGatewaysAcceptsAreItsRequestsAnsweredWithAnAccept) {
  const auto before = page(
      "radiusward_gateway_requests_total{code=\"Access-Request\",outcome=\"accept\"} 100\n"
      "radiusward_gateway_requests_total{code=\"Access-Request\",outcome=\"reject\"} 10\n"
      "radiusward_gateway_requests_total{code=\"Accounting-Request\",outcome=\"response\"} 7\n");
  const auto after = page(
      "radiusward_gateway_requests_total{code=\"Access-Request\",outcome=\"accept\"} 130\n"
      "radiusward_gateway_requests_total{code=\"Access-Request\",outcome=\"reject\"} 20\n"
      "radiusward_gateway_requests_total{code=\"Accounting-Request\",outcome=\"response\"} 9\n");
  EXPECT_EQ(render_rates(before, after, 2.0),
            "                PER SECOND  VALUE\n"
            "Access-Accepts        15.0    130\n");
}

TEST(MetricsRates, ACounterThatWentDownSaysRestarted) {
  const auto before = page("radiusward_member_ledger_events_total{reason=\"records_applied\"} 500\n");
  const auto after = page("radiusward_member_ledger_events_total{reason=\"records_applied\"} 20\n");
  EXPECT_NE(render_rates(before, after, 1.0).find("records committed   restarted     20\n"),
            std::string::npos)
      << render_rates(before, after, 1.0);
}

}  // namespace
}  // namespace rw::admin
