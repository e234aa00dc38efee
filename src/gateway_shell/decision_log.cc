// DecisionLog: formats a gateway::Decision for spdlog.
#include "gateway_shell/decision_log.h"

#include <spdlog/spdlog.h>

#include "io/socket_address.h"

namespace rw::gateway_shell {

void DecisionLog::on_decision(const gateway::Decision& decision) {
  if (!spdlog::should_log(spdlog::level::info)) return;
  // The policy rule that decided, when a policy is configured (docs/policy.md).
  const std::string_view open = decision.rule.empty() ? "" : " (rule ";
  const std::string_view close = decision.rule.empty() ? "" : ")";
  if (decision.accepted && decision.note == gateway::AcceptNote::kNone) {
    spdlog::info("Access-Accept for \"{}\" via {} from client {} ({}){}{}{}", decision.user_name,
                 gateway::to_string(decision.method), decision.client, io::to_string(decision.from), open,
                 decision.rule, close);
  } else if (decision.accepted) {
    // Accepted with a caveat, e.g. simultaneous_use_unavailable under the accept policy.
    spdlog::info("Access-Accept for \"{}\" via {} from client {} ({}): {}{}{}{}", decision.user_name,
                 gateway::to_string(decision.method), decision.client, io::to_string(decision.from),
                 decision.reason(), open, decision.rule, close);
  } else {
    spdlog::info("Access-Reject for \"{}\" via {} from client {} ({}): {}{}{}{}", decision.user_name,
                 gateway::to_string(decision.method), decision.client, io::to_string(decision.from),
                 decision.reason(), open, decision.rule, close);
  }
}

}  // namespace rw::gateway_shell
