// The decision log: one line per Access-Request decision at info level
// (docs/design.md "Interfaces an operator sees"), written by the worker thread
// that decided it.
#pragma once

#include "gateway/request_handler.h"

namespace rw::gateway_shell {

class DecisionLog final : public gateway::DecisionObserver {
 public:
  void on_decision(const gateway::Decision& decision) override;
};

}  // namespace rw::gateway_shell
