// Builders of eap::MethodStep for the TLS-based methods. method.h's
// MethodStep has members without default initialisers, so steps are built
// by assignment rather than with designated initialisers (which would
// leave -Wmissing-field-initializers to warn).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "eap/method.h"

namespace rw::eap {

inline MethodStep request_step(std::vector<std::uint8_t> type_data) {
  MethodStep step;
  step.kind = MethodStep::Kind::kRequest;
  step.type_data = std::move(type_data);
  return step;
}

inline MethodStep failure_step(std::string reason) {
  MethodStep step;
  step.kind = MethodStep::Kind::kFailure;
  step.reason = std::move(reason);
  return step;
}

inline MethodStep success_step(std::optional<Msk> msk) {
  MethodStep step;
  step.kind = MethodStep::Kind::kSuccess;
  step.msk = msk;
  return step;
}

}  // namespace rw::eap
