#include "consensus/quiet_log.h"

#include <gtest/gtest.h>

namespace rw::consensus {
namespace {

constexpr Instant kStart{.ns = 1'000'000'000};

TEST(QuietLog, ReportsOnceWhenNothingWasAppliedForTheWholePeriod) {
  QuietLog quiet(Duration::seconds(5));
  EXPECT_FALSE(quiet.on_turn(kStart, 10));
  EXPECT_FALSE(quiet.on_turn(kStart + Duration::milliseconds(4999), 10));
  EXPECT_TRUE(quiet.on_turn(kStart + Duration::seconds(5), 10));
  EXPECT_FALSE(quiet.on_turn(kStart + Duration::seconds(6), 10));
  EXPECT_FALSE(quiet.on_turn(kStart + Duration::seconds(60), 10));
}

TEST(QuietLog, AnAppliedEntryStartsANewSpell) {
  QuietLog quiet(Duration::seconds(5));
  EXPECT_FALSE(quiet.on_turn(kStart, 10));
  EXPECT_TRUE(quiet.on_turn(kStart + Duration::seconds(5), 10));
  EXPECT_FALSE(quiet.on_turn(kStart + Duration::seconds(7), 11));
  EXPECT_FALSE(quiet.on_turn(kStart + Duration::seconds(11), 11));
  EXPECT_TRUE(quiet.on_turn(kStart + Duration::seconds(12), 11));
}

TEST(QuietLog, ABusyLogIsNeverQuiet) {
  QuietLog quiet(Duration::seconds(5));
  for (std::uint64_t i = 0; i < 100; ++i) {
    EXPECT_FALSE(quiet.on_turn(kStart + Duration::seconds(static_cast<std::int64_t>(i)), i));
  }
}

TEST(QuietLog, ZeroPeriodTurnsItOff) {
  QuietLog quiet(Duration{});
  EXPECT_FALSE(quiet.on_turn(kStart, 1));
  EXPECT_FALSE(quiet.on_turn(kStart + Duration::seconds(3600), 1));
}

}  // namespace
}  // namespace rw::consensus
