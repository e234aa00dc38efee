#include "admin/status_view.h"

#include <gtest/gtest.h>

#include <string>

namespace rw::admin {
namespace {

// docs/admin_api.md "/status", member.
const std::string kLeader = R"({"role":"member","id":1,"raft_role":"leader","ready_for_work":true,
  "leader":{"id":1,"address":"127.0.0.1:7201","submission":"127.0.0.1:7301"},"term":7,
  "commit_index":104522,"applied_index":104521,"pending_submissions":3,"sessions":812,
  "records_held":104000,"held_bytes":13520000,"accepting":true,"log_clock_unix_ms":1764464823000})";

std::string with(std::string body, const std::string& from, const std::string& to) {
  const std::size_t at = body.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) body.replace(at, from.size(), to);
  return body;
}

StatusView view(const std::string& body) {
  auto viewed = view_status(body);
  EXPECT_TRUE(viewed) << (viewed ? "" : viewed.error());
  return viewed ? *viewed : StatusView{};
}

TEST(StatusView, MemberTableIsAlignedAndNamesEveryFigure) {
  const StatusView status = view(kLeader);
  EXPECT_TRUE(status.health.healthy());
  const std::string& t = status.table;
  EXPECT_NE(t.find("role             member 1\n"), std::string::npos) << t;
  EXPECT_NE(t.find("raft role        leader, ready for work\n"), std::string::npos) << t;
  EXPECT_NE(t.find("leader           member 1, raft 127.0.0.1:7201, submission 127.0.0.1:7301\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("term             7\n"), std::string::npos) << t;
  EXPECT_NE(t.find("commit index     104522\n"), std::string::npos) << t;
  EXPECT_NE(t.find("applied index    104521\n"), std::string::npos) << t;
  EXPECT_NE(t.find("held records     104000 (13520000 bytes)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("sessions         812\n"), std::string::npos) << t;
  EXPECT_NE(t.find("log clock        2025-11-30 01:07:03 UTC\n"), std::string::npos) << t;
  EXPECT_EQ(t.substr(t.size() - 20), "health           ok\n");
}

TEST(StatusView, MemberWithoutLeaderIsUnhealthyForNow) {
  const StatusView status =
      view(with(with(kLeader, R"("raft_role":"leader")", R"("raft_role":"follower")"),
                R"({"id":1,"address":"127.0.0.1:7201","submission":"127.0.0.1:7301"})", "null"));
  EXPECT_EQ(status.health.problems, std::vector<std::string>{"no leader known"});
  EXPECT_TRUE(status.health.transient);
  EXPECT_NE(status.table.find("leader           none known\n"), std::string::npos) << status.table;
  EXPECT_NE(status.table.find("health           UNHEALTHY: no leader known\n"), std::string::npos);
}

TEST(StatusView, UnavailableStorageErrorAndFullLedgerAreLastingProblems) {
  std::string body = with(kLeader, R"("raft_role":"leader")", R"("raft_role":"unavailable")");
  body = with(body, R"("accepting":true)", R"("accepting":false,"storage_error":"/d: ENOSPC")");
  const StatusView status = view(body);
  EXPECT_EQ(status.health.problems,
            (std::vector<std::string>{"raft unavailable", "storage error: /d: ENOSPC",
                                      "not accepting submissions: the held records reached their bound"}));
  EXPECT_FALSE(status.health.transient);
}

TEST(StatusView, ExportCursorAlarmIsAProblemAndTheExporterIsShown) {
  const std::string exporter =
      R"(,"export":{"database":"postgresql","active":true,"connected":true,"exported_through":48211,
      "lag_records":5,"lag_seconds":0.25,"records_exported":96422,"batches":311,"failures":0,"last_error":"",
      "records_quarantined":0,"records_resent":0,"cursor_alarm":null}})";
  const std::string body = kLeader.substr(0, kLeader.size() - 1) + exporter;
  StatusView status = view(body);
  EXPECT_TRUE(status.health.healthy());
  EXPECT_NE(status.table.find("export           postgresql, active, connected\n"), std::string::npos)
      << status.table;
  EXPECT_NE(status.table.find("  lag            5 records, 0.2 s\n"), std::string::npos) << status.table;
  status = view(with(body, R"("cursor_alarm":null)",
                     R"("cursor_alarm":{"database_cursor":40100,"ledger_exported_through":48211})"));
  ASSERT_EQ(status.health.problems.size(), 1u);
  EXPECT_NE(status.health.problems[0].find("export cursor alarm: the database's cursor 40100 is below the "
                                           "cluster's 48211"),
            std::string::npos);
  EXPECT_FALSE(status.health.transient);
}

// docs/admin_api.md "/status", gateway.
const std::string kGateway = R"({"role":"gateway","uptime_s":3725,"submission":{"state":"ready",
  "address":"127.0.0.1:7401","pending_records":12,"pending_bytes":4310,"queued_records":2,
  "in_flight_batches":1,"in_flight_records":10,"oldest_pending_ms":35,
  "counters":{"accepted":100233,"coalesced":41}}})";

TEST(StatusView, GatewayShowsSubmissionStateAndCountersInOrder) {
  const StatusView status = view(kGateway);
  EXPECT_TRUE(status.health.healthy());
  const std::string& t = status.table;
  EXPECT_NE(t.find("uptime         1 h 2 min 5 s\n"), std::string::npos) << t;
  EXPECT_NE(t.find("submission     ready, connected to 127.0.0.1:7401\n"), std::string::npos) << t;
  EXPECT_NE(t.find("  pending      12 records, 4310 bytes, the oldest waiting 35 ms\n"), std::string::npos)
      << t;
  EXPECT_NE(t.find("  counters\n    accepted   100233\n    coalesced  41\n"), std::string::npos) << t;
}

TEST(StatusView, GatewayNotConnectedIsUnhealthyForNowAndWithoutAccountingHealthy) {
  StatusView status = view(with(kGateway, R"("state":"ready")", R"("state":"waiting")"));
  EXPECT_EQ(status.health.problems,
            std::vector<std::string>{"submission waiting: not connected to the leader (127.0.0.1:7401)"});
  EXPECT_TRUE(status.health.transient);
  status = view(R"({"role":"gateway","uptime_s":1,"submission":null})");
  EXPECT_TRUE(status.health.healthy());
  EXPECT_NE(status.table.find("no accounting section"), std::string::npos);
}

TEST(StatusView, MalformedAnswersAreErrorsNotCrashes) {
  for (const char* body :
       {"", "not json", "[1,2]", "{}", R"({"role":7})", R"({"role":"router"})", R"({"role":"member"})",
        R"({"role":"member","raft_role":3})", R"({"role":"member","raft_role":"leader","leader":5})",
        R"({"role":"gateway","submission":"ready"})", R"({"role":"gateway","submission":{}})"}) {
    EXPECT_FALSE(view_status(body)) << body;
  }
  // Fields of unexpected types are shown as their JSON, control bytes made harmless.
  auto odd = view_status(
      R"({"role":"member","raft_role":"follower\u001b[2J","leader":null,"term":[1],"id":{"a":1}})");
  ASSERT_TRUE(odd) << odd.error();
  EXPECT_NE(odd->table.find("raft role        follower?[2J\n"), std::string::npos) << odd->table;
  EXPECT_NE(odd->table.find("term             [1]\n"), std::string::npos) << odd->table;
}

}  // namespace
}  // namespace rw::admin
