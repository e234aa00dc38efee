// Deciding an Access-Request (RFC 2865 §4.1): the users policy gives the
// known good password and the reply items; the request's attributes say
// which method to check (PAP, CHAP, MS-CHAPv1, MS-CHAPv2, MAB). A decision
// that needs an SQL lookup or a slow crypt(3) check says so and is made
// again with the answer (AccessHandler parks the request meanwhile). Pure.
#pragma once

#include <optional>
#include <string_view>

#include "auth/mab.h"
#include "auth/mschap.h"
#include "auth/users_policy.h"
#include "base/random.h"
#include "gateway/datagram.h"
#include "gateway/gateway_state.h"
#include "gateway/reasons.h"
#include "gateway/user_store.h"
#include "policy/policy.h"
#include "radius/packet.h"

namespace rw::gateway {

enum class AuthMethod : std::uint8_t { kNone, kPap, kChap, kMsChap1, kMsChap2, kMab, kEap };
std::string_view to_string(AuthMethod method);

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
  // The authorization policy's part (docs/policy.md): the rule that decided
  // (empty without a policy, or when authentication already rejected) and
  // what it adds to the reply; both point into the state's policy.
  std::string_view rule;
  const policy::Reply* policy_reply = nullptr;
};

// Decides `request`. Requires: its Message-Authenticator was verified when
// required. `outcome` is cleared first; it is an out-parameter because it is
// large (the users decision holds fixed arrays) and reused per worker.
void decide_access(const GatewayState& state, const radius::Packet& request, const AccessInputs& inputs,
                   RandomSource& random, AccessOutcome& outcome);

}  // namespace rw::gateway
