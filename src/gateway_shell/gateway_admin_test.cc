// The gateway's /metrics page: drop and reject reasons are counted by their
// closed enums and shown under the names the decision log uses; answers and
// drops by NAS client are summed over workers under the clients in force.
#include "gateway_shell/gateway_admin.h"

#include "base/random.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace rw::gateway_shell {
namespace {

TEST(GatewayMetrics, RejectsAndDropsAreSummedOverWorkersByReason) {
  std::vector<std::unique_ptr<gateway::GatewayCounters>> workers;
  workers.push_back(std::make_unique<gateway::GatewayCounters>());
  workers.push_back(std::make_unique<gateway::GatewayCounters>());
  workers[0]->reject(gateway::RejectReason::kWrongPassword);
  workers[1]->reject(gateway::RejectReason::kWrongPassword);
  workers[1]->reject(gateway::RejectReason::kUnknownUser);
  workers[0]->drop(gateway::DropReason::kCryptQueueFull);
  workers[1]->crypt_checks.add(3);
  io::PrometheusText page;
  add_handler_metrics(page, workers);
  const std::string& text = page.text();
  EXPECT_NE(text.find("radiusward_gateway_rejects_total{reason=\"wrong_password\"} 2\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("radiusward_gateway_rejects_total{reason=\"unknown_user\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("radiusward_gateway_rejects_total{reason=\"simultaneous_use\"} 0\n"),
            std::string::npos);
  EXPECT_NE(text.find("radiusward_gateway_drops_total{reason=\"crypt_queue_full\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("radiusward_gateway_parked_total{event=\"crypt_check\"} 3\n"), std::string::npos);
  // Every reason has its own line.
  for (std::size_t i = 0; i < gateway::kRejectReasonCount; ++i) {
    const std::string line = "radiusward_gateway_rejects_total{reason=\"" +
                             std::string(gateway::to_string(static_cast<gateway::RejectReason>(i))) + "\"}";
    EXPECT_NE(text.find(line), std::string::npos) << line;
  }
}

TEST(GatewayMetrics, AnsweredRequestsAreCountedByCodeAndOutcome) {
  std::vector<std::unique_ptr<gateway::GatewayCounters>> workers;
  workers.push_back(std::make_unique<gateway::GatewayCounters>());
  workers.push_back(std::make_unique<gateway::GatewayCounters>());
  workers[0]->access_accepts.add(5);
  workers[1]->access_accepts.add(2);
  workers[1]->access_rejects.add(3);
  workers[0]->accounting_responses.add(11);
  workers[1]->status_server.add(1);
  workers[0]->retransmissions_answered.add(4);
  workers[1]->access_challenges.add(6);
  io::PrometheusText page;
  add_handler_metrics(page, workers);
  const std::string& text = page.text();
  for (const std::string line :
       {"radiusward_gateway_requests_total{code=\"Access-Request\",outcome=\"accept\"} 7\n",
        "radiusward_gateway_requests_total{code=\"Access-Request\",outcome=\"reject\"} 3\n",
        "radiusward_gateway_requests_total{code=\"Accounting-Request\",outcome=\"response\"} 11\n",
        "radiusward_gateway_requests_total{code=\"Status-Server\",outcome=\"answered\"} 1\n",
        "radiusward_gateway_requests_total{code=\"Access-Request\",outcome=\"challenge\"} 6\n",
        "radiusward_gateway_retransmissions_answered_total 4\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << text;
  }
}

TEST(GatewayMetrics, ClientSeriesAreSummedOverWorkersForTheClientsInForce) {
  std::vector<std::unique_ptr<gateway::GatewayCounters>> workers;
  workers.push_back(std::make_unique<gateway::GatewayCounters>());
  workers.push_back(std::make_unique<gateway::GatewayCounters>());
  const std::vector<std::string> counted{"nas-a", "nas \"b\"\\\n", "gone"};
  const std::vector<gateway::ClientCounters*> first = workers[0]->clients.rows_for(counted);
  const std::vector<gateway::ClientCounters*> second = workers[1]->clients.rows_for(counted);
  first[0]->access_accepts.add(5);
  second[0]->access_accepts.add(2);
  second[0]->access_rejects.add(3);
  first[1]->accounting_responses.add(11);
  second[1]->status_server.add(1);
  first[1]->drop(gateway::DropReason::kBadRequestAuthenticator);
  second[1]->drop(gateway::DropReason::kBadRequestAuthenticator);
  first[2]->access_accepts.add(9);
  // In force: nas-a (twice: two clients with one shortname), nas "b" and a
  // client no worker has counted for yet; "gone" was removed by a reload.
  const std::vector<std::string> in_force{"nas-a", "nas \"b\"\\\n", "nas-a", "new"};
  io::PrometheusText page;
  add_client_metrics(page, workers, in_force);
  const std::string& text = page.text();
  constexpr std::string_view kName = "radiusward_gateway_client_requests_total";
  for (const std::string line : {
           "{client=\"nas-a\",code=\"Access-Request\",outcome=\"accept\"} 7\n",
           "{client=\"nas-a\",code=\"Access-Request\",outcome=\"reject\"} 3\n",
           "{client=\"nas-a\",code=\"Accounting-Request\",outcome=\"response\"} 0\n",
           "{client=\"nas \\\"b\\\"\\\\\\n\",code=\"Accounting-Request\",outcome=\"response\"} 11\n",
           "{client=\"nas \\\"b\\\"\\\\\\n\",code=\"Status-Server\",outcome=\"answered\"} 1\n",
           "{client=\"new\",code=\"Access-Request\",outcome=\"accept\"} 0\n",
       }) {
    EXPECT_NE(text.find(std::string(kName) + line), std::string::npos) << line << text;
  }
  EXPECT_NE(text.find("radiusward_gateway_client_drops_total{client=\"nas \\\"b\\\"\\\\\\n\","
                      "reason=\"bad_request_authenticator\"} 2\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("gone"), std::string::npos) << "a removed client's series leaves";
  // Each label once; drop reasons that did not happen are left out.
  std::size_t lines = 0;
  for (std::size_t at = text.find(kName); at != std::string::npos; at = text.find(kName, at + 1)) ++lines;
  EXPECT_EQ(lines, 3u * 5u + 2u) << text;  // 5 answers per client, and the HELP and TYPE lines.
  EXPECT_EQ(text.find("radiusward_gateway_client_drops_total{client=\"nas-a\""), std::string::npos);
}

TEST(GatewayMetrics, EapFiguresAndOutcomesByMethod) {
  SeededRandom random(1);
  gateway::EapConversations conversations(gateway::EapTableOptions{.conversations_max = 4}, random);
  const Instant now{1'000'000'000};
  auto state =
      conversations.insert(now, std::make_unique<eap::Conversation>(eap::ConversationOptions{}, "nas"));
  ASSERT_TRUE(state.has_value());
  EXPECT_FALSE(conversations.take(now, as_bytes("not a state")).has_value());
  std::vector<std::unique_ptr<gateway::GatewayCounters>> workers;
  workers.push_back(std::make_unique<gateway::GatewayCounters>());
  workers.push_back(std::make_unique<gateway::GatewayCounters>());
  workers[0]->eap_accepts[gateway::eap_method_slot(4)].add(2);
  workers[1]->eap_accepts[gateway::eap_method_slot(4)].add(1);
  workers[1]->eap_rejects[gateway::eap_method_slot(0)].add(5);
  io::PrometheusText page;
  add_eap_metrics(page, conversations, workers);
  const std::string& text = page.text();
  for (const std::string line : {
           "radiusward_gateway_eap_conversations_total{event=\"started\"} 1\n",
           "radiusward_gateway_eap_conversations_total{event=\"refused\"} 1\n",
           "radiusward_gateway_eap_conversations_total{event=\"expired\"} 0\n",
           "radiusward_gateway_eap_conversations_active 1\n",
           "radiusward_gateway_eap_outcomes_total{method=\"EAP-MD5\",outcome=\"accept\"} 3\n",
           "radiusward_gateway_eap_outcomes_total{method=\"none\",outcome=\"reject\"} 5\n",
           "radiusward_gateway_eap_outcomes_total{method=\"EAP-TLS\",outcome=\"accept\"} 0\n",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line << text;
  }
}

// The admin thread sums a worker's rows while the worker counts and takes
// up reloads that each bring a new label: a count read never goes down, and
// under ThreadSanitizer (make tsan) nothing races.
TEST(GatewayMetrics, ClientCountsReadWhileAWorkerCountsAndReloadsNeverGoDown) {
  gateway::GatewayCounters worker;
  constexpr int kReloads = 200;
  constexpr int kPerReload = 100;
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int generation = 0; generation < kReloads; ++generation) {
      const std::vector<std::string> labels{"nas-" + std::to_string(generation), "nas-a"};
      const std::vector<gateway::ClientCounters*> rows = worker.clients.rows_for(labels);
      for (int i = 0; i < kPerReload; ++i) rows[1]->access_accepts.add();
    }
    done.store(true);
  });
  std::uint64_t last = 0;
  const auto read = [&] {
    std::map<std::string, gateway::ClientCounts, std::less<>> totals;
    totals.try_emplace("nas-a");
    worker.clients.add_counts_to(totals);
    const std::uint64_t now = totals["nas-a"].access_accepts;
    EXPECT_GE(now, last);
    last = now;
  };
  while (!done.load()) read();
  writer.join();
  read();
  EXPECT_EQ(last, std::uint64_t{kReloads} * kPerReload);
  EXPECT_EQ(worker.clients.size(), std::size_t{kReloads} + 1);
}

// /status's submission.oldest_pending_ms: the oldest pending record's wait
// as of the request, 0 with none pending (docs/admin_api.md).
TEST(GatewayStatus, ShowsHowLongTheOldestPendingRecordHasWaited) {
  submission::ForwarderStatus status;
  status.pending_records = 3;
  status.oldest_pending_accepted_at = Instant{5'000'000'000};
  const Instant started{1'000'000'000};
  auto body = gateway_status_json(&status, started, Instant{7'250'000'000});
  EXPECT_EQ(body["submission"]["oldest_pending_ms"], 2250);
  status.pending_records = 0;
  status.oldest_pending_accepted_at.reset();
  body = gateway_status_json(&status, started, Instant{7'250'000'000});
  EXPECT_EQ(body["submission"]["oldest_pending_ms"], 0);
}

}  // namespace
}  // namespace rw::gateway_shell
