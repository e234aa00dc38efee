// The shorthands of method.h and the default of Method::on_credential.
#include "eap/method.h"

#include <utility>

namespace rw::eap {

MethodStep Method::on_credential(const auth::Credential* /*known_good*/) {
  return failure_step("the method asked for no password");
}

MethodStep request_step(std::vector<std::uint8_t> type_data) {
  MethodStep step;
  step.kind = MethodStep::Kind::kRequest;
  step.type_data = std::move(type_data);
  return step;
}

MethodStep credential_step() {
  MethodStep step;
  step.kind = MethodStep::Kind::kCredential;
  return step;
}

MethodStep success_step(std::optional<Msk> msk) {
  MethodStep step;
  step.kind = MethodStep::Kind::kSuccess;
  step.msk = msk;
  return step;
}

MethodStep failure_step(std::string reason, std::optional<auth::AuthError> error) {
  MethodStep step;
  step.kind = MethodStep::Kind::kFailure;
  step.reason = std::move(reason);
  step.auth_error = error;
  return step;
}

}  // namespace rw::eap
