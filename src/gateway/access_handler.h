// The Access-Request handler (RFC 2865 §4.1-4.3): decides the request from
// the users policy (decide_access), builds the signed Access-Accept or
// Access-Reject with the users-file reply items and the MS-CHAP results, and
// decides Simultaneous-Use checks (docs/authentication.md). It says what it
// waits for (an SQL user, a crypt(3) verdict, a session count) as an Action;
// the dispatcher parks the request and calls again with the answer. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "base/random.h"
#include "gateway/access.h"
#include "gateway/action.h"
#include "gateway/duplicate_cache.h"
#include "gateway/eap_conversations.h"
#include "gateway/eap_handler.h"

namespace rw::gateway {

// What deciding a Simultaneous-Use check needs, from a pending slot or from
// the request at hand.
struct SessionCheckView {
  const RequestKey& key;
  const radius::SharedSecret& secret;
  SimultaneousUseUnavailable policy;
  std::string_view user_name;
  AuthMethod method;
  std::uint8_t eap_type = 0;  // The EAP method of an EAP accept, else 0.
  std::uint32_t limit;
  Bytes proxy_states;       // Wire TLVs, copied into a reject.
  Bytes accept;             // The signed Access-Accept, sent below the limit.
  std::string_view rule{};  // The policy rule that accepted, for the verdict.
};

class AccessHandler {
 public:
  // Requires: `random` outlives the handler; a CSPRNG in production (salts,
  // MS-CHAP challenges).
  explicit AccessHandler(RandomSource& random) : random_(random), eap_(random) {}

  // Access-Requests with EAP-Message go on in `conversations` (shared by
  // every worker of the gateway, which outlives the handler) when the
  // state's eap methods are not empty; null: EAP is not served.
  void set_eap_conversations(EapConversations* conversations) { conversations_ = conversations; }
  // See EapHandler::set_methods.
  void set_eap_methods(eap::MethodFactory* factory) { eap_.set_methods(factory); }

  // Decides `request` given `inputs`. kReply and kDrop are final; kLookup and
  // kVerify ask to be called again with the answer in `inputs`;
  // kCountSessions leaves the Access-Accept in `reply` for decide_check.
  [[nodiscard]] Action decide(const RequestContext& request, const AccessInputs& inputs, MutableBytes reply);

  // The reply of a Simultaneous-Use check given the count (none: the cluster
  // could not count): the Access-Accept below the limit, an Access-Reject
  // with FreeRADIUS's Reply-Message at or above it, the
  // simultaneous_use_unavailable policy without a count.
  [[nodiscard]] Action decide_check(const SessionCheckView& check, std::optional<std::uint32_t> open_sessions,
                                    MutableBytes reply) const;

  // decide_check for the request at hand, whose Access-Accept of
  // `accept_length` octets is in `reply`, for a check that cannot be asked.
  [[nodiscard]] Action decide_check_now(const RequestContext& request, std::uint32_t limit,
                                        std::size_t accept_length, std::optional<std::uint32_t> open_sessions,
                                        MutableBytes reply);

  // The last decision; valid until the next decide().
  [[nodiscard]] const AccessOutcome& outcome() const { return outcome_; }
  // The EAP step the last decision handed off (Action::Kind::kEapStep); the
  // caller queues it or puts its conversation back.
  [[nodiscard]] std::shared_ptr<EapStepJob> take_eap_job() { return std::move(outcome_.eap_job); }
  // What the EAP handler did with the last EAP request, in words.
  [[nodiscard]] std::string_view eap_note() const { return eap_.note(); }

 private:
  [[nodiscard]] std::size_t build_reply(const RequestContext& request, MutableBytes reply);

  // The Verdict of the decision in `outcome_`.
  [[nodiscard]] Verdict verdict() const;

  RandomSource& random_;
  EapHandler eap_;
  EapConversations* conversations_ = nullptr;
  AccessOutcome outcome_;
  std::vector<std::uint8_t> proxy_scratch_;  // A request's Proxy-State TLVs, for an immediate reject.
};

}  // namespace rw::gateway
