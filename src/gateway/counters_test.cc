// ClientCounterTable: one worker's counters by client label, kept for the
// life of the table so that no count goes down across reloads.
#include "gateway/counters.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace rw::gateway {
namespace {

using Totals = std::map<std::string, ClientCounts, std::less<>>;

TEST(ClientCounterTable, RowsAreFoundByLabelAndSharedByEqualLabels) {
  ClientCounterTable table;
  const std::vector<std::string> first{"nas-a", "nas-b", "nas-a"};
  const std::vector<ClientCounters*> rows = table.rows_for(first);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], rows[2]) << "two clients with one shortname share its row";
  EXPECT_NE(rows[0], rows[1]);
  const std::vector<std::string> second{"nas-c", "nas-b"};
  const std::vector<ClientCounters*> again = table.rows_for(second);
  EXPECT_EQ(again[1], rows[1]) << "a label keeps its row whatever its index";
  EXPECT_EQ(table.size(), 3u);
}

TEST(ClientCounterTable, CountsAreAddedForTheLabelsAskedOnly) {
  ClientCounterTable table;
  const std::vector<std::string> labels{"nas-a", "nas-b"};
  const std::vector<ClientCounters*> rows = table.rows_for(labels);
  rows[0]->access_accepts.add(3);
  rows[0]->drop(DropReason::kBadMessageAuthenticator);
  rows[1]->accounting_responses.add(5);
  Totals totals;
  totals["nas-a"].access_accepts = 10;  // What another worker counted.
  totals.try_emplace("nas-new");
  table.add_counts_to(totals);
  EXPECT_EQ(totals.size(), 2u) << "nas-b was not asked for";
  EXPECT_EQ(totals["nas-a"].access_accepts, 13u);
  EXPECT_EQ(totals["nas-a"].drops[static_cast<std::size_t>(DropReason::kBadMessageAuthenticator)], 1u);
  EXPECT_EQ(totals["nas-new"].access_accepts, 0u);
  EXPECT_EQ(totals["nas-new"].accounting_responses, 0u);
}

TEST(ClientCounterTable, ALabelThatLeavesAndComesBackContinuesWhereItStopped) {
  ClientCounterTable table;
  const std::vector<std::string> before{"nas-a"};
  table.rows_for(before)[0]->access_rejects.add(7);
  const std::vector<std::string> without{"nas-b"};
  (void)table.rows_for(without);
  const std::vector<std::string> back{"nas-b", "nas-a"};
  table.rows_for(back)[1]->access_rejects.add();
  Totals totals;
  totals.try_emplace("nas-a");
  table.add_counts_to(totals);
  EXPECT_EQ(totals["nas-a"].access_rejects, 8u);
}

// Rows follow the clients that send: asking which rows are held adds
// none, and a row is added once, on the first ask by label
// (docs/benchmarking.md "Gateway memory by client").
TEST(ClientCounterTable, RowsHeldAddsNoRowAndRowForAddsOneOnce) {
  ClientCounterTable table;
  const std::vector<std::string> configured{"nas-a", "nas-b", "nas-c"};
  for (ClientCounters* row : table.rows_held(configured)) EXPECT_EQ(row, nullptr);
  EXPECT_EQ(table.size(), 0u) << "a configured client that has not sent has no row";
  ClientCounters* first = table.row_for("nas-b");
  ASSERT_NE(first, nullptr);
  first->access_accepts.add();
  EXPECT_EQ(table.row_for("nas-b"), first) << "asked again: the same row, not another";
  EXPECT_EQ(table.size(), 1u);
  const std::vector<ClientCounters*> held = table.rows_held(configured);
  EXPECT_EQ(held[0], nullptr);
  EXPECT_EQ(held[1], first);
  EXPECT_EQ(held[2], nullptr);
  EXPECT_EQ(table.size(), 1u);
}

TEST(ClientCounterTable, CountsForSortedLabelsAddEntriesForTheRowsHeldOnly) {
  ClientCounterTable table;
  table.row_for("nas-b")->access_rejects.add(2);
  table.row_for("removed")->access_rejects.add(5);
  table.row_for("nas-d")->drop(DropReason::kDuplicateInProgress);
  const std::vector<std::string_view> labels{"nas-a", "nas-b", "nas-c", "nas-d"};
  Totals totals;
  totals["nas-b"].access_rejects = 1;  // What another worker counted.
  table.add_counts_for(labels, totals);
  EXPECT_EQ(totals.size(), 2u) << "nas-a and nas-c have no row; removed is not asked";
  EXPECT_EQ(totals["nas-b"].access_rejects, 3u);
  EXPECT_EQ(totals["nas-d"].drops[static_cast<std::size_t>(DropReason::kDuplicateInProgress)], 1u);
}

}  // namespace
}  // namespace rw::gateway
