// Authorization after authentication (docs/policy.md "Semantics"): the MAB
// allow and deny lists, then the first policy rule that matches decides
// whether an authenticated Access-Request is accepted, and what its reply
// carries besides the users-file items. Pure; allocates nothing.
#pragma once

#include "base/bytes.h"
#include "gateway/access.h"
#include "gateway/gateway_state.h"
#include "radius/packet.h"

namespace rw::gateway {

// Applies the state's policy, if any, to a decided `outcome` (nothing is
// awaited). A MAC on the deny list is rejected; an unlisted MAC on the allow
// list is accepted; then an accepted request goes through the rules, which
// may reject it (kPolicyReject) or add reply attributes. Sets outcome.rule
// to the rule that decided. A request authentication rejected stays as it is.
void authorize(const GatewayState& state, const radius::Packet& request, const AccessInputs& inputs,
               AccessOutcome& outcome);

// The policy's view of `method`.
[[nodiscard]] policy::Method policy_method(AuthMethod method);

// Whether the policy reply `reply` sets `def` (the VLAN triple,
// Session-Timeout, Filter-Id, Reply-Message): the users-file item of the same
// attribute is then left out of the reply, so the policy wins.
[[nodiscard]] bool policy_sets(const policy::Reply* reply, const radius::AttributeDef& def);

// Adds the policy's reply attributes: on an Access-Accept the RFC 3580 §3.31
// VLAN triple (tag 1), Session-Timeout, Filter-Id and Reply-Message; on an
// Access-Reject only Reply-Message (RFC 2865 §5.44).
void add_policy_reply(radius::PacketBuilder& builder, const policy::Reply& reply, bool accepted);

}  // namespace rw::gateway
