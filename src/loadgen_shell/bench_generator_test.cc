// Tests of the generator's pure helpers: HOST:PORT parsing and the merge of
// several generator processes' results. The event loop itself is tested on
// real sockets by tests/integration/bench_*_test.py.
#include "loadgen_shell/bench_generator.h"

#include <gtest/gtest.h>

namespace rw::loadgen_shell {
namespace {

TEST(ParseEndpoint, Ipv4AndBracketedIpv6) {
  const auto v4 = parse_endpoint("127.0.0.1:1812");
  ASSERT_TRUE(v4);
  EXPECT_FALSE(v4->is_v6);
  EXPECT_EQ(v4->port, 1812);
  EXPECT_EQ(v4->address[0], 127);
  EXPECT_EQ(v4->address[3], 1);
  const auto v6 = parse_endpoint("[::1]:1813");
  ASSERT_TRUE(v6);
  EXPECT_TRUE(v6->is_v6);
  EXPECT_EQ(v6->port, 1813);
  EXPECT_EQ(v6->address[15], 1);
}

TEST(ParseEndpoint, RefusesNamesMissingPortsAndBadPorts) {
  EXPECT_FALSE(parse_endpoint("localhost:1812"));
  EXPECT_FALSE(parse_endpoint("127.0.0.1"));
  EXPECT_FALSE(parse_endpoint("127.0.0.1:"));
  EXPECT_FALSE(parse_endpoint("127.0.0.1:65536"));
  EXPECT_FALSE(parse_endpoint("127.0.0.1:18x2"));
  EXPECT_FALSE(parse_endpoint("::1:1812"));
}

TEST(MergeResults, SumsCountersAndRecomputesPercentilesFromTheMergedHistogram) {
  GeneratorResult a;
  a.step = {.target_rate = 500, .duration_s = 5, .sent = 2500, .answered = 2500};
  for (int i = 0; i < 99; ++i) a.histogram.record(Duration::microseconds(100));
  GeneratorResult b;
  b.step = {
      .target_rate = 500, .duration_s = 5, .sent = 2500, .answered = 2490, .lost = 10, .retransmissions = 30};
  b.histogram.record(Duration::milliseconds(700));
  b.histogram.record(Duration::milliseconds(700));
  b.invalid_by_reason[2] = 4;
  b.send_lag_max = Duration::milliseconds(3);
  merge_results(a, b);
  EXPECT_EQ(a.step.target_rate, 1000);
  EXPECT_EQ(a.step.sent, 5000u);
  EXPECT_EQ(a.step.answered, 4990u);
  EXPECT_EQ(a.step.lost, 10u);
  EXPECT_EQ(a.step.retransmissions, 30u);
  EXPECT_EQ(a.invalid_by_reason[2], 4u);
  EXPECT_EQ(a.send_lag_max.ns, Duration::milliseconds(3).ns);
  EXPECT_EQ(a.histogram.count(), 101u);
  EXPECT_GE(a.step.p99.ns, Duration::milliseconds(700).ns);  // 2 of 101 are slow: p99 is slow.
  EXPECT_EQ(a.step.max.ns, Duration::milliseconds(700).ns);
}

}  // namespace
}  // namespace rw::loadgen_shell
