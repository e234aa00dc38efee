// PrometheusText's histogram family and MetricHistogram: cumulative
// buckets up to +Inf, _sum and _count, scaled bounds, and snapshots summed
// over writers; label values escaped and made UTF-8; and the resident
// memory read from /proc.
#include "io/admin_metrics.h"

#include <gtest/gtest.h>

#include "io/metric_histogram.h"

namespace rw::io {
namespace {

constexpr std::uint64_t kBounds[] = {100, 1000, 10000};

TEST(MetricHistogram, CountsEachValueInTheFirstBucketThatHoldsIt) {
  MetricHistogram histogram(kBounds);
  histogram.observe(0);
  histogram.observe(100);  // On the bound: le is inclusive.
  histogram.observe(101);
  histogram.observe(20000, 3);  // Past the largest bound.
  const HistogramSnapshot snapshot = histogram.snapshot();
  EXPECT_EQ(snapshot.buckets, (std::vector<std::uint64_t>{2, 1, 0, 3}));
  EXPECT_EQ(snapshot.sum, 0 + 100 + 101 + 60000u);
  EXPECT_EQ(snapshot.count(), 6u);
}

TEST(MetricHistogram, SnapshotsOfSeveralWritersAdd) {
  MetricHistogram first(kBounds);
  MetricHistogram second(kBounds);
  first.observe(50);
  second.observe(5000);
  second.observe(50);
  HistogramSnapshot total;
  total.add(first.snapshot());
  total.add(second.snapshot());
  EXPECT_EQ(total.buckets, (std::vector<std::uint64_t>{2, 0, 1, 0}));
  EXPECT_EQ(total.sum, 5100u);
}

TEST(PrometheusText, HistogramIsCumulativeWithInfSumAndCount) {
  MetricHistogram histogram(kBounds);
  histogram.observe(50);
  histogram.observe(500);
  histogram.observe(50000);
  PrometheusText page;
  page.histogram("rw_latency_seconds", "Latency.", histogram.snapshot(), 1e6,
                 {{"listener", "authentication"}});
  EXPECT_EQ(page.text(),
            "# HELP rw_latency_seconds Latency.\n"
            "# TYPE rw_latency_seconds histogram\n"
            "rw_latency_seconds_bucket{listener=\"authentication\",le=\"0.0001\"} 1\n"
            "rw_latency_seconds_bucket{listener=\"authentication\",le=\"0.001\"} 2\n"
            "rw_latency_seconds_bucket{listener=\"authentication\",le=\"0.01\"} 2\n"
            "rw_latency_seconds_bucket{listener=\"authentication\",le=\"+Inf\"} 3\n"
            "rw_latency_seconds_sum{listener=\"authentication\"} 0.05055\n"
            "rw_latency_seconds_count{listener=\"authentication\"} 3\n");
}

TEST(PrometheusText, HistogramFamilyIsDescribedOnce) {
  MetricHistogram histogram(kBatchRecordBuckets);
  PrometheusText page;
  page.histogram("rw_batch_records", "Records.", histogram.snapshot(), 1, {{"k", "a"}});
  page.histogram("rw_batch_records", "Records.", histogram.snapshot(), 1, {{"k", "b"}});
  const std::string& text = page.text();
  EXPECT_EQ(text.find("# TYPE rw_batch_records histogram"), text.rfind("# TYPE rw_batch_records histogram"));
  EXPECT_NE(text.find("rw_batch_records_bucket{k=\"b\",le=\"4096\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("rw_batch_records_count{k=\"a\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("rw_batch_records_sum{k=\"b\"} 0\n"), std::string::npos);
}

// Exposition format 0.0.4: a label value escapes backslash, double quote
// and line feed, and must be UTF-8 (Prometheus refuses the whole scrape
// otherwise); other bytes, tabs and carriage returns included, pass as they are.
TEST(PrometheusText, LabelValuesAreEscapedAndMadeWellFormedUtf8) {
  PrometheusText page;
  page.counter("rw_requests_total", "Requests.", 3, {{"client", "nas \"one\"\\\n\tcaf\xC3\xA9"}});
  page.counter("rw_requests_total", "Requests.", 4,
               {{"client", std::string_view("bad\xFF\0"
                                            "end",
                                            8)}});
  EXPECT_EQ(page.text(),
            "# HELP rw_requests_total Requests.\n"
            "# TYPE rw_requests_total counter\n"
            "rw_requests_total{client=\"nas \\\"one\\\"\\\\\\n\tcaf\xC3\xA9\"} 3\n"
            "rw_requests_total{client=\"bad\xEF\xBF\xBD\xEF\xBF\xBD"
            "end\"} 4\n");
}

TEST(ResidentMemory, IsReadFromProc) {
  const std::optional<std::uint64_t> resident = resident_memory_bytes();
  ASSERT_TRUE(resident.has_value());
  // A test binary holds at least a megabyte and far less than a terabyte.
  EXPECT_GT(*resident, 1u << 20);
  EXPECT_LT(*resident, std::uint64_t{1} << 40);
}

}  // namespace
}  // namespace rw::io
