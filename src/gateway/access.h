// Deciding an Access-Request (RFC 2865 §4.1): the users policy gives the
// known good password and the reply items; the request's attributes say
// which method to check (PAP, CHAP, MS-CHAPv1, MS-CHAPv2, MAB). A decision
// that needs an SQL lookup or a slow crypt(3) check says so and is made
// again with the answer (AccessHandler parks the request meanwhile). Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "auth/mab.h"
#include "auth/mschap.h"
#include "auth/users_policy.h"
#include "base/random.h"
#include "eap/method.h"
#include "eap/state.h"
#include "gateway/datagram.h"
#include "gateway/eap_forward.h"
#include "gateway/gateway_state.h"
#include "gateway/reasons.h"
#include "gateway/user_store.h"
#include "policy/policy.h"
#include "radius/packet.h"

namespace rw::gateway {

enum class AuthMethod : std::uint8_t { kNone, kPap, kChap, kMsChap1, kMsChap2, kMab, kEap };
std::string_view to_string(AuthMethod method);
// The method as the decision log and the explain log name it: to_string(method),
// or for EAP the EAP method ("EAP-MD5", "EAP-TLS", "EAP-TTLS", "PEAP"), "EAP"
// before one was chosen (or for another Type).
[[nodiscard]] std::string_view method_name(AuthMethod method, std::uint8_t eap_type);

// What deciding needs besides the packet. A request is decided once, or,
// when it had to wait for SQL or the crypt(3) pool, again with the answer.
struct AccessInputs {
  // The User-Password's plaintext (RFC 2865 §5.2 padding removed), unhidden
  // once per request by the caller; none when the request has none.
  std::optional<std::string_view> password;
  // The request has a User-Password that cannot be unhidden.
  bool password_malformed = false;
  // Serves `sql` in the state's users_stores; null: SQL is skipped.
  UserStore* user_store = nullptr;
  // The store's answer for this request, once fetched (null user: the
  // database could not answer); null pointer: ask `user_store`.
  const std::shared_ptr<const auth::SqlUser>* fetched_user = nullptr;
  // crypt(3) checks are handed to a pool (need = kCryptCheck) rather than
  // run on the calling thread.
  bool crypt_elsewhere = false;
  // The pool's verdict for this request, once it came.
  const Answer* crypt_verdict = nullptr;
  // Where an EAP follow-up for a peer gateway's conversation goes
  // (eap.forward); null: such a request is refused.
  const EapForwardSink* forwarder = nullptr;
  // Steps of TLS-based EAP methods are handed to a pool (need = kEapStep)
  // rather than run on the calling thread.
  bool eap_elsewhere = false;
  // The pool's step for this request, once it came (it holds the conversation).
  EapStepJob* eap_stepped = nullptr;
  // Where and when the request came from, for the authorization policy
  // (docs/policy.md); AccessHandler::decide sets them. Null client: no
  // policy conditions on the NAS hold.
  const config::ClientDef* client = nullptr;
  std::optional<Endpoint> from{};
  std::int64_t unix_ms = 0;
};

// What a decision is still waiting for.
enum class AccessNeed : std::uint8_t {
  kNothing,     // Decided: accepted or rejected.
  kUserLookup,  // The SQL store does not hold `lookup_name` in memory: fetch it.
  kCryptCheck,  // The password must be checked against `crypt_setting` by the pool.
  kEapStep,     // The EAP pool must step the conversation `eap_job` holds.
};

// What the reply to an Access-Request with EAP-Message carries (RFC 3579
// §2.6): set by EapHandler (eap_handler.h).
struct EapReply {
  bool active = false;     // The request was decided as EAP.
  bool challenge = false;  // An Access-Challenge: neither accepted nor rejected yet.
  Bytes packet{};          // The EAP packet for EAP-Message; empty: none (a request that did not parse).
  std::optional<eap::StateBytes> state{};  // The State of an Access-Challenge.
  std::optional<eap::Msk> msk{};           // An accepted key-deriving method's: the MS-MPPE keys.
  std::uint8_t type = 0;                   // The EAP method (eap::Type); 0 before one was chosen.
  std::string_view outer_identity{};       // The request's User-Name (the NAS's copy of the EAP-Identity).
  std::optional<DropReason> drop{};        // Send nothing: count this.
  Duration session_timeout{};              // An Access-Challenge's Session-Timeout.
  // The State names this other gateway: the request is refused unless it
  // can be forwarded there (docs/design.md "EAP across several gateways").
  std::optional<std::uint32_t> forward_to{};
  // EAP-TLS: the verified client certificate's subject CN and issuer, for
  // the authorization policy; empty otherwise.
  std::string_view cert_subject_cn{};
  std::string_view cert_issuer{};
};

// What was decided, and what the reply must carry beyond the users-file
// reply items. Views point into the request, the state or the outcome.
struct AccessOutcome {
  bool accepted = false;
  AuthMethod method = AuthMethod::kNone;
  std::string_view user_name;
  RejectReason reject = RejectReason::kUnknownUser;  // Why rejected (when not accepted).
  AcceptNote note = AcceptNote::kNone;               // Why accepted without a check.
  auth::UsersDecision users;                         // Reply items (on Accept; Reply-Message only on Reject).
  // The users file `users` indexes into (the gateway's, or the SQL user's);
  // null when the policy did not run.
  const config::UsersFile* users_file = nullptr;
  std::optional<auth::MsChap2Accept> ms_chap2;
  std::optional<auth::MsChap1Accept> ms_chap1;
  std::optional<auth::MsChapError> ms_chap_error;
  // Set when the SQL store decided: keeps the items `users` points at alive.
  std::shared_ptr<const auth::SqlUser> sql_user;
  // The SQL store could not answer: drop the request unanswered (the NAS
  // retransmits), never reject a user for a slow database.
  bool store_unavailable = false;
  AccessNeed need = AccessNeed::kNothing;
  std::string_view lookup_name;    // kUserLookup: the name to fetch (the canonical MAC for MAB).
  std::string_view crypt_setting;  // kCryptCheck: the stored crypt(3) string, in the state or `sql_user`.
  auth::MacText mac_text{};        // Storage of a canonical MAC `lookup_name` may point at.
  EapReply eap{};
  // kEapStep: the step to run elsewhere; it holds the conversation, which
  // goes back to the table whatever becomes of the job.
  std::shared_ptr<EapStepJob> eap_job{};
  // The authorization policy's part (docs/policy.md): the rule that decided
  // (empty without a policy, or when authentication already rejected) and
  // what it adds to the reply; both point into the state's policy.
  std::string_view rule;
  const policy::Reply* policy_reply = nullptr;
};

// The tenant whose users, policy and EAP methods decide a request: its
// client's (docs/design.md "Tenants"); `default` without a client (tools).
[[nodiscard]] inline const TenantState& tenant_of(const GatewayState& state, const AccessInputs& inputs) {
  return inputs.client != nullptr ? state.tenant_of(*inputs.client) : state.tenants().front();
}

// Decides `request`. Requires: its Message-Authenticator was verified when
// required. `outcome` is cleared first; it is an out-parameter because it is
// large (the users decision holds fixed arrays) and reused per worker.
void decide_access(const GatewayState& state, const radius::Packet& request, const AccessInputs& inputs,
                   RandomSource& random, AccessOutcome& outcome);

// Resets `outcome` to "rejected, unknown user, nothing waited for".
void clear_outcome(AccessOutcome& outcome);

// The users policy for `lookup_name` (an EAP method's decided identity),
// as decide_access applies it before checking a password: the first store
// that knows the user, its check items against `request`, Auth-Type.
// Returns the known good password to check when `password_needed`; null
// when `outcome` is decided (accepted by Auth-Type := Accept, or, without
// `password_needed`, by the policy alone; rejected) or waits (need,
// store_unavailable). `outcome` keeps its method, user_name and eap.
[[nodiscard]] const auth::Credential* decide_user(const GatewayState& state, const radius::Packet& request,
                                                  const AccessInputs& inputs, std::string_view lookup_name,
                                                  bool password_needed, AccessOutcome& outcome);

}  // namespace rw::gateway
