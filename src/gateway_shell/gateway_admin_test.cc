// The gateway's /metrics page: drop and reject reasons are counted by their
// closed enums and shown under the names the decision log uses.
#include "gateway_shell/gateway_admin.h"

#include <gtest/gtest.h>

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
  io::PrometheusText page;
  add_handler_metrics(page, workers);
  const std::string& text = page.text();
  for (const std::string line :
       {"radiusward_gateway_requests_total{code=\"Access-Request\",outcome=\"accept\"} 7\n",
        "radiusward_gateway_requests_total{code=\"Access-Request\",outcome=\"reject\"} 3\n",
        "radiusward_gateway_requests_total{code=\"Accounting-Request\",outcome=\"response\"} 11\n",
        "radiusward_gateway_requests_total{code=\"Status-Server\",outcome=\"answered\"} 1\n",
        "radiusward_gateway_retransmissions_answered_total 4\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << text;
  }
}

}  // namespace
}  // namespace rw::gateway_shell
