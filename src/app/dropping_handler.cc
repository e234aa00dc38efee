// The placeholder handler: answers nothing.
#include "app/dropping_handler.h"

namespace rw::app {
namespace {

class DroppingHandler final : public gateway::DatagramHandler {
 public:
  std::size_t on_datagram(Instant, gateway::Listener, const gateway::Endpoint&, Bytes,
                          MutableBytes) override {
    return 0;
  }
  void on_tick(Instant) override {}
};

}  // namespace

std::unique_ptr<gateway::DatagramHandler> DroppingHandlerFactory::make_handler(int) {
  return std::make_unique<DroppingHandler>();
}

}  // namespace rw::app
