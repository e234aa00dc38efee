#include "gateway/explain.h"

#include <gtest/gtest.h>

#include "base/random.h"

namespace rw::gateway {
namespace {

const Instant kNow{1'000'000'000};

Endpoint from(std::uint8_t last_octet) {
  Endpoint e;
  e.address = {10, 0, 0, last_octet};
  e.port = 5000;
  return e;
}

TEST(ExplainMatch, SampledFractionKeepsAboutThatShare) {
  SeededRandom random(5);
  const ExplainFilter filter{
      .selectors = {ExplainSelector{.id = 2, .fraction = 0.25, .until = kNow + Duration::seconds(1)}}};
  int kept = 0;
  for (int i = 0; i < 4000; ++i)
    kept += explain_match(filter, kNow, from(1), "nas", nullptr, random).has_value();
  EXPECT_GT(kept, 800);
  EXPECT_LT(kept, 1200);
}

TEST(ExplainMatch, NasByNameOrAddressAndFirstSelectorWins) {
  SeededRandom random(5);
  ExplainSelector by_address{.id = 1, .nas = "10.0.0.9", .until = kNow + Duration::seconds(1)};
  by_address.nas_address = from(9);
  const ExplainSelector by_name{.id = 2, .nas = "edge", .until = kNow + Duration::seconds(1)};
  const ExplainFilter filter{.selectors = {by_address, by_name}};
  EXPECT_EQ(explain_match(filter, kNow, from(9), "edge", nullptr, random), 1u);
  EXPECT_EQ(explain_match(filter, kNow, from(8), "edge", nullptr, random), 2u);
  EXPECT_FALSE(explain_match(filter, kNow, from(8), "core", nullptr, random).has_value());
  EXPECT_FALSE(
      explain_match(filter, kNow + Duration::seconds(1), from(9), "edge", nullptr, random).has_value());
}

TEST(ExplainMatch, UserAndMacNeedAPacket) {
  SeededRandom random(5);
  const ExplainFilter filter{
      .selectors = {
          ExplainSelector{.id = 1, .user = "alice", .until = kNow + Duration::seconds(1)},
          ExplainSelector{.id = 2, .mac = "00:11:22:33:44:55", .until = kNow + Duration::seconds(1)}}};
  EXPECT_FALSE(explain_match(filter, kNow, from(1), "nas", nullptr, random).has_value());
}

TEST(ExplainSwitch, WorkersSeeEachPublishOnce) {
  ExplainSwitch control;
  std::shared_ptr<const ExplainFilter> cached;
  std::uint64_t seen = 0;
  control.refresh(cached, seen);
  EXPECT_EQ(cached, nullptr);
  auto filter = std::make_shared<const ExplainFilter>(ExplainFilter{.selectors = {ExplainSelector{.id = 1}}});
  control.publish(filter);
  control.refresh(cached, seen);
  EXPECT_EQ(cached, filter);
  control.publish(std::make_shared<const ExplainFilter>());  // Empty: nothing is followed.
  control.refresh(cached, seen);
  EXPECT_EQ(cached, nullptr);
}

TEST(Printable, EscapesControlBytesAndCuts) {
  const std::uint8_t bytes[] = {'a', 0x1b, '[', '2', 'J', 0xff};
  EXPECT_EQ(printable(Bytes(bytes, sizeof bytes)), "a\\x1b[2J\\xff");
  const std::string longer(100, 'x');
  EXPECT_EQ(printable(as_bytes(longer)), std::string(64, 'x') + "...");
}

}  // namespace
}  // namespace rw::gateway
