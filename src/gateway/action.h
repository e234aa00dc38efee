// The words between the dispatcher (RequestHandler) and the handlers of each
// request kind (Access, Accounting, Status-Server): a handler sees a
// RequestContext and says what is to be done with the request as an Action;
// the dispatcher carries it out (sends, drops and counts, parks the request
// in its one pending table and asks the sink, the user store or the crypt(3)
// pool). Handlers stay pure and never touch the pending table. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "accounting/record.h"
#include "base/assert.h"
#include "base/bytes.h"
#include "base/time.h"
#include "config/clients_file.h"
#include "gateway/access.h"
#include "gateway/datagram.h"
#include "gateway/gateway_state.h"
#include "gateway/reasons.h"
#include "radius/packet.h"

namespace rw::gateway {

// A verified request in hand, and where it came from. Views are valid for
// the call only.
struct RequestContext {
  Instant now;
  const Arrival& arrival;
  const Endpoint& from;
  const radius::Packet& packet;
  const GatewayState& state;  // The state `client` and `secret` belong to.
  const config::ClientDef& client;
  const radius::SharedSecret& secret;

  // The tenant of `client`: the users, policy and EAP methods that decide.
  [[nodiscard]] const TenantState& tenant() const { return state.tenant_of(client); }
  // Who may continue an EAP conversation `client` began: the client within its tenant.
  [[nodiscard]] std::string_view conversation_owner() const { return state.conversation_owner(client); }
};

// An Access-Request's decision, for the counters and the decision log.
struct Verdict {
  bool accepted = false;
  RejectReason reject = RejectReason::kUnknownUser;  // When not accepted.
  AcceptNote note = AcceptNote::kNone;               // When accepted.
  AuthMethod method = AuthMethod::kNone;
  std::string_view user_name;  // For EAP the decided identity.
  // EAP: an Access-Challenge (a round trip, not a decision), the EAP method
  // (eap::Type, 0 before one was chosen), and the request's User-Name
  // (the outer identity).
  bool challenge = false;
  std::uint8_t eap_type = 0;
  std::string_view outer_identity{};
  // The policy rule that decided (docs/policy.md); empty without a policy
  // or when authentication rejected. Points into the state's policy.
  std::string_view rule{};
  // The users entry that decided, for the audit log: its file ("sql" for
  // the SQL store) and line (0: no line); empty when no entry is recorded.
  std::string_view rule_file{};
  int rule_line = 0;
};

struct Action {
  enum class Kind : std::uint8_t {
    kReply,          // Send the `length` octets written into the reply buffer.
    kDrop,           // Send nothing; count `drop`. The NAS retransmits.
    kSubmit,         // Hand `record` (key `record_key`) to the accounting sink; wait for its commit.
    kLookup,         // Wait for the user store's answer for `name`.
    kVerify,         // Wait for the crypt(3) pool's verdict on `password` against `crypt_setting`.
    kCountSessions,  // Wait for the cluster's count of `name`'s sessions; the Access-Accept
                     // (`length` octets in the reply buffer) goes out below `limit`.
    kForward,        // Forward the request to the gateway `gateway` and relay its reply.
    kEapStep,        // Wait for the EAP pool to step the conversation (AccessHandler::take_eap_job).
  };
  Kind kind = Kind::kDrop;
  std::size_t length = 0;
  DropReason drop = DropReason::kMalformed;
  std::optional<Verdict> verdict{};  // kReply of an Access-Request.
  std::string_view name{};
  std::string_view crypt_setting{};
  std::string_view password{};
  std::uint32_t limit = 0;
  std::uint32_t gateway = 0;  // kForward: the gateway id the State names.
  const accounting::RecordKey* record_key = nullptr;
  Bytes record{};

  [[nodiscard]] static Action reply(std::size_t length, std::optional<Verdict> verdict = std::nullopt) {
    RW_ASSERT(length > 0);
    return Action{.kind = Kind::kReply, .length = length, .verdict = verdict};
  }
  [[nodiscard]] static Action dropped(DropReason reason) {
    return Action{.kind = Kind::kDrop, .drop = reason};
  }
};

}  // namespace rw::gateway
