// RequestHandler: the order of checks follows docs/design.md invariant 5 and the
// BlastRADIUS advisory (CVE-2024-3596): structure, client, duplicate cache,
// then Message-Authenticator or the Accounting-Request authenticator before
// anything else reads the packet.
#include "gateway/request_handler.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "accounting/entry.h"
#include "base/assert.h"
#include "radius/attribute_crypto.h"
#include "radius/packet.h"

namespace rw::gateway {
namespace {

using radius::Code;
using radius::PacketBuilder;
namespace attr = radius::attr;
namespace ms = radius::ms;

// FreeRADIUS's Reply-Message when a Simultaneous-Use limit is reached, which
// NAS logs and help desks already know.
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

void copy_proxy_states(PacketBuilder& builder, const radius::Packet& request) {
  // RFC 2865 §5.33: Proxy-State attributes are copied unmodified and in order.
  for (const radius::Attribute attribute : request.attributes()) {
    if (attribute.type == attr::kProxyState) builder.add(attr::kProxyState, attribute.value);
  }
}

// Replaces `out` with the request's Proxy-State attributes as wire TLVs,
// for a reply built later (RFC 2865 §5.33, RFC 2866 §4.2: copied in order).
void copy_proxy_state_tlvs(const radius::Packet& request, std::vector<std::uint8_t>& out) {
  out.clear();
  for (const radius::Attribute attribute : request.attributes()) {
    if (attribute.type != attr::kProxyState) continue;
    out.push_back(attr::kProxyState);
    out.push_back(static_cast<std::uint8_t>(attribute.value.size() + 2));
    out.insert(out.end(), attribute.value.begin(), attribute.value.end());
  }
}

}  // namespace

struct RequestHandler::Request {
  Instant now;
  const Arrival& arrival;
  Listener listener;
  const Endpoint& from;
  radius::Packet packet;
  const config::ClientDef& client;
  const radius::SharedSecret& secret;
};

RequestHandler::RequestHandler(std::shared_ptr<const GatewayState> state, RandomSource& random,
                               GatewayCounters& counters, DecisionObserver* observer,
                               AccountingSetup accounting, std::uint16_t worker)
    : state_(std::move(state)),
      random_(random),
      counters_(counters),
      observer_(observer),
      duplicates_([&] {
        DuplicateCache::Options options = state_->options().duplicates;
        std::uint64_t seed = 0;
        random.fill(MutableBytes(reinterpret_cast<std::uint8_t*>(&seed), sizeof seed));
        options.hash_seed = seed;
        return options;
      }()),
      learned_message_authenticator_(state_->client_count(), false),
      accounting_(std::move(accounting)),
      worker_(worker) {
  const std::size_t checks = state_->options().access.session_checks_max;
  RW_ASSERT(checks >= 1 && checks <= 65536);
  // Slots only: their buffers grow on first use (a users policy without
  // Simultaneous-Use never touches them) and are reused after.
  session_checks_.reset(worker_, checks);
  if (accounting_.sink == nullptr) return;
  RW_ASSERT(accounting_.recipe != nullptr);
  RW_ASSERT(accounting_.deferred_max >= 1 && accounting_.deferred_max <= 65536);
  deferred_.reset(worker_, accounting_.deferred_max);
  record_bytes_.reserve(accounting::kRecordLengthMax);
}

void RequestHandler::on_tick(Instant now) {
  duplicates_.expire(now);
  deferred_.for_each_used([&](Deferred& deferred) {
    if (now < deferred.deadline) return;
    duplicates_.abandon(deferred.key);
    counters_.accounting_expired.add();
    release(deferred);
  });
}

std::size_t RequestHandler::on_datagram(Instant now, const Arrival& arrival, const Endpoint& from,
                                        Bytes datagram, MutableBytes reply) {
  const Listener listener = arrival.listener;
  counters_.received.add();
  auto packet = radius::Packet::parse(datagram);
  if (!packet) {
    counters_.drop(DropReason::kMalformed);
    counters_.malformed_by_reason[static_cast<std::size_t>(packet.error())].add();
    return 0;
  }
  const config::ClientDef* client = state_->find_client(from);
  if (client == nullptr) {
    counters_.drop(DropReason::kUnknownClient);
    return 0;
  }
  const Code code = packet->code();
  const bool expected = code == Code::kStatusServer ||
                        (listener == Listener::kAuthentication ? code == Code::kAccessRequest
                                                               : code == Code::kAccountingRequest);
  if (!expected) {
    counters_.drop(DropReason::kUnexpectedCode);
    return 0;
  }

  RequestKey key{.from = from, .listener = listener, .identifier = packet->identifier()};
  std::copy_n(packet->authenticator().begin(), key.authenticator.size(), key.authenticator.begin());
  const DuplicateCache::Lookup lookup = duplicates_.begin(now, key);
  switch (lookup.state) {
    case DuplicateCache::State::kAnswered:
      if (lookup.reply.size() > reply.size()) return 0;
      counters_.retransmissions_answered.add();
      std::copy(lookup.reply.begin(), lookup.reply.end(), reply.begin());
      return lookup.reply.size();
    case DuplicateCache::State::kInProgress:
      counters_.drop(DropReason::kDuplicateInProgress);
      return 0;
    case DuplicateCache::State::kFull:
      counters_.drop(DropReason::kTooManyInProgress);
      return 0;
    case DuplicateCache::State::kNew:
      break;
  }

  Request request{now, arrival, listener, from, *packet, *client, state_->secret_of(*client)};
  std::size_t length = 0;
  if (verify_request(request)) {
    switch (code) {
      case Code::kStatusServer:
        length = handle_status_server(request, reply);
        break;
      case Code::kAccessRequest:
        length = handle_access_request(request, key, reply);
        // The entry stays in progress until the count arrives or its
        // deadline passes: retransmissions meanwhile are coalesced.
        if (length == kDeferredReply) return 0;
        break;
      default:
        // The entry stays in progress until the answer: NAS retransmissions
        // meanwhile are coalesced (RFC 5080 §2.2.2), never re-submitted.
        if (defer_accounting_request(request, key)) return 0;
        break;
    }
  }
  if (length == 0) {
    duplicates_.abandon(key);
    return 0;
  }
  duplicates_.complete(now, key, reply.first(length));
  return length;
}

// RFC 3579 §3.2 and RFC 5997 §3: Message-Authenticator is checked before any
// other attribute is read; RFC 2866 §3 for Accounting-Request.
bool RequestHandler::verify_request(const Request& request) {
  const radius::Packet& packet = request.packet;
  if (packet.code() == Code::kAccountingRequest) {
    if (!radius::verify_request_authenticator(packet, request.secret)) {
      counters_.drop(DropReason::kBadRequestAuthenticator);
      return false;
    }
    // RFC 3579 §3.2: a Message-Authenticator, when present, must be valid.
    if (radius::check_request_message_authenticator(packet, request.secret) ==
        radius::MessageAuthenticatorStatus::kInvalid) {
      counters_.drop(DropReason::kBadMessageAuthenticator);
      return false;
    }
    return true;
  }
  const std::size_t client = state_->index_of(request.client);
  const bool has_eap = packet.find(attr::kEapMessage).has_value();
  switch (radius::check_request_message_authenticator(packet, request.secret)) {
    case radius::MessageAuthenticatorStatus::kValid:
      // FreeRADIUS's `auto`: a client that sent one without EAP must from now on.
      if (!has_eap && request.client.require_message_authenticator == config::ClientCheck::kAuto) {
        learned_message_authenticator_[client] = true;
      }
      return true;
    case radius::MessageAuthenticatorStatus::kInvalid:
      counters_.drop(DropReason::kBadMessageAuthenticator);
      return false;
    case radius::MessageAuthenticatorStatus::kAbsent:
      break;
  }
  // Status-Server (RFC 5997 §3) and EAP (RFC 3579 §3.2) always need it.
  const config::ClientCheck policy = request.client.require_message_authenticator;
  bool required = packet.code() == Code::kStatusServer || has_eap || policy == config::ClientCheck::kYes ||
                  (policy == config::ClientCheck::kAuto && learned_message_authenticator_[client]);
  // BlastRADIUS: a forged Access-Reject/Accept rides on Proxy-State; a request
  // carrying it without Message-Authenticator is refused unless the client opts out.
  if (!required && packet.code() == Code::kAccessRequest && packet.find(attr::kProxyState).has_value() &&
      request.client.limit_proxy_state != config::ClientCheck::kNo) {
    required = true;
  }
  if (!required) return true;
  counters_.drop(DropReason::kMissingMessageAuthenticator);
  return false;
}

std::size_t RequestHandler::handle_status_server(const Request& request, MutableBytes reply) {
  counters_.status_server.add();
  PacketBuilder builder(reply);
  const Code code =
      request.listener == Listener::kAuthentication ? Code::kAccessAccept : Code::kAccountingResponse;
  builder.begin(code, request.packet.identifier(), request.packet.authenticator());
  builder.reserve_message_authenticator();
  return finish_reply(request, builder);
}

void RequestHandler::log_decision(Instant now, const Endpoint& from, std::string_view client,
                                  std::string_view user_name, AuthMethod method, bool accepted,
                                  std::string_view reason) {
  (accepted ? counters_.access_accepts : counters_.access_rejects).add();
  if (observer_ == nullptr) return;
  observer_->on_decision({.now = now,
                          .from = from,
                          .client = client,
                          .user_name = user_name,
                          .method = method,
                          .accepted = accepted,
                          .reason = reason});
}

std::size_t RequestHandler::handle_access_request(const Request& request, const RequestKey& key,
                                                  MutableBytes reply) {
  decide_access(*state_, request.packet, request.secret, random_, outcome_, user_store_);
  const AccessOutcome& outcome = outcome_;
  if (outcome.store_unavailable) {
    counters_.drop(DropReason::kUserStoreUnavailable);
    return 0;
  }
  // Simultaneous-Use (docs/authentication.md): only a user accepted with the
  // control item costs a count; everyone else is answered here.
  std::optional<std::uint32_t> limit;
  if (const radius::AttributeDef* def = state_->known().simultaneous_use;
      def != nullptr && outcome.accepted) {
    if (const config::UsersItem* item = outcome.users.find_control(*def)) {
      std::uint32_t value = 0;
      ByteReader reader(item->bytes());
      if (reader.read_u32(value)) limit = value;
    }
  }
  const std::size_t length = build_access_reply(request, reply);
  if (!limit) {
    if (length > 0) {
      log_decision(request.now, request.from, request.client.shortname, outcome.user_name, outcome.method,
                   outcome.accepted, outcome.reason);
    }
    return length;
  }
  if (length == 0) return 0;
  return check_simultaneous_use(request, key, *limit, length, reply);
}

std::size_t RequestHandler::build_access_reply(const Request& request, MutableBytes reply) {
  const AccessOutcome& outcome = outcome_;
  PacketBuilder builder(reply);
  builder.begin(outcome.accepted ? Code::kAccessAccept : Code::kAccessReject, request.packet.identifier(),
                request.packet.authenticator());
  // BlastRADIUS (CVE-2024-3596): Message-Authenticator first in every reply.
  builder.reserve_message_authenticator();
  radius::SaltSequence salts(random_);
  const radius::Dictionary& dictionary = state_->dictionary();
  for (const config::UsersItem* item : outcome.users.reply()) {
    // RFC 2865 §5.44: an Access-Reject carries Reply-Message, not the accept's attributes.
    if (!outcome.accepted && !(item->def->vendor == 0 && item->def->type == attr::kReplyMessage)) continue;
    add_reply_item(builder, *item, request.packet, request.secret, salts, dictionary);
  }
  add_ms_chap_results(builder, outcome, request, salts);
  return finish_reply(request, builder);
}

std::size_t RequestHandler::check_simultaneous_use(const Request& request, const RequestKey& key,
                                                   std::uint32_t limit, std::size_t accept_length,
                                                   MutableBytes reply) {
  const AccessOutcome& outcome = outcome_;
  copy_proxy_state_tlvs(request.packet, proxy_scratch_);
  const CheckInputs inputs{.now = request.now,
                           .from = request.from,
                           .key = key,
                           .secret = request.secret,
                           .client = request.client.shortname,
                           .user_name = outcome.user_name,
                           .method = outcome.method,
                           .limit = limit,
                           .proxy_states = proxy_scratch_,
                           .accept = reply.first(accept_length)};
  // A limit of 0 admits nobody: no need to ask. A User-Name a frame cannot
  // carry cannot be counted.
  if (limit == 0) return decide_session_check(inputs, 0, reply);
  if (outcome.user_name.empty() || outcome.user_name.size() > kQueryUserNameBytesMax) {
    return decide_session_check(inputs, std::nullopt, reply);
  }
  if (session_checks_.full()) {
    counters_.drop(DropReason::kSessionCheckTableFull);
    return 0;
  }
  if (accounting_.sink == nullptr ||
      !accounting_.sink->count_sessions(outcome.user_name, session_checks_.next_ticket())) {
    return decide_session_check(inputs, std::nullopt, reply);
  }
  counters_.session_checks.add();
  SessionCheck& check = session_checks_.acquire();
  check.key = key;
  check.arrival = request.arrival;
  check.state = state_;
  check.secret = &request.secret;
  check.client = request.client.shortname;
  check.proxy_states.assign(proxy_scratch_.begin(), proxy_scratch_.end());
  check.accept.assign(reply.begin(), reply.begin() + static_cast<std::ptrdiff_t>(accept_length));
  check.user_name_length = outcome.user_name.size();
  std::copy(outcome.user_name.begin(), outcome.user_name.end(), check.user_name.begin());
  check.method = outcome.method;
  check.limit = limit;
  check.deadline = request.now + state_->options().access.session_query_timeout;
  return kDeferredReply;
}

std::size_t RequestHandler::decide_session_check(const CheckInputs& check,
                                                 std::optional<std::uint32_t> open_sessions,
                                                 MutableBytes reply) {
  bool accept = false;
  std::string_view reason = "ok";
  if (open_sessions) {
    accept = *open_sessions < check.limit;
    if (!accept) reason = "simultaneous_use";
  } else {
    counters_.session_checks_unavailable.add();
    reason = "simultaneous_use_unavailable";
    switch (state_->options().access.simultaneous_use_unavailable) {
      case SimultaneousUseUnavailable::kAccept:
        accept = true;
        break;
      case SimultaneousUseUnavailable::kReject:
        break;
      case SimultaneousUseUnavailable::kDrop:
        counters_.drop(DropReason::kSessionCountUnavailable);
        return 0;
    }
  }
  if (accept) {
    if (check.accept.data() != reply.data())
      std::copy(check.accept.begin(), check.accept.end(), reply.begin());
    log_decision(check.now, check.from, check.client, check.user_name, check.method, true, reason);
    return check.accept.size();
  }
  PacketBuilder builder(reply);
  builder.begin(Code::kAccessReject, check.key.identifier, check.key.authenticator);
  // BlastRADIUS (CVE-2024-3596): Message-Authenticator first in every reply.
  builder.reserve_message_authenticator();
  if (open_sessions) builder.add(attr::kReplyMessage, as_bytes(kSimultaneousUseMessage));
  // RFC 2865 §5.33: Proxy-State copied unmodified, in order.
  for (const radius::Attribute attribute :
       radius::AttributeRange{check.proxy_states, 0, check.proxy_states.size()}) {
    builder.add(attr::kProxyState, attribute.value);
  }
  auto finished = builder.finish();
  if (!finished) {
    counters_.drop(DropReason::kReplyTooLarge);
    return 0;
  }
  radius::sign_response(*finished, check.key.authenticator, check.secret);
  if (open_sessions) counters_.simultaneous_use_rejects.add();
  log_decision(check.now, check.from, check.client, check.user_name, check.method, false, reason);
  return finished->size();
}

std::optional<DeferredReply> RequestHandler::finish_session_check(Instant now, SessionCheck& check,
                                                                  std::optional<std::uint32_t> open_sessions,
                                                                  MutableBytes reply) {
  const CheckInputs inputs{.now = now,
                           .from = check.key.from,
                           .key = check.key,
                           .secret = *check.secret,
                           .client = check.client,
                           .user_name = std::string_view(check.user_name.data(), check.user_name_length),
                           .method = check.method,
                           .limit = check.limit,
                           .proxy_states = check.proxy_states,
                           .accept = check.accept};
  const std::size_t length = decide_session_check(inputs, open_sessions, reply);
  std::optional<DeferredReply> out;
  if (length == 0) {
    duplicates_.abandon(check.key);
  } else {
    duplicates_.complete(now, check.key, reply.first(length));
    out = DeferredReply{.arrival = check.arrival, .to = check.key.from, .length = length};
  }
  release(check);
  return out;
}

void RequestHandler::release(SessionCheck& check) {
  check.state.reset();
  check.secret = nullptr;
  check.client = {};
  session_checks_.release(check);  // A count still on its way for this use is now stale.
}

std::optional<DeferredReply> RequestHandler::on_session_count(Instant now, Ticket ticket,
                                                              std::optional<std::uint32_t> open_sessions,
                                                              MutableBytes reply) {
  SessionCheck* check = session_checks_.find(ticket);
  if (check == nullptr) {
    counters_.session_checks_stale.add();
    return std::nullopt;
  }
  return finish_session_check(now, *check, open_sessions, reply);
}

std::optional<DeferredReply> RequestHandler::next_timed_reply(Instant now, MutableBytes reply) {
  // The first expired check that has a reply; expired checks that are
  // dropped are finished on the way.
  std::optional<DeferredReply> out;
  session_checks_.for_each_used([&](SessionCheck& check) {
    if (!out && now >= check.deadline) out = finish_session_check(now, check, std::nullopt, reply);
  });
  return out;
}

// RFC 2548 §2.3.3, §2.4: MS-CHAP2-Success or MS-CHAP-Error, and the MPPE keys.
void RequestHandler::add_ms_chap_results(PacketBuilder& builder, const AccessOutcome& outcome,
                                         const Request& request, radius::SaltSequence& salts) const {
  const Bytes authenticator = request.packet.authenticator();
  if (outcome.ms_chap_error) {
    builder.add_vendor(radius::kVendorMicrosoft, ms::kChapError, outcome.ms_chap_error->value());
  }
  const AccessOptions& options = state_->options().access;
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

std::size_t RequestHandler::finish_reply(const Request& request, PacketBuilder& builder) {
  copy_proxy_states(builder, request.packet);
  auto finished = builder.finish();
  if (!finished) {
    counters_.drop(DropReason::kReplyTooLarge);
    return 0;
  }
  radius::sign_response(*finished, request.packet.authenticator(), request.secret);
  return finished->size();
}

bool RequestHandler::defer_accounting_request(const Request& request, const RequestKey& key) {
  if (accounting_.sink == nullptr) {
    counters_.drop(DropReason::kAccountingNotReplicated);
    return false;
  }
  if (deferred_.full()) {
    counters_.drop(DropReason::kAccountingTableFull);
    return false;
  }
  auto record = accounting::make_record(request.packet, request.client.shortname, request.arrival.unix_ms,
                                        *accounting_.recipe);
  if (!record) {
    counters_.drop(DropReason::kAccountingInvalid);
    return false;
  }
  record_bytes_.clear();
  accounting::encode_record(*record, record_bytes_);

  if (!accounting_.sink->submit(record->key, record_bytes_, deferred_.next_ticket())) {
    counters_.drop(DropReason::kAccountingRefused);
    return false;
  }
  Deferred& deferred = deferred_.acquire();
  deferred.key = key;
  deferred.arrival = request.arrival;
  deferred.state = state_;
  deferred.secret = &request.secret;
  deferred.message_authenticator = request.packet.find(attr::kMessageAuthenticator).has_value();
  deferred.deadline = request.now + accounting_.deferred_timeout;
  copy_proxy_state_tlvs(request.packet, deferred.proxy_states);
  counters_.accounting_submitted.add();
  return true;
}

void RequestHandler::release(Deferred& deferred) {
  deferred.state.reset();
  deferred.secret = nullptr;
  deferred_.release(deferred);  // Answers still on their way for this use are now stale.
}

std::optional<DeferredReply> RequestHandler::on_answer(Instant now, Ticket ticket, MutableBytes reply) {
  Deferred* deferred = deferred_.find(ticket);
  if (deferred == nullptr) {
    counters_.accounting_stale.add();
    return std::nullopt;
  }
  const RequestKey& key = deferred->key;
  PacketBuilder builder(reply);
  builder.begin(Code::kAccountingResponse, key.identifier, key.authenticator);
  if (deferred->message_authenticator) builder.reserve_message_authenticator();
  // RFC 2866 §4.2 and RFC 2865 §5.33: Proxy-State copied unmodified, in order.
  const Bytes proxy_states(deferred->proxy_states);
  for (const radius::Attribute attribute : radius::AttributeRange{proxy_states, 0, proxy_states.size()}) {
    builder.add(attr::kProxyState, attribute.value);
  }
  auto finished = builder.finish();
  if (!finished) {
    // Cannot happen: the reply is smaller than its request. Let the NAS retry.
    duplicates_.abandon(key);
    counters_.drop(DropReason::kReplyTooLarge);
    release(*deferred);
    return std::nullopt;
  }
  // RFC 2866 §3: MD5(Code+Identifier+Length+Request Authenticator+Attributes+Secret).
  radius::sign_response(*finished, key.authenticator, *deferred->secret);
  duplicates_.complete(now, key, *finished);
  counters_.accounting_responses.add();
  DeferredReply out{.arrival = deferred->arrival, .to = key.from, .length = finished->size()};
  release(*deferred);
  return out;
}

void RequestHandler::on_refused(Instant /*now*/, Ticket ticket) {
  Deferred* deferred = deferred_.find(ticket);
  if (deferred == nullptr) {
    counters_.accounting_stale.add();
    return;
  }
  duplicates_.abandon(deferred->key);
  counters_.drop(DropReason::kAccountingRefused);
  release(*deferred);
}

}  // namespace rw::gateway

namespace rw::gateway {

RequestHandlerFactory::RequestHandlerFactory(std::shared_ptr<const GatewayState> state, RandomSource& random,
                                             DecisionObserver* observer, AccountingSetup accounting)
    : state_(std::move(state)), random_(random), observer_(observer), accounting_(std::move(accounting)) {}

std::unique_ptr<DatagramHandler> RequestHandlerFactory::make_handler(int worker_index) {
  counters_.push_back(std::make_unique<GatewayCounters>());
  auto handler = std::make_unique<RequestHandler>(state_, random_, *counters_.back(), observer_, accounting_,
                                                  static_cast<std::uint16_t>(worker_index));
  handler->set_user_store(user_store_);
  return handler;
}

}  // namespace rw::gateway
