// Logging setup: spdlog's default logger writes one line per event to
// stderr, as text or as JSON objects, at the configured level
// (docs/operations.md). Pure folders never log; the shell does.
#pragma once

#include <string>

#include "config/gateway_config.h"

namespace rw::io {

// Replaces spdlog's default logger. Call once at start, before threads.
void setup_logging(const config::GatewayConfig::Logging& logging);

// Escapes `text` for a JSON string (without the quotes): quote, backslash
// and control characters; other bytes pass through unchanged.
[[nodiscard]] std::string json_escape(std::string_view text);

}  // namespace rw::io
