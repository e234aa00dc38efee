// Disconnect- and CoA-Requests and their answers (dynamic_authorization.h).
#include "radius/dynamic_authorization.h"

#include <algorithm>
#include <array>

#include "base/assert.h"

namespace rw::radius {
namespace {

// Set by build_dynamic_request from the session, or by signing: a change
// naming one would contradict what identifies the session.
constexpr std::array<std::uint8_t, 10> kSetByTheRequest = {
    attr::kUserName,      attr::kNasIpAddress,         attr::kNasIpv6Address,  attr::kNasIdentifier,
    attr::kAcctSessionId, attr::kCallingStationId,     attr::kFramedIpAddress, attr::kFramedIpv6Prefix,
    attr::kErrorCause,    attr::kMessageAuthenticator,
};

void add_text(PacketBuilder& builder, std::uint8_t type, std::string_view text) {
  if (!text.empty()) builder.add(type, as_bytes(text));
}

void add_octets(PacketBuilder& builder, std::uint8_t type, const std::vector<std::uint8_t>& value) {
  if (!value.empty()) builder.add(type, value);
}

}  // namespace

Code request_code(DynamicKind kind) {
  return kind == DynamicKind::kDisconnect ? Code::kDisconnectRequest : Code::kCoaRequest;
}

std::string_view to_string(DynamicKind kind) {
  return kind == DynamicKind::kDisconnect ? "disconnect" : "coa";
}

Result<ChangeAttribute, std::string> parse_change_attribute(const Dictionary& dictionary,
                                                            std::string_view text) {
  const std::size_t equals = text.find('=');
  if (equals == std::string_view::npos || equals == 0) {
    return fail("'" + std::string(text) + "' is not ATTRIBUTE=VALUE");
  }
  const std::string name(text.substr(0, equals));
  const AttributeDef* def = dictionary.find(name);
  if (def == nullptr) return fail("unknown attribute '" + name + "'");
  if (def->internal || def->type > 255 || def->parent != nullptr) {
    return fail(name + " cannot go in a CoA-Request: it is not a plain RADIUS attribute");
  }
  if (def->encryption != Encryption::kNone || def->has_tag) {
    return fail(name + " cannot go in a CoA-Request: encrypted and tagged attributes are not supported");
  }
  if (def->vendor == 0 &&
      std::find(kSetByTheRequest.begin(), kSetByTheRequest.end(), def->type) != kSetByTheRequest.end()) {
    return fail(name + " is set from the session, not by a change");
  }
  if (def->vendor != 0) {
    const VendorDef* vendor = dictionary.find_vendor(def->vendor);
    if (vendor != nullptr && (vendor->type_width != 1 || vendor->length_width != 1)) {
      return fail(name + " cannot go in a CoA-Request: its vendor's format is not 1,1");
    }
  }
  auto value = parse_value(*def, text.substr(equals + 1));
  if (!value) return fail(name + ": " + value.error());
  const std::size_t most = def->vendor == 0 ? kMaxAttributeValueLength : kMaxVendorValueLength;
  if (value->size() > most) return fail(name + ": the value is longer than an attribute carries");
  return ChangeAttribute{def->vendor, static_cast<std::uint8_t>(def->type), std::move(*value)};
}

Result<std::size_t, BuildError> build_dynamic_request(MutableBytes buffer, DynamicKind kind,
                                                      std::uint8_t identifier, const SessionIdentity& session,
                                                      std::span<const ChangeAttribute> changes,
                                                      const SharedSecret& secret) {
  RW_ASSERT(kind == DynamicKind::kCoa || changes.empty());
  PacketBuilder builder(buffer);
  builder.begin(request_code(kind), identifier);
  builder.reserve_message_authenticator();
  // RFC 5176 §3: the NAS identification attributes, then the session
  // identification attributes the NAS may match on.
  if (session.nas_address.size() == 4) builder.add(attr::kNasIpAddress, session.nas_address);
  if (session.nas_address.size() == 16) builder.add(attr::kNasIpv6Address, session.nas_address);
  add_text(builder, attr::kNasIdentifier, session.nas_identifier);
  add_text(builder, attr::kUserName, session.user_name);
  add_text(builder, attr::kAcctSessionId, session.acct_session_id);
  add_text(builder, attr::kCallingStationId, session.calling_station_id);
  add_octets(builder, attr::kFramedIpAddress, session.framed_ip_address);
  add_octets(builder, attr::kFramedIpv6Prefix, session.framed_ipv6_prefix);
  for (const ChangeAttribute& change : changes) {
    if (change.vendor == 0) {
      builder.add(change.type, change.value);
    } else {
      builder.add_vendor(change.vendor, change.type, change.value);
    }
  }
  auto wire = builder.finish();
  if (!wire) return fail(wire.error());
  sign_request(*wire, secret);
  return wire->size();
}

std::string_view to_string(ReplyError error) {
  switch (error) {
    case ReplyError::kMalformed:
      return "malformed answer";
    case ReplyError::kWrongCode:
      return "answer of another kind";
    case ReplyError::kWrongIdentifier:
      return "answer to another request";
    case ReplyError::kBadAuthenticator:
      return "bad Response Authenticator (another secret?)";
    case ReplyError::kBadMessageAuthenticator:
      return "bad Message-Authenticator";
  }
  return "unknown";
}

Result<DynamicReply, ReplyError> read_dynamic_reply(Bytes datagram, DynamicKind kind, Bytes request,
                                                    const SharedSecret& secret) {
  RW_ASSERT(request.size() >= kHeaderLength);
  auto packet = Packet::parse(datagram);
  if (!packet) return fail(ReplyError::kMalformed);
  const bool disconnect = kind == DynamicKind::kDisconnect;
  const Code ack = disconnect ? Code::kDisconnectAck : Code::kCoaAck;
  const Code nak = disconnect ? Code::kDisconnectNak : Code::kCoaNak;
  if (packet->code() != ack && packet->code() != nak) return fail(ReplyError::kWrongCode);
  if (packet->identifier() != request[1]) return fail(ReplyError::kWrongIdentifier);
  const Bytes request_authenticator = request.subspan(4, kAuthenticatorLength);
  if (!verify_response_authenticator(*packet, request_authenticator, secret)) {
    return fail(ReplyError::kBadAuthenticator);
  }
  if (check_response_message_authenticator(*packet, request_authenticator, secret) ==
      MessageAuthenticatorStatus::kInvalid) {
    return fail(ReplyError::kBadMessageAuthenticator);
  }
  DynamicReply reply;
  reply.acknowledged = packet->code() == ack;
  reply.error_cause = packet->find_u32(attr::kErrorCause);
  return reply;
}

std::string describe(const DynamicReply& reply, const Dictionary& dictionary) {
  std::string text = reply.acknowledged ? "ACK" : "NAK";
  if (!reply.error_cause) return text;
  text += " Error-Cause=";
  const AttributeDef* def = dictionary.find(0, attr::kErrorCause);
  const std::optional<std::string_view> name =
      def != nullptr ? def->name_of_value(*reply.error_cause) : std::nullopt;
  const std::string number = std::to_string(*reply.error_cause);
  text += name ? std::string(*name) + "(" + number + ")" : number;
  return text;
}

}  // namespace rw::radius
