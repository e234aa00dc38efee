// Deciding an Access-Request (RFC 2865 §4.1): the users policy gives the
// known good password and the reply items; the request's attributes say
// which method to check (PAP, CHAP, MS-CHAPv1, MS-CHAPv2, MAB). Pure.
#pragma once

#include <optional>
#include <string_view>

#include "auth/mschap.h"
#include "auth/users_policy.h"
#include "base/random.h"
#include "gateway/gateway_state.h"
#include "gateway/user_store.h"
#include "radius/packet.h"

namespace rw::gateway {

enum class AuthMethod : std::uint8_t { kNone, kPap, kChap, kMsChap1, kMsChap2, kMab, kEap };
std::string_view to_string(AuthMethod method);

// What was decided, and what the reply must carry beyond the users-file
// reply items. Views point into the request or the state.
struct AccessOutcome {
  bool accepted = false;
  AuthMethod method = AuthMethod::kNone;
  std::string_view user_name;
  std::string_view reason = "ok";  // Why rejected, for the decision log.
  auth::UsersDecision users;       // Reply items (on Accept; Reply-Message only on Reject).
  std::optional<auth::MsChap2Accept> ms_chap2;
  std::optional<auth::MsChap1Accept> ms_chap1;
  std::optional<auth::MsChapError> ms_chap_error;
  // Set when the SQL store decided: keeps the items `users` points at alive.
  std::shared_ptr<const auth::SqlUser> sql_user;
  // The SQL store could not answer in time: drop the request unanswered (the
  // NAS retransmits), never reject a user for a slow database.
  bool store_unavailable = false;
};

// Decides `request`. Requires: its Message-Authenticator was verified when
// required. `outcome` is cleared first; it is an out-parameter because it is
// large (the users decision holds fixed arrays) and reused per worker.
// `user_store` serves `sql` in the state's users_stores; null: SQL is skipped.
void decide_access(const GatewayState& state, const radius::Packet& request,
                   const radius::SharedSecret& secret, RandomSource& random, AccessOutcome& outcome,
                   UserStore* user_store = nullptr);

}  // namespace rw::gateway
