// EapStepJob: a step of a TLS-based EAP conversation, on whichever thread runs it.
#include "gateway/eap_step.h"

#include "base/assert.h"
#include "eap/md5_method.h"
#include "eap/packet.h"
#include "gateway/access.h"

namespace rw::gateway {

std::unique_ptr<eap::Method> EapMethodFactory::make(eap::Type type, std::string_view identity) {
  if (type == eap::Type::kMd5Challenge) return std::make_unique<eap::Md5Method>(identity, random_);
  if (tenant_ == nullptr || tenant_->eap_methods() == nullptr) return nullptr;
  return tenant_->eap_methods()->make(type, identity, random_);
}

std::optional<auth::Credential> StateInnerCredentials::find(std::string_view user_name) {
  if (request_ == nullptr) return std::nullopt;
  // Large (the users decision holds fixed arrays), and once per conversation.
  auto outcome = std::make_unique<AccessOutcome>();
  clear_outcome(*outcome);
  AccessInputs inputs;
  inputs.user_store = user_store_;
  inputs.client = &client_;
  const auth::Credential* credential =
      decide_user(state_, *request_, inputs, user_name, /*password_needed=*/true, *outcome);
  if (credential == nullptr && outcome->need == AccessNeed::kUserLookup && user_store_ != nullptr &&
      wait_ != nullptr && wait_->wait_for(*user_store_, outcome->lookup_name)) {
    clear_outcome(*outcome);
    credential = decide_user(state_, *request_, inputs, user_name, /*password_needed=*/true, *outcome);
  }
  if (credential == nullptr) return std::nullopt;
  return *credential;
}

void EapStepJob::run() {
  RW_ASSERT(!stepped && held.conversation != nullptr && state != nullptr && client != nullptr &&
            random != nullptr);
  stepped = true;
  auto request = radius::Packet::parse(datagram);
  StateInnerCredentials source(*state, *client, request ? &*request : nullptr, user_store, wait);
  const InnerCredentialScope scope(&source);
  EapMethodFactory factory(*random);
  factory.set_tenant(&state->tenant_of(*client));
  auto parsed = eap::parse(response);
  // The worker parsed the same octets before handing them over.
  RW_ASSERT(parsed.has_value());
  step = held.conversation->on_response(*parsed, eap::Offer{.methods = offer, .factory = &factory}, out);
}

}  // namespace rw::gateway
