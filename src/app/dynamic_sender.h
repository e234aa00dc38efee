// ctl's Disconnect/CoA sender (docs/operations.md "Disconnect and CoA"): one
// signed request per session to its NAS over UDP, retransmitted with doubling
// waits, every session's exchange in flight together, one outcome line per
// session in the order given.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "admin/dynamic_targets.h"
#include "base/time.h"
#include "radius/dictionary.h"
#include "radius/dynamic_authorization.h"

namespace rw::app {

struct SendOptions {
  int tries = 3;                               // 1..10
  Duration first_wait = Duration::seconds(1);  // doubles after each try: 1 s, 2 s, 4 s
};

struct SendOutcome {
  std::string line;           // "session … nas 192.0.2.10:3799 ACK"
  bool acknowledged = false;  // an ACK that verified
};

// Sends to every target that has a client (the others get their problem as
// their line) and waits for each one's answer or its last try's wait.
// Answers that do not verify (another secret, another request) are ignored
// and the wait goes on; the line of a session that then times out names
// the last one refused.
[[nodiscard]] std::vector<SendOutcome> send_dynamic_requests(radius::DynamicKind kind,
                                                             std::span<const admin::DynamicTarget> targets,
                                                             std::span<const radius::ChangeAttribute> changes,
                                                             const SendOptions& options,
                                                             const radius::Dictionary& dictionary);

}  // namespace rw::app
