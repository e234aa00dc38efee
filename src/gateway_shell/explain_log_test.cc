// ExplainLog: what POST /explain accepts, the bounds on selectors, the ring
// of traces and what the workers are switched to.
#include "gateway_shell/explain_log.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace rw::gateway_shell {
namespace {

const Instant kNow{10'000'000'000};

// What a worker would see through the log's switch.
std::shared_ptr<const gateway::ExplainFilter> in_force(ExplainLog& log) {
  std::shared_ptr<const gateway::ExplainFilter> cached;
  std::uint64_t seen = 0;
  log.setup().control->refresh(cached, seen);
  return cached;
}

TEST(ExplainLog, SelectorsAreCheckedAndNormalised) {
  ExplainLog log;
  EXPECT_FALSE(log.add("[]", kNow).has_value());
  EXPECT_FALSE(log.add("{}", kNow).has_value()) << "selects nothing";
  EXPECT_FALSE(log.add(R"({"user": "alice", "colour": "red"})", kNow).has_value());
  EXPECT_FALSE(log.add(R"({"user": 5})", kNow).has_value());
  EXPECT_FALSE(log.add(R"({"user": ""})", kNow).has_value());
  EXPECT_FALSE(log.add(R"({"mac": "not-a-mac"})", kNow).has_value());
  EXPECT_FALSE(log.add(R"({"fraction": 0})", kNow).has_value());
  EXPECT_FALSE(log.add(R"({"fraction": 1.5})", kNow).has_value());
  EXPECT_FALSE(log.add(R"({"user": "alice", "seconds": 100000})", kNow).has_value());
  EXPECT_EQ(in_force(log), nullptr);

  auto mac = log.add(R"({"mac": "AABB.CCDD.EEFF", "seconds": 30})", kNow);
  ASSERT_TRUE(mac.has_value()) << mac.error();
  EXPECT_EQ(mac->mac, "aa:bb:cc:dd:ee:ff");
  EXPECT_EQ(mac->until, kNow + Duration::seconds(30));
  auto nas = log.add(R"({"nas": "192.0.2.7"})", kNow);
  ASSERT_TRUE(nas.has_value()) << nas.error();
  ASSERT_TRUE(nas->nas_address.has_value());
  EXPECT_EQ(nas->until, kNow + Duration::seconds(600)) << "the default";
  EXPECT_FALSE(log.add(R"({"nas": "edge-1"})", kNow)->nas_address.has_value());
  auto sampled = log.add(R"({"fraction": 0.01})", kNow);
  ASSERT_TRUE(sampled.has_value()) << sampled.error();
  ASSERT_NE(in_force(log), nullptr);
  EXPECT_EQ(in_force(log)->selectors.size(), 4u);
}

TEST(ExplainLog, AtMostSixteenSelectorsAndExpiredOnesMakeRoom) {
  ExplainLog log;
  for (std::size_t i = 0; i < gateway::kMaxExplainSelectors; ++i) {
    ASSERT_TRUE(log.add(R"({"user": "u", "seconds": 5})", kNow).has_value());
  }
  auto refused = log.add(R"({"user": "u"})", kNow);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().find("at most 16"), std::string::npos);
  EXPECT_TRUE(log.add(R"({"user": "u"})", kNow + Duration::seconds(5)).has_value());
  EXPECT_EQ(log.selectors(kNow + Duration::seconds(5)).size(), 1u);
}

TEST(ExplainLog, RemoveAndClearSwitchTheWorkersOff) {
  ExplainLog log;
  const auto first = log.add(R"({"user": "a"})", kNow);
  const auto second = log.add(R"({"user": "b"})", kNow);
  EXPECT_TRUE(log.remove(first->id));
  EXPECT_FALSE(log.remove(first->id));
  EXPECT_EQ(in_force(log)->selectors.size(), 1u);
  EXPECT_EQ(in_force(log)->selectors[0].id, second->id);
  log.clear();
  EXPECT_EQ(in_force(log), nullptr);
}

TEST(ExplainLog, RingKeepsTheLastTracesInOrder) {
  ExplainLog log(3);
  for (std::uint64_t i = 1; i <= 5; ++i) {
    gateway::ExplainTrace trace;
    trace.selector = i % 2;
    trace.outcome = "trace " + std::to_string(i);
    log.on_trace(std::move(trace));
  }
  EXPECT_EQ(log.last_sequence(), 5u);
  const auto all = log.traces_after(0, std::nullopt, 100);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].sequence, 3u);
  EXPECT_EQ(all[2].trace.outcome, "trace 5");
  const auto odd = log.traces_after(3, 1, 100);
  ASSERT_EQ(odd.size(), 1u);
  EXPECT_EQ(odd[0].sequence, 5u);
  EXPECT_EQ(log.traces_after(0, std::nullopt, 1).size(), 1u);
  const auto json = trace_json(all[2]);
  EXPECT_EQ(json["sequence"], 5);
  EXPECT_EQ(json["outcome"], "trace 5");
}

}  // namespace
}  // namespace rw::gateway_shell
