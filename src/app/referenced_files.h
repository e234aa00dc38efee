// Loading what a gateway config names — dictionaries, clients, users — into
// the immutable GatewayState, and the handler factory built on it. Shared by
// `radiusward gateway` and `radiusward check`, so that check refuses exactly
// what the gateway would refuse.
#pragma once

#include <memory>

#include "base/random.h"
#include "base/result.h"
#include "config/gateway_config.h"
#include "gateway/datagram.h"
#include "gateway/gateway_state.h"
#include "gateway/request_handler.h"

namespace rw::app {

struct LoadedFiles {
  std::shared_ptr<const gateway::GatewayState> state;
};

// Loads every file `config` names and builds the gateway state. Collects
// the errors of every file (each as file:line:col: message) rather than
// stopping at the first.
[[nodiscard]] Result<LoadedFiles, config::ConfigErrors> load_referenced_files(
    const config::GatewayConfig& config);

// The workers' handler factory. `random` and `observer` must outlive it.
[[nodiscard]] std::unique_ptr<gateway::RequestHandlerFactory> make_handler_factory(
    const LoadedFiles& files, RandomSource& random, gateway::DecisionObserver* observer);

}  // namespace rw::app
