// DroppingHandlerFactory: a placeholder DatagramHandlerFactory whose handlers
// drop every datagram, so that `radiusward gateway` runs end to end (sockets,
// workers, signals, counters) before the gateway's request handling exists.
// TO BE REPLACED by the lead with the real gateway handler factory.
#pragma once

#include <memory>

#include "gateway/datagram.h"

namespace rw::app {

class DroppingHandlerFactory final : public gateway::DatagramHandlerFactory {
 public:
  [[nodiscard]] std::unique_ptr<gateway::DatagramHandler> make_handler(int worker_index) override;
};

}  // namespace rw::app
