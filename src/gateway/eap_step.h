// One step of a TLS-based EAP conversation (EAP-TLS, PEAP, EAP-TTLS) run
// away from the thread that received the request: a TLS handshake costs
// milliseconds of CPU, and a burst of them on a UDP worker or the RadSec
// thread would stall PAP, MAB and accounting behind it. The worker takes
// the conversation out of the shared table (so no other thread steps it),
// parks the request and hands an EapStepJob to an EapStepper (the shell's
// pool, gateway_shell/eap_pool.h); the pool calls run() and posts the job
// back as an Answer of kind kEapStep; the worker decides the request again
// with the step, which puts the conversation back or ends it. Pure.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "base/random.h"
#include "eap/conversation.h"
#include "eap/eap_message.h"
#include "gateway/datagram.h"
#include "gateway/eap_conversations.h"
#include "gateway/gateway_state.h"
#include "gateway/user_store.h"

namespace rw::gateway {

// The methods a conversation of a tenant is offered: EAP-MD5, built in, and
// the tenant's TLS-based ones (EapMethodSet, with its certificates and CA). What a method keeps (`random`)
// must be usable from any thread: a conversation moves between workers and
// the pool.
class EapMethodFactory final : public eap::MethodFactory {
 public:
  explicit EapMethodFactory(RandomSource& random) : random_(random) {}
  // The tenant whose methods make() makes from now on; borrowed for as long.
  void set_tenant(const TenantState* tenant) { tenant_ = tenant; }
  [[nodiscard]] std::unique_ptr<eap::Method> make(eap::Type type, std::string_view identity) override;

 private:
  RandomSource& random_;
  const TenantState* tenant_ = nullptr;
};

// Waits, on the thread that steps a conversation, for the SQL store to
// hold a user an inner method asks for (the shell's EAP pool: it asks the
// store to fetch the user and waits up to sql_users.miss_wait). A TLS step
// cannot be parked half-way like a PAP request: the peer's response is
// consumed by then.
class InnerUserWait {
 public:
  virtual ~InnerUserWait() = default;
  // True once `store` holds `user_name` in memory (known or not).
  [[nodiscard]] virtual bool wait_for(UserStore& store, std::string_view user_name) = 0;
};

// The inner users of PEAP and EAP-TTLS found as PAP finds its users: the
// users policy of the inner identity in the stores of `client`'s tenant
// (decide_user; never another tenant's),
// against the outer Access-Request's attributes. An SQL user not held in
// memory is waited for through `wait` (null: it is unknown to the step).
class StateInnerCredentials final : public InnerCredentialSource {
 public:
  // `request` null: the Access-Request does not parse (no check item holds).
  StateInnerCredentials(const GatewayState& state, const config::ClientDef& client,
                        const radius::Packet* request, UserStore* user_store, InnerUserWait* wait)
      : state_(state), client_(client), request_(request), user_store_(user_store), wait_(wait) {}
  [[nodiscard]] std::optional<auth::Credential> find(std::string_view user_name) override;

 private:
  const GatewayState& state_;
  const config::ClientDef& client_;
  const radius::Packet* request_;
  UserStore* user_store_;
  InnerUserWait* wait_;
};

struct EapStepJob {
  // Set by the worker.
  EapConversations::Held held{};
  std::vector<std::uint8_t> response{};  // The reassembled EAP-Response.
  std::uint8_t response_identifier = 0;
  std::vector<eap::Type> offer{};  // The offer of the request (for a Nak).
  std::shared_ptr<const GatewayState> state{};
  // The NAS's client entry in `state` (which the job keeps alive): its
  // tenant's users answer the inner identity.
  const config::ClientDef* client = nullptr;
  std::vector<std::uint8_t> datagram{};  // The Access-Request, for the inner users' check items.
  UserStore* user_store = nullptr;
  RandomSource* random = nullptr;
  // Set by the stepper: how an inner SQL user is waited for (null: not).
  InnerUserWait* wait = nullptr;
  // Set by run(): the step, whose packet is in `out`.
  bool stepped = false;
  eap::Step step{};
  std::array<std::uint8_t, eap::kEapPacketBytesMax> out{};

  // Steps the held conversation with `response`. Any thread; once.
  void run();
};

// Runs EapStepJobs off the calling thread (gateway_shell/eap_pool.h).
class EapStepper {
 public:
  virtual ~EapStepper() = default;
  // Queues `job`; its Answer comes back for `ticket`. False when the queue
  // is full: the caller puts the conversation back and drops the request
  // (the NAS retransmits).
  [[nodiscard]] virtual bool step(std::shared_ptr<EapStepJob> job, Ticket ticket) = 0;
};

}  // namespace rw::gateway
