// AccessHandler: builds Access-Accept and Access-Reject (RFC 2865 §4.2,
// §4.3) from a decision, with the reply items tagged and encrypted as the
// dictionary says, and decides Simultaneous-Use checks the way FreeRADIUS
// does (its Reply-Message, which NAS logs and help desks already know).
#include "gateway/access_handler.h"

#include <algorithm>
#include <array>

#include "eap/eap_message.h"
#include "gateway/authorize.h"
#include "gateway/replies.h"
#include "radius/attribute_crypto.h"

namespace rw::gateway {
namespace {

using radius::Code;
using radius::PacketBuilder;
namespace attr = radius::attr;
namespace ms = radius::ms;

// FreeRADIUS's Reply-Message when a Simultaneous-Use limit is reached.
constexpr std::string_view kSimultaneousUseMessage = "You are already logged in - access denied";
// The longest User-Name a SessionCountQuery carries (RFC 2865 §5: 253 octets).
constexpr std::size_t kQueryUserNameBytesMax = 253;

// Adds one users-file reply item to the reply: tags (RFC 2868 §3) and the
// dictionary's encryption flags are applied here. Items that cannot go on
// the wire (server-side attributes, non-1,1 vendor formats) are skipped.
void add_reply_item(PacketBuilder& builder, const config::UsersItem& item, const radius::Packet& request,
                    const radius::SharedSecret& secret, radius::SaltSequence& salts,
                    const radius::Dictionary& dictionary) {
  const radius::AttributeDef& def = *item.def;
  if (def.internal || def.type > 255) return;
  std::array<std::uint8_t, radius::kMaxAttributeValueLength> buffer{};
  Bytes value = item.bytes();
  if (def.encryption == radius::Encryption::kTunnelPassword && def.vendor == 0) {
    auto hidden =
        radius::hide_tunnel_password(value, item.tag, salts.next(), request.authenticator(), secret, buffer);
    if (!hidden) return;
    value = *hidden;
  } else if (def.encryption == radius::Encryption::kTunnelPassword) {
    auto hidden = radius::encrypt_mppe_key(value, salts.next(), request.authenticator(), secret, buffer);
    if (!hidden) return;
    value = *hidden;
  } else if (def.encryption == radius::Encryption::kUserPassword) {
    auto hidden = radius::hide_user_password(value, request.authenticator(), secret, buffer);
    if (!hidden) return;
    value = *hidden;
  } else if (def.has_tag && radius::is_integer(def.data_type) && value.size() == 4) {
    // RFC 2868 §3.1: the tag replaces the high octet of the 32-bit value.
    std::copy(value.begin(), value.end(), buffer.begin());
    buffer[0] = item.tag;
    value = Bytes(buffer.data(), 4);
  } else if (def.has_tag && (item.tag != 0 || (!value.empty() && value[0] <= 0x1f))) {
    // RFC 2868 §3.6: a tag octet precedes the string; without a tag a
    // string that starts with 0x01-0x1F would be misread, so send tag 0.
    if (value.size() + 1 > buffer.size()) return;
    buffer[0] = item.tag;
    std::copy(value.begin(), value.end(), buffer.begin() + 1);
    value = Bytes(buffer.data(), value.size() + 1);
  }
  if (value.size() > radius::kMaxAttributeValueLength) return;
  if (def.vendor == 0) {
    builder.add(static_cast<std::uint8_t>(def.type), value);
    return;
  }
  const radius::VendorDef* vendor = dictionary.find_vendor(def.vendor);
  if (vendor != nullptr && (vendor->type_width != 1 || vendor->length_width != 1)) return;
  builder.add_vendor(def.vendor, static_cast<std::uint8_t>(def.type), value);
}

// RFC 2548 §2.3.3, §2.4: MS-CHAP2-Success or MS-CHAP-Error, and the MPPE keys.
void add_ms_chap_results(PacketBuilder& builder, const AccessOutcome& outcome, const RequestContext& request,
                         radius::SaltSequence& salts) {
  const Bytes authenticator = request.packet.authenticator();
  if (outcome.ms_chap_error) {
    builder.add_vendor(radius::kVendorMicrosoft, ms::kChapError, outcome.ms_chap_error->value());
  }
  const AccessOptions& options = request.state.options().access;
  std::array<std::uint8_t, radius::kMaxVendorValueLength> buffer{};
  if (outcome.ms_chap2) {
    builder.add_vendor(radius::kVendorMicrosoft, ms::kChap2Success, outcome.ms_chap2->ms_chap2_success);
    for (const auto& [type, key] : {std::pair{ms::kMppeSendKey, outcome.ms_chap2->mppe.send_key},
                                    std::pair{ms::kMppeRecvKey, outcome.ms_chap2->mppe.recv_key}}) {
      auto encrypted = radius::encrypt_mppe_key(key, salts.next(), authenticator, request.secret, buffer);
      if (encrypted) builder.add_vendor(radius::kVendorMicrosoft, type, *encrypted);
    }
  }
  if (outcome.ms_chap1) {
    // RFC 2548 §2.4.1: MS-CHAP-MPPE-Keys is hidden like User-Password.
    auto hidden = radius::hide_user_password(outcome.ms_chap1->ms_chap_mppe_keys, authenticator,
                                             request.secret, buffer);
    if (hidden) builder.add_vendor(radius::kVendorMicrosoft, ms::kChapMppeKeys, *hidden);
  }
  if (outcome.ms_chap2 || outcome.ms_chap1) {
    std::array<std::uint8_t, 4> policy{};
    std::array<std::uint8_t, 4> types{};
    ByteWriter(policy).write_u32(options.mppe_encryption_policy);
    ByteWriter(types).write_u32(options.mppe_encryption_types);
    builder.add_vendor(radius::kVendorMicrosoft, ms::kMppeEncryptionPolicy, policy);
    builder.add_vendor(radius::kVendorMicrosoft, ms::kMppeEncryptionTypes, types);
  }
}

// RFC 3579 §2.6: the EAP packet split over EAP-Messages; an
// Access-Challenge's State and Session-Timeout (RFC 2865 §5.24, §5.27: how
// long the NAS waits for the peer's answer); MS-MPPE-Recv-Key and
// MS-MPPE-Send-Key from the first and second halves of an accepted method's
// MSK (RFC 5216 §2.3), encrypted as RFC 2548 §2.4.2 and §2.4.3 say.
void add_eap_results(PacketBuilder& builder, const EapReply& eap_reply, const RequestContext& request,
                     radius::SaltSequence& salts) {
  if (!eap_reply.packet.empty()) eap::add_eap_message(builder, eap_reply.packet);
  if (eap_reply.challenge) {
    if (eap_reply.state) builder.add(attr::kState, *eap_reply.state);
    const std::int64_t seconds = std::max<std::int64_t>(1, eap_reply.session_timeout.to_ms() / 1000);
    builder.add_u32(attr::kSessionTimeout, static_cast<std::uint32_t>(seconds));
    return;
  }
  if (!eap_reply.msk) return;
  const Bytes msk = *eap_reply.msk;
  std::array<std::uint8_t, radius::kMaxVendorValueLength> buffer{};
  for (const auto& [type, key] :
       {std::pair{ms::kMppeRecvKey, msk.first(32)}, std::pair{ms::kMppeSendKey, msk.subspan(32, 32)}}) {
    auto encrypted =
        radius::encrypt_mppe_key(key, salts.next(), request.packet.authenticator(), request.secret, buffer);
    if (encrypted) builder.add_vendor(radius::kVendorMicrosoft, type, *encrypted);
  }
}

// The Simultaneous-Use limit of an accepted user, from the control items.
std::optional<std::uint32_t> simultaneous_use_limit(const GatewayState& state, const AccessOutcome& outcome) {
  const radius::AttributeDef* def = state.known().simultaneous_use;
  if (def == nullptr || !outcome.accepted) return std::nullopt;
  const config::UsersItem* item = outcome.users.find_control(*def);
  if (item == nullptr) return std::nullopt;
  std::uint32_t value = 0;
  ByteReader reader(item->bytes());
  if (!reader.read_u32(value)) return std::nullopt;
  return value;
}

// The entry that decided: the last one the users policy applied (the walk
// stops at it; earlier ones fell through). The SQL store's entries are
// compiled from rows, so only "sql" is named.
void set_rule(const AccessOutcome& outcome, Verdict& verdict) {
  const std::span<const std::uint32_t> applied = outcome.users.applied_entries();
  if (outcome.users_file == nullptr || applied.empty()) return;
  if (outcome.sql_user) {
    verdict.rule_file = "sql";
    return;
  }
  const config::UserEntry& entry = outcome.users_file->entries()[applied.back()];
  verdict.rule_file = outcome.users_file->file_of(entry);
  verdict.rule_line = entry.line;
}

}  // namespace

Verdict AccessHandler::verdict() const {
  const AccessOutcome& outcome = outcome_;
  Verdict verdict{.accepted = outcome.accepted,
                  .reject = outcome.reject,
                  .note = outcome.note,
                  .method = outcome.method,
                  .user_name = outcome.user_name,
                  .challenge = outcome.eap.challenge,
                  .eap_type = outcome.eap.type,
                  .outer_identity = outcome.eap.outer_identity,
                  .rule = outcome.rule};
  set_rule(outcome, verdict);
  return verdict;
}

Action AccessHandler::decide(const RequestContext& request, const AccessInputs& given, MutableBytes reply) {
  AccessInputs inputs = given;
  inputs.client = &request.client;
  inputs.from = request.from;
  inputs.unix_ms = request.arrival.unix_ms;
  // EAP (RFC 3579) when served; otherwise decide_access rejects EAP-Message
  // as eap_not_enabled, after the users policy as before.
  if (conversations_ != nullptr && !request.tenant().eap().methods.empty() &&
      request.packet.find(attr::kEapMessage)) {
    eap_.decide(request, inputs, *conversations_, outcome_);
    // Another gateway's conversation goes there when it is a peer; a
    // request forwarded here is never forwarded on (no loops).
    if (const std::optional<std::uint32_t> owner = outcome_.eap.forward_to;
        owner && inputs.forwarder != nullptr && !request.arrival.forwarded &&
        inputs.forwarder->knows(*owner)) {
      return Action{.kind = Action::Kind::kForward, .gateway = *owner};
    }
    // A finished conversation is authorized like any other request
    // (docs/policy.md "Semantics"); a round trip is not a decision.
    if (!outcome_.eap.challenge && !outcome_.eap.drop && outcome_.need == AccessNeed::kNothing &&
        !outcome_.store_unavailable) {
      authorize(request.state, request.packet, inputs, outcome_);
    }
  } else {
    decide_access(request.state, request.packet, inputs, random_, outcome_);
  }
  const AccessOutcome& outcome = outcome_;
  if (outcome.eap.drop) return Action::dropped(*outcome.eap.drop);
  if (outcome.store_unavailable) return Action::dropped(DropReason::kUserStoreUnavailable);
  switch (outcome.need) {
    case AccessNeed::kUserLookup:
      return Action{.kind = Action::Kind::kLookup, .name = outcome.lookup_name};
    case AccessNeed::kCryptCheck:
      return Action{.kind = Action::Kind::kVerify,
                    .crypt_setting = outcome.crypt_setting,
                    .password = inputs.password.value_or(std::string_view())};
    case AccessNeed::kEapStep:
      return Action{.kind = Action::Kind::kEapStep};
    case AccessNeed::kNothing:
      break;
  }
  // Simultaneous-Use (docs/authentication.md): only a user accepted with the
  // control item costs a count; everyone else is answered here.
  const std::optional<std::uint32_t> limit = simultaneous_use_limit(request.state, outcome);
  const std::size_t length = build_reply(request, reply);
  if (length == 0) return Action::dropped(DropReason::kReplyTooLarge);
  if (!limit || outcome.eap.challenge) return Action::reply(length, verdict());
  // A limit of 0 admits nobody: no need to ask. A User-Name a frame cannot
  // carry cannot be counted.
  if (*limit == 0) return decide_check_now(request, 0, length, 0, reply);
  if (outcome.user_name.empty() || outcome.user_name.size() > kQueryUserNameBytesMax) {
    return decide_check_now(request, *limit, length, std::nullopt, reply);
  }
  return Action{
      .kind = Action::Kind::kCountSessions, .length = length, .name = outcome.user_name, .limit = *limit};
}

Action AccessHandler::decide_check_now(const RequestContext& request, std::uint32_t limit,
                                       std::size_t accept_length, std::optional<std::uint32_t> open_sessions,
                                       MutableBytes reply) {
  copy_proxy_state_tlvs(request.packet, proxy_scratch_);
  RequestKey key{
      .from = request.from, .listener = request.arrival.listener, .identifier = request.packet.identifier()};
  std::copy_n(request.packet.authenticator().begin(), key.authenticator.size(), key.authenticator.begin());
  const SessionCheckView check{.key = key,
                               .secret = request.secret,
                               .policy = request.state.options().access.simultaneous_use_unavailable,
                               .user_name = outcome_.user_name,
                               .method = outcome_.method,
                               .eap_type = outcome_.eap.type,
                               .limit = limit,
                               .proxy_states = proxy_scratch_,
                               .accept = reply.first(accept_length),
                               .rule = outcome_.rule};
  return decide_check(check, open_sessions, reply);
}

Action AccessHandler::decide_check(const SessionCheckView& check, std::optional<std::uint32_t> open_sessions,
                                   MutableBytes reply) const {
  Verdict verdict{
      .method = check.method, .user_name = check.user_name, .eap_type = check.eap_type, .rule = check.rule};
  if (open_sessions) {
    verdict.accepted = *open_sessions < check.limit;
    verdict.reject = RejectReason::kSimultaneousUse;
  } else {
    switch (check.policy) {
      case SimultaneousUseUnavailable::kAccept:
        verdict.accepted = true;
        verdict.note = AcceptNote::kSimultaneousUseUnavailable;
        break;
      case SimultaneousUseUnavailable::kReject:
        verdict.reject = RejectReason::kSimultaneousUseUnavailable;
        break;
      case SimultaneousUseUnavailable::kDrop:
        return Action::dropped(DropReason::kSessionCountUnavailable);
    }
  }
  if (verdict.accepted) {
    if (check.accept.data() != reply.data())
      std::copy(check.accept.begin(), check.accept.end(), reply.begin());
    return Action::reply(check.accept.size(), verdict);
  }
  PacketBuilder builder(reply);
  builder.begin(Code::kAccessReject, check.key.identifier, check.key.authenticator);
  // BlastRADIUS (CVE-2024-3596): Message-Authenticator first in every reply.
  builder.reserve_message_authenticator();
  if (open_sessions) builder.add(attr::kReplyMessage, as_bytes(kSimultaneousUseMessage));
  add_proxy_state_tlvs(builder, check.proxy_states);
  const std::size_t length = finish_signed(builder, check.key.authenticator, check.secret);
  if (length == 0) return Action::dropped(DropReason::kReplyTooLarge);
  return Action::reply(length, verdict);
}

std::size_t AccessHandler::build_reply(const RequestContext& request, MutableBytes reply) {
  const AccessOutcome& outcome = outcome_;
  PacketBuilder builder(reply);
  const Code code = outcome.eap.challenge ? Code::kAccessChallenge
                    : outcome.accepted    ? Code::kAccessAccept
                                          : Code::kAccessReject;
  builder.begin(code, request.packet.identifier(), request.packet.authenticator());
  // BlastRADIUS (CVE-2024-3596): Message-Authenticator first in every reply.
  builder.reserve_message_authenticator();
  radius::SaltSequence salts(random_);
  if (outcome.eap.active) {
    add_eap_results(builder, outcome.eap, request, salts);
    // RFC 2865 §4.4: an Access-Challenge carries none of the accept's attributes.
    if (outcome.eap.challenge) {
      copy_proxy_states(builder, request.packet);
      return finish_signed(builder, request.packet.authenticator(), request.secret);
    }
  }
  const radius::Dictionary& dictionary = request.state.dictionary();
  for (const config::UsersItem* item : outcome.users.reply()) {
    // RFC 2865 §5.44: an Access-Reject carries Reply-Message, not the accept's attributes.
    if (!outcome.accepted && !(item->def->vendor == 0 && item->def->type == attr::kReplyMessage)) continue;
    // The policy's attribute takes the place of the users file's (docs/policy.md "Semantics").
    if (policy_sets(outcome.policy_reply, *item->def)) continue;
    add_reply_item(builder, *item, request.packet, request.secret, salts, dictionary);
  }
  if (outcome.policy_reply != nullptr) add_policy_reply(builder, *outcome.policy_reply, outcome.accepted);
  add_ms_chap_results(builder, outcome, request, salts);
  copy_proxy_states(builder, request.packet);
  return finish_signed(builder, request.packet.authenticator(), request.secret);
}

}  // namespace rw::gateway
