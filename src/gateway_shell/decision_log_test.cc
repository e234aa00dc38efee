// The decision log's text lines: a User-Name with control bytes cannot forge
// a line (docs/security.md "Logs").
#include "gateway_shell/decision_log.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "io/logging.h"

namespace rw::gateway_shell {
namespace {

TEST(DecisionLog, AUserNameWithANewlineIsOneLine) {
  config::GatewayConfig::Logging logging;
  logging.format = config::LogFormat::kText;
  logging.level = config::LogLevel::kInfo;
  io::setup_logging(logging);
  ::testing::internal::CaptureStderr();
  DecisionLog log;
  log.on_decision(
      {.now = {},
       .from = {},
       .client = "nas1",
       .user_name = "bob\" via PAP from client nas1 (127.0.0.1:1)\nFAKE Access-Accept for \"admin",
       .method = gateway::AuthMethod::kPap,
       .accepted = false,
       .reject = gateway::RejectReason::kUnknownUser});
  spdlog::default_logger()->flush();
  const std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_NE(out.find("(127.0.0.1:1)\\x0aFAKE"), std::string::npos) << out;
}

TEST(DecisionLog, AnEapLineNamesTheMethodAndADifferentOuterIdentity) {
  config::GatewayConfig::Logging logging;
  logging.format = config::LogFormat::kText;
  logging.level = config::LogLevel::kInfo;
  io::setup_logging(logging);
  ::testing::internal::CaptureStderr();
  DecisionLog log;
  log.on_decision({.now = {},
                   .from = {},
                   .client = "switch1",
                   .user_name = "alice",
                   .method = gateway::AuthMethod::kEap,
                   .eap_type = 4,
                   .outer_identity = "alice",
                   .accepted = true});
  log.on_decision({.now = {},
                   .from = {},
                   .client = "ap1",
                   .user_name = "alice",
                   .method = gateway::AuthMethod::kEap,
                   .eap_type = 25,
                   .outer_identity = "anonymous",
                   .accepted = false,
                   .reject = gateway::RejectReason::kWrongPassword});
  spdlog::default_logger()->flush();
  const std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find("Access-Accept for \"alice\" via EAP-MD5 from client switch1"), std::string::npos)
      << out;
  EXPECT_NE(out.find("Access-Reject for \"alice\" (outer identity \"anonymous\") via PEAP from client ap1"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(": wrong_password"), std::string::npos) << out;
}

}  // namespace
}  // namespace rw::gateway_shell
