// Restart delays: short after a stable run, doubling in a crash loop, capped.
#include "deployment/restart_backoff.h"

#include <gtest/gtest.h>

namespace rw::deployment {
namespace {

constexpr RestartOptions kOptions{
    .delay = Duration::seconds(1), .delay_max = Duration::seconds(8), .stable_after = Duration::seconds(10)};

Instant at_s(std::int64_t seconds) { return Instant{} + Duration::seconds(seconds); }

TEST(RestartBackoff, FirstExitWaitsTheShortDelay) {
  RestartBackoff backoff(kOptions);
  EXPECT_EQ(backoff.on_exit(at_s(0), at_s(100)), Duration::seconds(1));
  EXPECT_EQ(backoff.crashes_in_a_row(), 1);
}

TEST(RestartBackoff, CrashLoopDoublesUpToTheBound) {
  RestartBackoff backoff(kOptions);
  EXPECT_EQ(backoff.on_exit(at_s(0), at_s(1)), Duration::seconds(1));
  EXPECT_EQ(backoff.on_exit(at_s(2), at_s(3)), Duration::seconds(2));
  EXPECT_EQ(backoff.on_exit(at_s(5), at_s(6)), Duration::seconds(4));
  EXPECT_EQ(backoff.on_exit(at_s(10), at_s(11)), Duration::seconds(8));
  EXPECT_EQ(backoff.on_exit(at_s(19), at_s(20)), Duration::seconds(8));
  EXPECT_EQ(backoff.crashes_in_a_row(), 5);
}

TEST(RestartBackoff, StableRunResetsTheLoop) {
  RestartBackoff backoff(kOptions);
  (void)backoff.on_exit(at_s(0), at_s(1));
  (void)backoff.on_exit(at_s(2), at_s(3));
  EXPECT_EQ(backoff.on_exit(at_s(5), at_s(15)), Duration::seconds(1));
  EXPECT_EQ(backoff.crashes_in_a_row(), 1);
}

TEST(RestartBackoff, ThousandsOfCrashesStayAtTheBound) {
  RestartBackoff backoff(kOptions);
  Duration last{};
  for (int i = 0; i < 5000; ++i) last = backoff.on_exit(at_s(i), at_s(i));
  EXPECT_EQ(last, Duration::seconds(8));
}

}  // namespace
}  // namespace rw::deployment
