// authorize: the request's facts for the policy are views of the packet and
// the inputs, built on the stack.
#include "gateway/authorize.h"

#include <algorithm>
#include <array>

#include "auth/mab.h"

namespace rw::gateway {
namespace {

namespace attr = radius::attr;

// RFC 3580 §3.31: Tunnel-Type VLAN (13), Tunnel-Medium-Type IEEE-802 (6).
constexpr std::uint32_t kTunnelTypeVlan = 13;
constexpr std::uint32_t kTunnelMediumIeee802 = 6;
// RFC 2868 §3: the tag that groups the three attributes of one tunnel.
constexpr std::uint8_t kTunnelTag = 1;

std::string_view text_of(const radius::Packet& request, std::uint8_t type) {
  const auto attribute = request.find(type);
  return attribute ? as_chars(attribute->value) : std::string_view();
}

std::optional<policy::Address> nas_ip_of(const radius::Packet& request) {
  policy::Address address;
  if (const auto v4 = request.find(attr::kNasIpAddress); v4 && v4->value.size() == 4) {
    std::copy(v4->value.begin(), v4->value.end(), address.bytes.begin());
    return address;
  }
  if (const auto v6 = request.find(attr::kNasIpv6Address); v6 && v6->value.size() == 16) {
    std::copy(v6->value.begin(), v6->value.end(), address.bytes.begin());
    address.is_v6 = true;
    return address;
  }
  return std::nullopt;
}

void policy_reject(AccessOutcome& outcome, std::string_view rule, const policy::Reply* reply) {
  outcome.accepted = false;
  outcome.reject = RejectReason::kPolicyReject;
  outcome.note = AcceptNote::kNone;
  outcome.rule = rule;
  outcome.policy_reply = reply;
  // Nothing of the authentication goes out with a reject.
  outcome.users.clear_reply();
  outcome.ms_chap2.reset();
  outcome.ms_chap1.reset();
}

void add_u32(radius::PacketBuilder& builder, std::uint8_t type, std::uint32_t value) {
  std::array<std::uint8_t, 4> bytes{};
  ByteWriter(bytes).write_u32(value);
  builder.add(type, bytes);
}

}  // namespace

policy::Method policy_method(AuthMethod method) {
  switch (method) {
    case AuthMethod::kNone:
      return policy::Method::kNone;
    case AuthMethod::kPap:
      return policy::Method::kPap;
    case AuthMethod::kChap:
      return policy::Method::kChap;
    case AuthMethod::kMsChap1:
      return policy::Method::kMsChap1;
    case AuthMethod::kMsChap2:
      return policy::Method::kMsChap2;
    case AuthMethod::kMab:
      return policy::Method::kMab;
    case AuthMethod::kEap:
      return policy::Method::kEap;
  }
  return policy::Method::kNone;
}

// EAP names its method (docs/policy.md: `method: EAP-TLS` holds for EAP-TLS
// only); a type the policy does not name counts as EAP.
policy::Method policy_method_of(const AccessOutcome& outcome) {
  if (outcome.method != AuthMethod::kEap) return policy_method(outcome.method);
  switch (static_cast<eap::Type>(outcome.eap.type)) {
    case eap::Type::kTls:
      return policy::Method::kEapTls;
    case eap::Type::kPeap:
      return policy::Method::kPeap;
    case eap::Type::kTtls:
      return policy::Method::kEapTtls;
    case eap::Type::kMd5Challenge:
      return policy::Method::kEapMd5;
    default:
      return policy::Method::kEap;
  }
}

void authorize(const GatewayState& state, const radius::Packet& request, const AccessInputs& inputs,
               AccessOutcome& outcome) {
  const policy::Policy* policy = tenant_of(state, inputs).policy();
  if (policy == nullptr) return;
  if (outcome.method == AuthMethod::kMab) {
    // MAB: the User-Name is the MAC (auth/mab.h). Deny wins over everything.
    if (const auto mac = auth::parse_mac(outcome.user_name)) {
      switch (policy->mab_listing(*mac)) {
        case policy::MabListing::kDenied:
          return policy_reject(outcome, policy::kMabDenyRule, nullptr);
        case policy::MabListing::kAllowed:
          // Being on the allow list lists the MAC, as a users entry named
          // after it would; an explicit Auth-Type := Reject still holds.
          if (!outcome.accepted && outcome.reject == RejectReason::kUnlistedMac) {
            outcome.accepted = true;
            outcome.note = AcceptNote::kMabAllowList;
          }
          break;
        case policy::MabListing::kUnlisted:
          break;
      }
    }
  }
  if (!outcome.accepted) return;
  const policy::Request facts{
      .user_name = outcome.user_name,
      .client = inputs.client != nullptr ? std::string_view(inputs.client->shortname) : std::string_view(),
      .client_address = inputs.from ? std::optional(policy::Address{.bytes = inputs.from->address,
                                                                    .is_v6 = inputs.from->is_v6})
                                    : std::nullopt,
      .nas_ip_address = nas_ip_of(request),
      .nas_identifier = text_of(request, attr::kNasIdentifier),
      .called_station_id = text_of(request, attr::kCalledStationId),
      .calling_station_id = text_of(request, attr::kCallingStationId),
      .method = policy_method_of(outcome),
      .cert_subject_cn = outcome.eap.cert_subject_cn,
      .cert_issuer = outcome.eap.cert_issuer,
      .unix_ms = inputs.unix_ms};
  const policy::Decision decision = policy->decide(facts);
  if (!decision.accept) return policy_reject(outcome, decision.rule_name(), decision.reply());
  outcome.rule = decision.rule_name();
  outcome.policy_reply = decision.reply();
}

bool policy_sets(const policy::Reply* reply, const radius::AttributeDef& def) {
  if (reply == nullptr || def.vendor != 0) return false;
  switch (def.type) {
    case attr::kTunnelType:
    case attr::kTunnelMediumType:
    case attr::kTunnelPrivateGroupId:
      return !reply->vlan.empty();
    case attr::kSessionTimeout:
      return reply->session_timeout.has_value();
    case attr::kFilterId:
      return !reply->filter_id.empty();
    case attr::kReplyMessage:
      return !reply->reply_message.empty();
    default:
      return false;
  }
}

void add_policy_reply(radius::PacketBuilder& builder, const policy::Reply& reply, bool accepted) {
  if (accepted) {
    if (!reply.vlan.empty()) {
      // RFC 2868 §3.1, §3.2: the tag replaces the high octet of the value.
      add_u32(builder, attr::kTunnelType, std::uint32_t{kTunnelTag} << 24 | kTunnelTypeVlan);
      add_u32(builder, attr::kTunnelMediumType, std::uint32_t{kTunnelTag} << 24 | kTunnelMediumIeee802);
      // RFC 2868 §3.6: the tag octet precedes the group's name.
      std::array<std::uint8_t, radius::kMaxAttributeValueLength> value{};
      value[0] = kTunnelTag;
      const std::size_t length = std::min(reply.vlan.size(), value.size() - 1);
      std::copy_n(reply.vlan.begin(), length, value.begin() + 1);
      builder.add(attr::kTunnelPrivateGroupId, Bytes(value.data(), length + 1));
    }
    if (reply.session_timeout) add_u32(builder, attr::kSessionTimeout, *reply.session_timeout);
    if (!reply.filter_id.empty()) builder.add(attr::kFilterId, as_bytes(reply.filter_id));
  }
  if (!reply.reply_message.empty()) builder.add(attr::kReplyMessage, as_bytes(reply.reply_message));
}

}  // namespace rw::gateway
