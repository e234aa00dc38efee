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
// and control characters as JSON escapes; each byte that is not part of
// well-formed UTF-8 as `\ufffd` (U+FFFD), so every line is valid JSON.
[[nodiscard]] std::string json_escape(std::string_view text);

// Escapes `text` for one line of the text log (docs/security.md "Logs"):
// bytes below 0x20, 0x7f and bytes that are not part of well-formed UTF-8
// become `\xNN` (a newline is `\x0a`), and a backslash becomes `\\`, so a
// User-Name can neither forge a line nor pass for an escape. Well-formed
// UTF-8 passes unchanged.
[[nodiscard]] std::string text_escape(std::string_view text);

}  // namespace rw::io
