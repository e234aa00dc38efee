// The severity of a consensus log line, shared by Node and the TLS transport
// so that both report through the one sink NodeOptions::log.
#pragma once

namespace rw::consensus {

enum class LogLevel { kDebug, kInfo, kWarning, kError };

}  // namespace rw::consensus
