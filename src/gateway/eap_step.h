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

// The methods a conversation of `state` is offered: EAP-MD5, built in, and
// the state's TLS-based ones (EapMethodSet). What a method keeps (`random`)
// must be usable from any thread: a conversation moves between workers and
// the pool.
class EapMethodFactory final : public eap::MethodFactory {
 public:
  explicit EapMethodFactory(RandomSource& random) : random_(random) {}
  // The state whose methods make() makes from now on; borrowed for as long.
  void set_state(const GatewayState* state) { state_ = state; }
  [[nodiscard]] std::unique_ptr<eap::Method> make(eap::Type type, std::string_view identity) override;

 private:
  RandomSource& random_;
  const GatewayState* state_ = nullptr;
};

// The inner users of PEAP and EAP-TTLS found as PAP finds its users: the
// users policy of the inner identity in `state`'s stores (decide_user),
// against the outer Access-Request's attributes. An SQL user not held in
// memory is not waited for inside a TLS step: it is unknown to that step
// (docs/authentication.md "EAP").
class StateInnerCredentials final : public InnerCredentialSource {
 public:
  // `request` null: the Access-Request does not parse (no check item holds).
  StateInnerCredentials(const GatewayState& state, const radius::Packet* request, UserStore* user_store)
      : state_(state), request_(request), user_store_(user_store) {}
  [[nodiscard]] std::optional<auth::Credential> find(std::string_view user_name) override;

 private:
  const GatewayState& state_;
  const radius::Packet* request_;
  UserStore* user_store_;
};

struct EapStepJob {
  // Set by the worker.
  EapConversations::Held held{};
  std::vector<std::uint8_t> response{};  // The reassembled EAP-Response.
  std::uint8_t response_identifier = 0;
  std::vector<eap::Type> offer{};  // The offer of the request (for a Nak).
  std::shared_ptr<const GatewayState> state{};
  std::vector<std::uint8_t> datagram{};  // The Access-Request, for the inner users' check items.
  UserStore* user_store = nullptr;
  RandomSource* random = nullptr;
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
