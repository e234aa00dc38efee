// The one slot type of the dispatcher's pending table (TicketSlots): a
// request whose answer comes from another thread. Its kind says what it
// waits for; the same slot moves on when a waiting Access-Request needs
// something else (an SQL user, then a crypt(3) verdict, then a session
// count), keeping its ticket. Buffers grow on a slot's first use and are
// reused after: a warm slot allocates nothing. Pure.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "gateway/access.h"
#include "gateway/counters.h"
#include "gateway/duplicate_cache.h"
#include "gateway/explain.h"
#include "gateway/gateway_state.h"
#include "radius/attribute_crypto.h"

namespace rw::gateway {

enum class PendingKind : std::uint8_t {
  kRecord,        // An Accounting-Request waiting for its record's commit.
  kUserLookup,    // An Access-Request waiting for the SQL user store.
  kCryptCheck,    // An Access-Request waiting for the crypt(3) pool.
  kSessionCount,  // An accepted Access-Request waiting for its user's count of open sessions.
  kForward,       // An EAP follow-up waiting for the reply of the gateway it was forwarded to.
  kEapStep,       // An Access-Request whose EAP conversation the EAP pool is stepping.
  kCount,
};

struct PendingRequest {
  PendingKind kind = PendingKind::kRecord;
  RequestKey key{};  // Also the reply's destination and Identifier.
  Arrival arrival{};
  std::shared_ptr<const GatewayState> state{};  // Keeps `secret` and the client alive across a reload.
  const radius::SharedSecret* secret = nullptr;
  // The row its client counts in (counters.h), found on arrival: the request
  // is counted under that client's label even if a reload removed it.
  ClientCounters* client_counters = nullptr;
  ClientCounters* tenant_counters = nullptr;  // Its tenant's row: decisions by tenant.
  Instant deadline{};
  std::vector<std::uint8_t> proxy_states{};  // kRecord, kSessionCount: TLVs copied into the reply.

  // kRecord: the request had a Message-Authenticator, so does the reply.
  bool message_authenticator = false;

  // kUserLookup, kCryptCheck, kEapStep: the request itself, decided again with the
  // answer, and its User-Password as unhidden on arrival (wiped on release).
  std::vector<std::uint8_t> datagram{};
  std::array<char, radius::kMaxUserPasswordLength> password{};
  std::size_t password_length = 0;
  bool has_password = false;
  bool password_malformed = false;
  bool fetched = false;                                 // `fetched_user` holds the store's answer.
  std::shared_ptr<const auth::SqlUser> fetched_user{};  // Null: the database could not answer.

  // kSessionCount: what deciding the check needs.
  std::vector<std::uint8_t> accept{};  // The signed Access-Accept, sent below the limit.
  std::string_view client{};           // The client's shortname, in `state`.
  std::string_view tenant{};           // The client's tenant's name, in `state`.
  std::array<char, 253> user_name{};
  std::size_t user_name_length = 0;
  AuthMethod method = AuthMethod::kNone;
  std::uint8_t eap_type = 0;
  std::string_view rule{};  // The policy rule that accepted, in `state`'s policy.
  std::uint32_t limit = 0;

  // A followed request's trace while it waits (explain.h); null otherwise.
  std::shared_ptr<ExplainTrace> trace{};

  [[nodiscard]] std::string_view user() const { return {user_name.data(), user_name_length}; }
  [[nodiscard]] std::optional<std::string_view> plaintext() const {
    if (!has_password) return std::nullopt;
    return std::string_view(password.data(), password_length);
  }
};

}  // namespace rw::gateway
