// DecisionLog: formats a gateway::Decision for spdlog.
#include "gateway_shell/decision_log.h"

#include <spdlog/spdlog.h>

#include "io/socket_address.h"

namespace rw::gateway_shell {

void DecisionLog::on_decision(const gateway::Decision& decision) {
  if (!spdlog::should_log(spdlog::level::info)) return;
  const std::string_view method = gateway::method_name(decision.method, decision.eap_type);
  // EAP: the decided identity leads; the outer identity (the NAS's
  // User-Name) is logged when it differs (a tunnelled method's anonymous one).
  std::string outer;
  if (decision.method == gateway::AuthMethod::kEap && decision.outer_identity != decision.user_name) {
    outer = fmt::format(" (outer identity \"{}\")", decision.outer_identity);
  }
  // The policy rule that decided, when a policy is configured (docs/policy.md).
  const std::string_view open = decision.rule.empty() ? "" : " (rule ";
  const std::string_view close = decision.rule.empty() ? "" : ")";
  // The NAS's address and its client's tenant (docs/design.md "Tenants").
  const std::string from = decision.tenant.empty()
                               ? io::to_string(decision.from)
                               : fmt::format("{}, tenant {}", io::to_string(decision.from), decision.tenant);
  if (decision.accepted && decision.note == gateway::AcceptNote::kNone) {
    spdlog::info("Access-Accept for \"{}\"{} via {} from client {} ({}){}{}{}", decision.user_name, outer,
                 method, decision.client, from, open, decision.rule, close);
  } else if (decision.accepted) {
    // Accepted with a caveat, e.g. simultaneous_use_unavailable under the accept policy.
    spdlog::info("Access-Accept for \"{}\"{} via {} from client {} ({}): {}{}{}{}", decision.user_name, outer,
                 method, decision.client, from, decision.reason(), open, decision.rule, close);
  } else {
    spdlog::info("Access-Reject for \"{}\"{} via {} from client {} ({}): {}{}{}{}", decision.user_name, outer,
                 method, decision.client, from, decision.reason(), open, decision.rule, close);
  }
}

}  // namespace rw::gateway_shell
