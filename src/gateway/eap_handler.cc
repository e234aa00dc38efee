// EapHandler: EAP over RADIUS for one worker (RFC 3579 §2, §3; RFC 3748).
#include "gateway/eap_handler.h"

#include <algorithm>

#include "base/assert.h"
#include "eap/md5_method.h"
#include "eap/packet.h"

namespace rw::gateway {

namespace attr = radius::attr;

bool is_wireless_nas_port_type(std::uint32_t value) {
  switch (value) {
    case 18:  // Wireless-Other
    case 19:  // Wireless-802.11
    case 22:  // Wireless-CDMA2000
    case 23:  // Wireless-UMTS
    case 24:  // Wireless-1X-EV
    case 27:  // Wireless-802.16
    case 28:  // Wireless-802.20
    case 29:  // Wireless-802.22
    case 36:  // Wireless-XGP
      return true;
    default:
      return value >= 37 && value <= 43;  // WiMAX (IANA).
  }
}

EapHandler::EapHandler(RandomSource& random) : random_(random), methods_(random) {}

EapHandler::~EapHandler() = default;

eap::Offer EapHandler::offer_for(const RequestContext& request) {
  offer_.clear();
  md5_withheld_ = false;
  methods_.set_tenant(&request.tenant());
  const std::optional<std::uint32_t> port_type = request.packet.find_u32(attr::kNasPortType);
  const bool wireless = port_type && is_wireless_nas_port_type(*port_type);
  for (const eap::Type type : request.tenant().eap().methods) {
    if (type == eap::Type::kMd5Challenge && wireless) {
      md5_withheld_ = true;
      continue;
    }
    offer_.push_back(type);
  }
  return eap::Offer{.methods = offer_,
                    .factory = factory_ != nullptr ? factory_ : static_cast<eap::MethodFactory*>(&methods_)};
}

void EapHandler::decide(const RequestContext& request, const AccessInputs& inputs,
                        EapConversations& conversations, AccessOutcome& outcome) {
  clear_outcome(outcome);
  outcome.method = AuthMethod::kEap;
  outcome.eap.active = true;
  note_.clear();
  identity_.clear();
  cert_subject_cn_.clear();
  cert_issuer_.clear();
  if (const auto user_name = request.packet.find(attr::kUserName)) {
    outcome.user_name = as_chars(user_name->value);
    outcome.eap.outer_identity = outcome.user_name;
  }
  auto assembled = eap::reassemble(request.packet, in_);
  if (!assembled) {
    note_ = "EAP-Messages: " + std::string(eap::to_string(assembled.error()));
    return refuse(outcome, RejectReason::kEapMalformed, std::nullopt);
  }
  const std::optional<radius::Attribute> state = request.packet.find(attr::kState);
  if (assembled->empty()) {
    // RFC 3579 §2.1: the NAS's EAP-Start begins a conversation, never continues one.
    if (state) {
      note_ = "EAP-Start with a State";
      return refuse(outcome, RejectReason::kEapMalformed, std::nullopt);
    }
    return begin_with_start(request, conversations, outcome);
  }
  auto response = eap::parse(*assembled);
  if (!response || response->code != eap::Code::kResponse) {
    note_ = response ? "an EAP-" + std::string(eap::to_string(response->code)) + " from the NAS"
                     : "the EAP packet does not parse: " + std::string(eap::to_string(response.error()));
    return refuse(outcome, RejectReason::kEapMalformed, std::nullopt);
  }
  if (!state) return begin_with_identity(request, *response, conversations, outcome);
  if (inputs.eap_stepped != nullptr) {
    // The pool stepped the conversation this request took: carry the step out.
    EapStepJob& job = *inputs.eap_stepped;
    RW_ASSERT(job.stepped && job.held.conversation != nullptr);
    (void)offer_for(request);
    return finish(request, inputs, conversations, std::move(job.held), std::move(job.step),
                  response->identifier, outcome);
  }
  continue_conversation(request, inputs, *response, *assembled, state->value, conversations, outcome);
}

void EapHandler::begin_with_start(const RequestContext& request, EapConversations& conversations,
                                  AccessOutcome& outcome) {
  auto conversation = std::make_unique<eap::Conversation>(
      eap::ConversationOptions{.rounds_max = request.tenant().eap().rounds_max},
      std::string(request.conversation_owner()));
  std::uint8_t identifier = 0;
  random_.fill(MutableBytes(&identifier, 1));
  const eap::Step step = conversation->start(identifier, out_);
  RW_ASSERT(step.kind == eap::Step::Kind::kRequest);
  auto state = conversations.insert(request.now, std::move(conversation));
  if (!state) {
    note_ = "EAP-Start: no room for a new conversation";
    outcome.eap.drop = DropReason::kEapTableFull;
    return;
  }
  note_ = "EAP-Start: a new conversation; EAP-Request/Identity sent";
  challenge(step, *state, conversations.idle_timeout(), outcome);
}

void EapHandler::begin_with_identity(const RequestContext& request, const eap::Packet& response,
                                     EapConversations& conversations, AccessOutcome& outcome) {
  if (response.type != static_cast<std::uint8_t>(eap::Type::kIdentity)) {
    note_ = "an EAP-Response of Type " + std::to_string(response.type) + " without a State";
    return refuse(outcome, RejectReason::kEapNoConversation, response.identifier);
  }
  auto conversation = std::make_unique<eap::Conversation>(
      eap::ConversationOptions{.rounds_max = request.tenant().eap().rounds_max},
      std::string(request.conversation_owner()));
  const eap::Step step = conversation->on_response(response, offer_for(request), out_);
  decided_by(*conversation, outcome);
  if (step.kind != eap::Step::Kind::kRequest) {
    note_ = "EAP-Response/Identity without a State: " + std::string(eap::to_string(step.failure));
    return failed(step, outcome);
  }
  const std::string method = conversation->method_type() ? eap::to_string(*conversation->method_type()) : "";
  auto state = conversations.insert(request.now, std::move(conversation));
  if (!state) {
    note_ = "EAP-Response/Identity: no room for a new conversation";
    outcome.eap.drop = DropReason::kEapTableFull;
    return;
  }
  note_ = "EAP-Response/Identity without a State: a new conversation; " + method + " offered";
  challenge(step, *state, conversations.idle_timeout(), outcome);
}

void EapHandler::continue_conversation(const RequestContext& request, const AccessInputs& inputs,
                                       const eap::Packet& response, Bytes response_octets, Bytes state,
                                       EapConversations& conversations, AccessOutcome& outcome) {
  auto held = conversations.take(request.now, state);
  if (!held) {
    switch (held.error()) {
      case EapRefusal::kBusy:
        note_ = "the conversation is being worked on by another worker";
        outcome.eap.drop = DropReason::kEapConversationBusy;
        return;
      case EapRefusal::kInvalid:
        note_ = "State: not one this gateway process minted";
        return refuse(outcome, RejectReason::kEapStateInvalid, response.identifier);
      case EapRefusal::kOtherGateway:
        // Forwarded there when that gateway is a peer (the dispatcher's
        // call); refused otherwise.
        note_ = "State: another gateway's conversation";
        outcome.eap.forward_to = eap::state_gateway_id(state);
        return refuse(outcome, RejectReason::kEapStateOtherGateway, response.identifier);
      case EapRefusal::kExpired:
        note_ = "State: the conversation expired";
        return refuse(outcome, RejectReason::kEapStateUnknown, response.identifier);
      case EapRefusal::kUnknown:
      case EapRefusal::kFull:
        break;
    }
    note_ = "State: the conversation ended or is unknown";
    return refuse(outcome, RejectReason::kEapStateUnknown, response.identifier);
  }
  if (held->conversation->owner() != request.conversation_owner()) {
    // Another NAS's conversation: it goes on for its own NAS.
    conversations.put_back(request.now, std::move(*held));
    note_ = "State: the conversation of another NAS client";
    return refuse(outcome, RejectReason::kEapStateOtherClient, response.identifier);
  }
  const std::optional<eap::Type> type = held->conversation->method_type();
  if (inputs.eap_elsewhere && type && is_tls_based(*type) && !held->conversation->finished()) {
    return hand_off(request, response, response_octets, std::move(*held), inputs, outcome);
  }
  eap::Step step = held->conversation->on_response(response, offer_for(request), out_);
  finish(request, inputs, conversations, std::move(*held), std::move(step), response.identifier, outcome);
}

void EapHandler::hand_off(const RequestContext& request, const eap::Packet& response, Bytes response_octets,
                          EapConversations::Held held, const AccessInputs& inputs, AccessOutcome& outcome) {
  decided_by(*held.conversation, outcome);
  auto job = std::make_shared<EapStepJob>();
  job->held = std::move(held);
  job->response.assign(response_octets.begin(), response_octets.end());
  job->response_identifier = response.identifier;
  const eap::Offer offer = offer_for(request);
  job->offer.assign(offer.methods.begin(), offer.methods.end());
  job->state = request.state.shared_from_this();
  job->client = &request.client;
  const Bytes wire = request.packet.wire();
  job->datagram.assign(wire.begin(), wire.end());
  job->user_store = inputs.user_store;
  job->random = &random_;
  outcome.need = AccessNeed::kEapStep;
  outcome.eap_job = std::move(job);
  note_ = "the TLS step goes to the EAP pool";
}

void EapHandler::keep_certificate(const eap::Conversation& conversation, AccessOutcome& outcome) {
  const eap::PeerCertificate* certificate =
      conversation.method() != nullptr ? conversation.method()->verified_certificate() : nullptr;
  if (certificate == nullptr) return;
  cert_subject_cn_ = certificate->subject_common_name;
  cert_issuer_ = certificate->issuer;
  outcome.eap.cert_subject_cn = cert_subject_cn_;
  outcome.eap.cert_issuer = cert_issuer_;
}

void EapHandler::finish(const RequestContext& request, const AccessInputs& inputs,
                        EapConversations& conversations, EapConversations::Held held, eap::Step step,
                        std::uint8_t response_identifier, AccessOutcome& outcome) {
  eap::Conversation& conversation = *held.conversation;
  decided_by(conversation, outcome);
  keep_certificate(conversation, outcome);
  bool policy_applied = false;
  if (step.kind == eap::Step::Kind::kCredential) {
    const auth::Credential* credential = decide_user(request.state, request.packet, inputs, identity_,
                                                     /*password_needed=*/true, outcome);
    policy_applied = true;
    if (credential != nullptr) {
      step = conversation.on_credential(credential, out_);
    } else if (outcome.need != AccessNeed::kNothing || outcome.store_unavailable) {
      // Decided again with the store's answer; the conversation asks for the password again.
      note_ = "waiting for the user store";
      conversations.put_back(request.now, std::move(held));
      return;
    } else if (outcome.accepted) {
      // Auth-Type := Accept: the users policy admits the user without a check.
      const Bytes success =
          eap::write(eap::Packet{.code = eap::Code::kSuccess, .identifier = response_identifier}, out_);
      step = eap::Step{.kind = eap::Step::Kind::kSuccess, .packet = success};
    } else {
      const RejectReason reason = outcome.reject;
      conversations.end(std::move(held));
      note_ = "the users policy refused " + identity_;
      return refuse(outcome, reason, response_identifier);
    }
  }
  switch (step.kind) {
    // Once put back, another worker may take the conversation: nothing of
    // it is read after.
    case eap::Step::Kind::kDiscard:
      note_ = "EAP-Response Identifier " + std::to_string(response_identifier) + " does not answer " +
              std::to_string(conversation.identifier());
      conversations.put_back(request.now, std::move(held));
      outcome.eap.drop = DropReason::kEapWrongIdentifier;
      return;
    case eap::Step::Kind::kRequest: {
      note_ = "EAP-Request sent, round " + std::to_string(conversation.rounds());
      const eap::StateBytes state = held.state;
      conversations.put_back(request.now, std::move(held));
      return challenge(step, state, conversations.idle_timeout(), outcome);
    }
    case eap::Step::Kind::kCredential:
      // on_credential never asks again.
      break;
    case eap::Step::Kind::kSuccess:
      if (!policy_applied) {
        // A method that decided without a password: the users policy still
        // has its say (Auth-Type := Reject, check items, reply items).
        (void)decide_user(request.state, request.packet, inputs, identity_, /*password_needed=*/false,
                          outcome);
        if (outcome.need != AccessNeed::kNothing || outcome.store_unavailable) {
          note_ = "waiting for the user store";
          conversations.put_back(request.now, std::move(held));
          return;
        }
        if (!outcome.accepted) {
          const RejectReason reason = outcome.reject;
          conversations.end(std::move(held));
          note_ = "the users policy refused " + identity_;
          return refuse(outcome, reason, response_identifier);
        }
      }
      conversations.end(std::move(held));
      outcome.accepted = true;
      outcome.eap.packet = step.packet;
      outcome.eap.msk = step.msk;
      note_ = "EAP-Success";
      return;
    case eap::Step::Kind::kFailure:
      conversations.end(std::move(held));
      note_ = "EAP-Failure: " + std::string(eap::to_string(step.failure)) +
              (step.reason.empty() ? std::string() : " (" + step.reason + ")");
      return failed(step, outcome);
  }
  conversations.end(std::move(held));
  refuse(outcome, RejectReason::kEapMethodFailed, response_identifier);
}

void EapHandler::decided_by(const eap::Conversation& conversation, AccessOutcome& outcome) {
  identity_.assign(conversation.decided_identity());
  outcome.user_name = identity_;
  if (const auto type = conversation.method_type()) outcome.eap.type = static_cast<std::uint8_t>(*type);
}

void EapHandler::challenge(const eap::Step& step, const eap::StateBytes& state, Duration session_timeout,
                           AccessOutcome& outcome) {
  outcome.eap.challenge = true;
  outcome.eap.packet = step.packet;
  outcome.eap.state = state;
  outcome.eap.session_timeout = session_timeout;
}

void EapHandler::refuse(AccessOutcome& outcome, RejectReason reason,
                        std::optional<std::uint8_t> failure_identifier) {
  outcome.accepted = false;
  outcome.reject = reason;
  // Only an Auth-Type := Reject keeps its Reply-Message (access.cc, explicit_reject).
  if (reason != RejectReason::kAuthTypeReject) outcome.users.clear_reply();
  outcome.eap.packet = {};
  if (failure_identifier) {
    // RFC 3579 §2.6.3: an Access-Reject carries EAP-Failure when it can.
    outcome.eap.packet =
        eap::write(eap::Packet{.code = eap::Code::kFailure, .identifier = *failure_identifier}, out_);
  }
}

void EapHandler::failed(const eap::Step& step, AccessOutcome& outcome) {
  RejectReason reason = RejectReason::kEapMethodFailed;
  switch (step.failure) {
    case eap::Failure::kMethodFailed:
      if (step.auth_error) reason = reject_reason_of(*step.auth_error);
      break;
    case eap::Failure::kNoCommonMethod:
      reason = md5_withheld_ ? RejectReason::kEapMd5OverWireless : RejectReason::kEapNoCommonMethod;
      break;
    case eap::Failure::kTooManyRounds:
      reason = RejectReason::kEapTooManyRounds;
      break;
    case eap::Failure::kUnexpectedResponse:
      reason = RejectReason::kEapUnexpectedResponse;
      break;
    case eap::Failure::kIdentityTooLong:
      reason = RejectReason::kEapMalformed;
      break;
    case eap::Failure::kNone:
      break;
  }
  outcome.accepted = false;
  outcome.reject = reason;
  outcome.users.clear_reply();
  outcome.eap.packet = step.packet;
}

}  // namespace rw::gateway
