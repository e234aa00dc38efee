// Exit statuses of every radiusward command (docs/operations.md).
#pragma once

namespace rw::app {

inline constexpr int kExitOk = 0;
// A runtime failure: a port in use, a thread that could not start, or a fatal
// error of the environment after start.
inline constexpr int kExitRuntimeFailure = 1;
// The configuration or the command line is wrong; nothing was started.
inline constexpr int kExitConfigError = 2;
// `radiusward ctl status`: the process answered and is unhealthy
// (docs/admin_api.md "Health").
inline constexpr int kExitUnhealthy = 3;
// `radiusward ctl reload`: the process answered and rejected the new
// configuration; the old one stays in effect (docs/operations.md "Reload").
inline constexpr int kExitReloadRejected = 4;
// `radiusward ctl disconnect` and `ctl coa`: no session matches the filter,
// so nothing was sent.
inline constexpr int kExitNoSession = 5;
// `radiusward ctl disconnect` and `ctl coa`: at least one NAS answered NAK,
// did not answer, or could not be sent to (docs/operations.md "Disconnect and CoA").
inline constexpr int kExitNotAcknowledged = 6;
// `radiusward audit verify`: a file's chain is broken: edited, missing,
// reordered or torn lines, or a wrong key (docs/operations.md "Audit log").
inline constexpr int kExitAuditBroken = 7;

}  // namespace rw::app
