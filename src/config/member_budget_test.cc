// Tests of the member memory budget (member_budget.h) and of its check,
// memory_budget_mib (docs/limits.md "Member memory budget").
#include "config/member_budget.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "config/member_config.h"

namespace rw::config {
namespace {

using ::testing::HasSubstr;

std::uint64_t item(const MemoryBudget& budget, std::string_view what) {
  for (const BudgetItem& line : budget.items) {
    if (line.what == what) return line.bytes;
  }
  ADD_FAILURE() << "no budget item " << what;
  return 0;
}

// The set docs/limits.md gives for a member within 128 MiB.
MemberConfig within_128_mib() {
  MemberConfig config;
  config.submission_connections_max = 8;
  config.raft.log_bytes_max = std::size_t{16} << 20;
  config.ledger.held_records_max = 16'000;
  config.ledger.held_bytes_max = std::size_t{4} << 20;
  config.ledger.sessions_bytes_max = std::size_t{3} << 20;
  return config;
}

TEST(MemberMemoryBudget, AddsUpEveryBoundFull) {
  const MemoryBudget budget = member_memory_budget(within_128_mib());
  EXPECT_EQ(item(budget, "process"), kMemberProcessBytes);
  EXPECT_EQ(item(budget, "held records"), (std::uint64_t{4} << 20) + 16'000 * kHeldRecordOverheadBytes);
  EXPECT_EQ(item(budget, "de-duplication window"), kWindowKeysMax * kWindowKeyBytes);
  // 3 MiB of encoded sessions of 92 bytes each at least: 34,192 sessions.
  EXPECT_EQ(item(budget, "sessions"), 34'192 * kSessionMemoryBytes + (std::uint64_t{3} << 20));
  EXPECT_EQ(item(budget, "raft log"), std::uint64_t{16} << 20);
  EXPECT_EQ(item(budget, "snapshot buffer"), 14'495'240U);
  EXPECT_EQ(item(budget, "gateway connections"), 8 * kConnectionBytes);
  EXPECT_EQ(budget.total_bytes, 113'393'672U);
  EXPECT_LE(budget.total_bytes, std::uint64_t{128} << 20);
  EXPECT_FALSE(budget.log_unbounded);
}

// Ledger bounds whose snapshot passes raft.log_bytes_max raise the log's
// bound to the snapshot's size (docs/consensus.md "Log held in memory"), and
// the budget with it.
TEST(MemberMemoryBudget, TheRaftLogFollowsASnapshotLargerThanItsBound) {
  MemberConfig config = within_128_mib();
  const std::uint64_t snapshot = item(member_memory_budget(config), "snapshot buffer") * 4 / 5;
  EXPECT_EQ(item(member_memory_budget(config), "raft log"), std::uint64_t{16} << 20);
  config.raft.log_bytes_max = std::size_t{4} << 20;
  EXPECT_NEAR(static_cast<double>(item(member_memory_budget(config), "raft log")),
              static_cast<double>(snapshot), 4.0);
  config.raft.log_bytes_max = 0;
  EXPECT_EQ(item(member_memory_budget(config), "raft log"), 0U);
  EXPECT_TRUE(member_memory_budget(config).log_unbounded);
}

TEST(MemberMemoryBudget, TheDefaultsNeedAboutThreeTimes128MiB) {
  const MemoryBudget budget = member_memory_budget(MemberConfig{});
  EXPECT_EQ(budget.total_bytes, 397'385'576U);
  // The session count bound caps the sessions the byte bound would let in.
  MemberConfig few = within_128_mib();
  few.ledger.sessions_max = 1000;
  EXPECT_EQ(item(member_memory_budget(few), "sessions"),
            1000 * kSessionMemoryBytes + (std::uint64_t{3} << 20));
}

TEST(MemberMemoryBudget, AnUnboundedLogIsSaid) {
  MemberConfig config;
  config.raft.log_bytes_max = 0;
  EXPECT_TRUE(member_memory_budget(config).log_unbounded);
}

constexpr std::string_view kMember =
    "id: 1\n"
    "data_dir: member-1\n"
    "raft_address: 127.0.0.1:7201\n"
    "submission_listen: 127.0.0.1:7301\n"
    "members:\n"
    "  - {id: 1, raft: 127.0.0.1:7201, submission: 127.0.0.1:7301}\n"
    "insecure_plaintext_cluster: true\n";

constexpr std::string_view kWithin128MiB =
    "submission_connections_max: 8\n"
    "raft: {log_bytes_max: 16777216}\n"
    "ledger: {held_records_max: 16000, held_bytes_max: 4194304, sessions_bytes_max: 3145728}\n";

TEST(MemoryBudgetMib, AcceptsBoundsWithinIt) {
  auto parsed = parse_member_config(
      std::string(kMember) + std::string(kWithin128MiB) + "memory_budget_mib: 128\n", "/etc/rw/member.yaml");
  ASSERT_TRUE(parsed.has_value()) << parsed.error().front().to_string();
  EXPECT_EQ(parsed->memory_budget_mib, 128U);
  EXPECT_EQ(parsed->submission_connections_max, 8U);
}

TEST(MemoryBudgetMib, RefusesTheDefaultsAtItsPositionNamingTheLargestBounds) {
  auto parsed = parse_member_config(std::string(kMember) + "memory_budget_mib: 128\n", "/etc/rw/member.yaml");
  ASSERT_FALSE(parsed.has_value());
  ASSERT_EQ(parsed.error().size(), 1U);
  const std::string error = parsed.error().front().to_string();
  EXPECT_THAT(error, HasSubstr("/etc/rw/member.yaml:8:1: the bounds need 379 MiB when full"));
  EXPECT_THAT(error, HasSubstr("largest sessions 133 MiB (ledger.sessions_max, ledger.sessions_bytes_max)"));
}

TEST(MemoryBudgetMib, RefusesAnUnboundedLog) {
  auto parsed = parse_member_config(
      std::string(kMember) + "raft: {log_bytes_max: 0}\nmemory_budget_mib: 100000\n", "/etc/rw/member.yaml");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_THAT(parsed.error().front().to_string(),
              HasSubstr("raft.log_bytes_max: 0 leaves the raft log unbounded"));
}

TEST(MemoryBudgetMib, ZeroOrAbsentChecksNothing) {
  EXPECT_TRUE(parse_member_config(kMember, "m.yaml").has_value());
  EXPECT_TRUE(parse_member_config(std::string(kMember) + "memory_budget_mib: 0\n", "m.yaml").has_value());
}

}  // namespace
}  // namespace rw::config
