// Which changes of a gateway config a reload cannot apply: the keys that
// shape sockets, threads, connections and the log take effect only at start
// (docs/operations.md "Reload"). A reload that changes one is rejected, with
// the key's position, rather than applied in part. Pure.
#pragma once

#include "config/gateway_config.h"

namespace rw::config {

// One error per top-level key whose value differs between `running` and
// `next` and that needs a restart: listen, auth_port, acct_port, workers,
// share_ports, admin_socket, logging, duplicate_window_ms, accounting and
// sql_users. Each points at the key in `next` (at the file when the key was
// removed) and says "needs a restart". Positions alone never count as changes.
[[nodiscard]] ConfigErrors gateway_restart_changes(const GatewayConfig& running, const GatewayConfig& next);

}  // namespace rw::config
