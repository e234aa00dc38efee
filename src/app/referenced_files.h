// WIRING POINT (for the lead): loading the files a gateway config names.
// `radiusward check` and `radiusward gateway` both call
// load_referenced_files(), so a users, clients or dictionary file that does
// not parse is refused by both with `file:line:col: message`.
#pragma once

#include <memory>

#include "base/result.h"
#include "config/gateway_config.h"
#include "gateway/datagram.h"

namespace rw::app {

// Everything loaded from the files the config names. Empty for now: the lead
// adds the dictionary, the users and the client table here once their
// loaders are merged.
struct LoadedFiles {};

// Loads the dictionary, users and clients files named by `config`. For now
// it only checks that they exist and are readable
// (config::check_referenced_files); the lead extends it to call the real
// loaders and collect all their errors.
[[nodiscard]] Result<LoadedFiles, config::ConfigErrors> load_referenced_files(
    const config::GatewayConfig& config);

// The handler factory the gateway's workers use. For now a
// DroppingHandlerFactory; the lead replaces it with the real one built from
// `config` and `files`.
[[nodiscard]] std::unique_ptr<gateway::DatagramHandlerFactory> make_handler_factory(
    const config::GatewayConfig& config, const LoadedFiles& files);

}  // namespace rw::app
