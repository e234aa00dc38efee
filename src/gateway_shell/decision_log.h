// The decision log: one line per Access-Request decision at info level
// (docs/design.md "Interfaces an operator sees"), written by the worker thread
// that decided it.
#pragma once

#include <vector>

#include "gateway/request_handler.h"

namespace rw::gateway_shell {

class DecisionLog final : public gateway::DecisionObserver {
 public:
  void on_decision(const gateway::Decision& decision) override;
};

// Hands each decision to several observers in the order added (the decision
// log, then the audit log). Requires: every add() before the workers start.
class DecisionObservers final : public gateway::DecisionObserver {
 public:
  void add(gateway::DecisionObserver* observer) { observers_.push_back(observer); }
  void on_decision(const gateway::Decision& decision) override {
    for (gateway::DecisionObserver* observer : observers_) observer->on_decision(decision);
  }

 private:
  std::vector<gateway::DecisionObserver*> observers_;
};

}  // namespace rw::gateway_shell
