// WIRING POINT (for the lead): see referenced_files.h.
#include "app/referenced_files.h"

#include <spdlog/spdlog.h>

#include "app/dropping_handler.h"

namespace rw::app {

Result<LoadedFiles, config::ConfigErrors> load_referenced_files(const config::GatewayConfig& config) {
  config::ConfigErrors errors = config::check_referenced_files(config);
  if (!errors.empty()) return fail(std::move(errors));
  return LoadedFiles{};
}

std::unique_ptr<gateway::DatagramHandlerFactory> make_handler_factory(const config::GatewayConfig&,
                                                                      const LoadedFiles&) {
  spdlog::warn("request handling is not wired in yet: every datagram is dropped");
  return std::make_unique<DroppingHandlerFactory>();
}

}  // namespace rw::app
