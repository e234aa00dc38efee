// The EAP conversation (RFC 3748): Identity, negotiation with Legacy-Nak,
// Identifiers, round trips, Success and Failure.
#include "eap/conversation.h"

#include <algorithm>
#include <utility>

#include "base/assert.h"

namespace rw::eap {

std::string to_string(Type type) {
  switch (type) {
    case Type::kIdentity:
      return "Identity";
    case Type::kNotification:
      return "Notification";
    case Type::kNak:
      return "Nak";
    case Type::kMd5Challenge:
      return "EAP-MD5";
    case Type::kTls:
      return "EAP-TLS";
    case Type::kTtls:
      return "EAP-TTLS";
    case Type::kPeap:
      return "PEAP";
    case Type::kMsChapV2:
      return "EAP-MSCHAPv2";
    case Type::kExpanded:
      return "EAP-Expanded";
  }
  return "EAP-" + std::to_string(static_cast<unsigned>(type));
}

std::string_view to_string(Failure failure) {
  switch (failure) {
    case Failure::kNone:
      return "none";
    case Failure::kUnexpectedResponse:
      return "unexpected_response";
    case Failure::kIdentityTooLong:
      return "identity_too_long";
    case Failure::kNoCommonMethod:
      return "no_common_method";
    case Failure::kTooManyRounds:
      return "too_many_rounds";
    case Failure::kMethodFailed:
      return "method_failed";
  }
  return "unknown";
}

Conversation::Conversation(ConversationOptions options, std::string owner)
    : options_(options), owner_(std::move(owner)) {
  RW_ASSERT(options_.rounds_max >= 1);
}

std::string_view Conversation::decided_identity() const {
  if (method_ != nullptr && !method_->decided_identity().empty()) return method_->decided_identity();
  return identity_;
}

std::optional<Type> Conversation::method_type() const {
  if (method_ == nullptr) return std::nullopt;
  return method_->type();
}

Step Conversation::start(std::uint8_t identifier, MutableBytes out) {
  RW_ASSERT(phase_ == Phase::kNew && rounds_ == 0);
  identifier_ = static_cast<std::uint8_t>(identifier - 1);  // request() counts up to it.
  phase_ = Phase::kIdentity;
  return request(static_cast<std::uint8_t>(Type::kIdentity), {}, out);
}

Step Conversation::on_response(const Packet& response, const Offer& offer, MutableBytes out) {
  RW_ASSERT(response.code == Code::kResponse);
  if (phase_ == Phase::kNew) {
    // The NAS asked for the Identity itself: the next Request follows its Identifier.
    identifier_ = response.identifier;
    return on_identity(response, offer, out);
  }
  // RFC 3748 §4.1: a Response that does not match the outstanding Request
  // is silently discarded.
  if (response.identifier != identifier_) return Step{.kind = Step::Kind::kDiscard};
  switch (phase_) {
    case Phase::kNew:
    case Phase::kIdentity:
      return on_identity(response, offer, out);
    case Phase::kProposed:
      if (response.type == static_cast<std::uint8_t>(Type::kNak)) return on_nak(response, offer, out);
      if (response.type != static_cast<std::uint8_t>(method_->type())) {
        return failure(Failure::kUnexpectedResponse, out);
      }
      phase_ = Phase::kMethod;
      return follow(method_->on_response(response.type_data), out);
    case Phase::kMethod:
      // RFC 3748 §5.3.1: a Nak only answers the first Request of a method.
      if (response.type != static_cast<std::uint8_t>(method_->type())) {
        return failure(Failure::kUnexpectedResponse, out);
      }
      return follow(method_->on_response(response.type_data), out);
    case Phase::kCredential:
      // A repeat of the Response the method already took: ask again.
      if (response.type != static_cast<std::uint8_t>(method_->type())) {
        return failure(Failure::kUnexpectedResponse, out);
      }
      return Step{.kind = Step::Kind::kCredential};
    case Phase::kSucceeded:
      return success(msk_, out);
    case Phase::kDone:
      break;
  }
  return failure(Failure::kUnexpectedResponse, out);
}

Step Conversation::on_credential(const auth::Credential* known_good, MutableBytes out) {
  RW_ASSERT(phase_ == Phase::kCredential);
  phase_ = Phase::kMethod;
  return follow(method_->on_credential(known_good), out);
}

Step Conversation::on_identity(const Packet& response, const Offer& offer, MutableBytes out) {
  if (response.type != static_cast<std::uint8_t>(Type::kIdentity)) {
    return failure(Failure::kUnexpectedResponse, out);
  }
  if (response.type_data.size() > kIdentityBytesMax) return failure(Failure::kIdentityTooLong, out);
  identity_.assign(as_chars(response.type_data));
  std::bitset<256> any;
  any.set();
  return propose(offer, any, out);
}

Step Conversation::on_nak(const Packet& response, const Offer& offer, MutableBytes out) {
  // RFC 3748 §5.3.1: the Type-Data lists the Types the peer would take, in
  // its order; 0 means none. The server's order decides among them.
  std::bitset<256> acceptable;
  for (const std::uint8_t type : response.type_data) {
    if (type != 0) acceptable.set(type);
  }
  return propose(offer, acceptable, out);
}

Step Conversation::propose(const Offer& offer, const std::bitset<256>& acceptable, MutableBytes out) {
  for (const Type type : offer.methods) {
    const auto number = static_cast<std::uint8_t>(type);
    if (!acceptable.test(number) || tried_.test(number)) continue;
    tried_.set(number);
    std::unique_ptr<Method> method = offer.factory->make(type, identity_);
    if (method == nullptr) continue;
    method_ = std::move(method);
    phase_ = Phase::kProposed;
    MethodStep first = method_->start();
    if (first.kind != MethodStep::Kind::kRequest) {
      first.kind = MethodStep::Kind::kFailure;
      if (first.reason.empty()) first.reason = "the method did not start with a Request";
    }
    return follow(std::move(first), out);
  }
  return failure(Failure::kNoCommonMethod, out);
}

Step Conversation::follow(MethodStep step, MutableBytes out) {
  switch (step.kind) {
    case MethodStep::Kind::kRequest: {
      Step next = request(static_cast<std::uint8_t>(method_->type()), step.type_data, out);
      if (next.kind == Step::Kind::kRequest) method_->on_identifier(identifier_);
      return next;
    }
    case MethodStep::Kind::kCredential:
      phase_ = Phase::kCredential;
      return Step{.kind = Step::Kind::kCredential};
    case MethodStep::Kind::kSuccess:
      return success(step.msk, out);
    case MethodStep::Kind::kFailure: {
      Step failed = failure(Failure::kMethodFailed, out);
      failed.reason = std::move(step.reason);
      failed.auth_error = step.auth_error;
      return failed;
    }
  }
  return failure(Failure::kMethodFailed, out);
}

Step Conversation::request(std::uint8_t type, Bytes type_data, MutableBytes out) {
  if (rounds_ >= options_.rounds_max) return failure(Failure::kTooManyRounds, out);
  const auto identifier = static_cast<std::uint8_t>(identifier_ + 1);
  const Bytes packet = write(
      Packet{.code = Code::kRequest, .identifier = identifier, .type = type, .type_data = type_data}, out);
  if (packet.empty()) {
    Step failed = failure(Failure::kMethodFailed, out);
    failed.reason = "the EAP-Request does not fit a RADIUS packet";
    return failed;
  }
  identifier_ = identifier;
  ++rounds_;
  return Step{.kind = Step::Kind::kRequest, .packet = packet};
}

Step Conversation::success(std::optional<Msk> msk, MutableBytes out) {
  phase_ = Phase::kSucceeded;
  msk_ = msk;
  // RFC 3748 §4.2: Success and Failure carry the Identifier of the Response they answer.
  const Bytes packet = write(Packet{.code = Code::kSuccess, .identifier = identifier_}, out);
  RW_ASSERT(!packet.empty());
  return Step{.kind = Step::Kind::kSuccess, .packet = packet, .msk = msk};
}

Step Conversation::failure(Failure why, MutableBytes out) {
  phase_ = Phase::kDone;
  const Bytes packet = write(Packet{.code = Code::kFailure, .identifier = identifier_}, out);
  RW_ASSERT(!packet.empty());
  return Step{.kind = Step::Kind::kFailure, .packet = packet, .failure = why};
}

}  // namespace rw::eap
