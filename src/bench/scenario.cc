// Request building and answer checking of the load generator (scenario.h).
#include "bench/scenario.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "auth/chap.h"
#include "auth/password.h"
#include "base/assert.h"
#include "radius/attribute_crypto.h"

namespace rw::bench {

namespace {

// RFC 2866 §5.1 Acct-Status-Type values.
constexpr std::uint32_t kStatusStart = 1;
constexpr std::uint32_t kStatusStop = 2;
constexpr std::uint32_t kStatusInterimUpdate = 3;

constexpr std::array<std::uint8_t, 4> kNasIp{127, 0, 0, 1};

std::uint32_t status_type(RequestKind kind) {
  switch (kind) {
    case RequestKind::kAcctStart:
      return kStatusStart;
    case RequestKind::kAcctInterim:
      return kStatusInterimUpdate;
    default:
      return kStatusStop;
  }
}

// The rotation of accounting kinds: every session sends Start, Interim-Update, Stop.
constexpr std::array<RequestKind, 3> kAccountingCycle{RequestKind::kAcctStart, RequestKind::kAcctInterim,
                                                      RequestKind::kAcctStop};
constexpr std::array<RequestKind, 3> kAccessCycle{RequestKind::kPap, RequestKind::kChap,
                                                  RequestKind::kMsChapV2};

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

}  // namespace

AccountingSlot accounting_slot(std::uint64_t index) {
  const std::uint64_t round = index / 3;
  const std::uint64_t position = index % 3;
  const std::uint64_t behind = position * kSessionSpacing;  // Start 0, Interim 1, Stop 2 spacings behind.
  if (round < behind) return {RequestKind::kAcctStart, kLeadInSessions + index};
  return {kAccountingCycle[position], round - behind};
}

AccountingSlot live_session_slot(std::uint64_t index, const LiveSessions& live) {
  RW_ASSERT(live.count > 0);
  if (live.open && index < live.count) return {RequestKind::kAcctStart, index};
  const std::uint64_t interim = live.open ? index - live.count : index;
  return {RequestKind::kAcctInterim, interim % live.count};
}

std::string_view to_string(Scenario scenario) {
  switch (scenario) {
    case Scenario::kPap:
      return "pap";
    case Scenario::kChap:
      return "chap";
    case Scenario::kMsChapV2:
      return "mschapv2";
    case Scenario::kAccounting:
      return "acct";
    case Scenario::kMixed:
      return "mixed";
  }
  return "unknown";
}

std::optional<Scenario> parse_scenario(std::string_view text) {
  for (Scenario s :
       {Scenario::kPap, Scenario::kChap, Scenario::kMsChapV2, Scenario::kAccounting, Scenario::kMixed}) {
    if (text == to_string(s)) return s;
  }
  return std::nullopt;
}

bool is_accounting(RequestKind kind) {
  return kind == RequestKind::kAcctStart || kind == RequestKind::kAcctInterim ||
         kind == RequestKind::kAcctStop;
}

std::string_view status_name(RequestKind kind) {
  switch (status_type(kind)) {
    case kStatusStart:
      return "Start";
    case kStatusInterimUpdate:
      return "Interim-Update";
    default:
      return "Stop";
  }
}

std::optional<std::vector<BenchUser>> parse_users(std::string_view spec_or_text) {
  std::vector<BenchUser> users;
  const std::string_view spec = trim(spec_or_text);
  if (spec.starts_with("count:")) {
    std::uint64_t count = 0;
    for (char c : spec.substr(6)) {
      if (c < '0' || c > '9' || count > 1'000'000) return std::nullopt;
      count = count * 10 + static_cast<std::uint64_t>(c - '0');
    }
    for (std::uint64_t i = 0; i < count; ++i) {
      users.push_back({fmt::format("bench-user-{}", i), fmt::format("bench-password-{}", i)});
    }
  } else {
    std::string_view rest = spec_or_text;
    while (!rest.empty()) {
      const std::size_t end = std::min(rest.find('\n'), rest.size());
      std::string_view line = trim(rest.substr(0, end));
      rest.remove_prefix(std::min(end + 1, rest.size()));
      if (line.empty() || line.front() == '#') continue;
      const std::size_t space = line.find_first_of(" \t");
      if (space == std::string_view::npos) return std::nullopt;
      users.push_back({std::string(line.substr(0, space)), std::string(trim(line.substr(space)))});
    }
  }
  if (users.empty()) return std::nullopt;
  return users;
}

RequestFactory::RequestFactory(Scenario scenario, std::vector<BenchUser> users,
                               const radius::SharedSecret& secret, std::string run_tag, LiveSessions live)
    : scenario_(scenario),
      users_(std::move(users)),
      secret_(secret),
      run_tag_(std::move(run_tag)),
      live_(live) {
  RW_ASSERT(!users_.empty());
  for (const BenchUser& user : users_) {
    // A password that has no NT hash (invalid UTF-8) gets a zero hash; the
    // MS-CHAPv2 answer is then a Reject, reported as an unexpected code.
    nt_hashes_.push_back(auth::nt_password_hash(user.password).value_or(auth::NtHash{}));
  }
}

RequestKind RequestFactory::kind_of(std::uint64_t sequence) const {
  switch (scenario_) {
    case Scenario::kPap:
      return RequestKind::kPap;
    case Scenario::kChap:
      return RequestKind::kChap;
    case Scenario::kMsChapV2:
      return RequestKind::kMsChapV2;
    case Scenario::kAccounting:
      return slot(sequence).kind;
    case Scenario::kMixed: {
      // Out of every 10 requests, 7 accounting and 3 authentication; the
      // accounting ones are numbered on so that sessions stay whole.
      const std::uint64_t block = sequence / 10;
      const std::uint64_t position = sequence % 10;
      if (position < 7) return slot(block * 7 + position).kind;
      return kAccessCycle[(block * 3 + position - 7) % 3];
    }
  }
  return RequestKind::kPap;
}

AccountingSlot RequestFactory::slot(std::uint64_t index) const {
  return live_.count > 0 ? live_session_slot(index, live_) : accounting_slot(index);
}

std::string RequestFactory::session_id(std::uint64_t session) const {
  return fmt::format("{}-{}", run_tag_, session);
}

Result<Bytes, radius::BuildError> RequestFactory::build(std::uint64_t sequence, std::uint8_t identifier,
                                                        RandomSource& random,
                                                        std::span<std::uint8_t, kMaxRequestLength> out,
                                                        Outstanding& outstanding) const {
  const RequestKind kind = kind_of(sequence);
  outstanding = Outstanding{};
  outstanding.kind = kind;
  outstanding.identifier = identifier;
  if (is_accounting(kind)) return build_accounting(kind, sequence, identifier, out, outstanding);
  return build_access(kind, sequence, identifier, random, out, outstanding);
}

Result<Bytes, radius::BuildError> RequestFactory::build_access(RequestKind kind, std::uint64_t sequence,
                                                               std::uint8_t identifier, RandomSource& random,
                                                               std::span<std::uint8_t, kMaxRequestLength> out,
                                                               Outstanding& outstanding) const {
  const std::size_t index = sequence % users_.size();
  const BenchUser& user = users_[index];
  outstanding.request_authenticator = radius::make_request_authenticator(random);
  const Bytes authenticator = outstanding.request_authenticator;

  radius::PacketBuilder builder(out);
  builder.begin(radius::Code::kAccessRequest, identifier, authenticator);
  builder.reserve_message_authenticator();
  builder.add(radius::attr::kUserName, as_bytes(user.name));
  builder.add(radius::attr::kNasIpAddress, kNasIp);
  builder.add_u32(radius::attr::kNasPort, static_cast<std::uint32_t>(sequence & 0xffff));
  builder.add(radius::attr::kNasIdentifier, as_bytes("radiusward-bench"));

  if (kind == RequestKind::kPap) {
    std::array<std::uint8_t, radius::kMaxUserPasswordLength> hidden_buffer{};
    auto hidden = radius::hide_user_password(as_bytes(user.password), authenticator, secret_, hidden_buffer);
    if (!hidden) return fail(radius::BuildError::kValueTooLong);
    builder.add(radius::attr::kUserPassword, *hidden);
  } else if (kind == RequestKind::kChap) {
    // RFC 2865 §2.2: the Request Authenticator serves as the challenge
    // when CHAP-Challenge is absent; FreeRADIUS and radiusward accept both.
    std::array<std::uint8_t, 16> challenge{};
    random.fill(challenge);
    builder.add(radius::attr::kChapPassword, auth::chap_password(identifier, user.password, challenge));
    builder.add(radius::attr::kChapChallenge, challenge);
  } else {
    // RFC 2759 §8: the peer side, with a fresh authenticator challenge (the
    // NAS's) and peer challenge per request.
    const auto peer = auth::ms_chap2_peer_response(identifier, user.name, nt_hashes_[index], random);
    builder.add_vendor(radius::kVendorMicrosoft, radius::ms::kChapChallenge, peer.authenticator_challenge);
    builder.add_vendor(radius::kVendorMicrosoft, radius::ms::kChap2Response, peer.value);
    outstanding.authenticator_response = peer.authenticator_response;
  }
  auto wire = builder.finish();
  if (!wire) return fail(wire.error());
  radius::sign_request(*wire, secret_);
  return Bytes(*wire);
}

Result<Bytes, radius::BuildError> RequestFactory::build_accounting(
    RequestKind kind, std::uint64_t sequence, std::uint8_t identifier,
    std::span<std::uint8_t, kMaxRequestLength> out, Outstanding& outstanding) const {
  // Sessions are numbered by the accounting requests before this one
  // (accounting_slot): each sends Start, Interim-Update and Stop in turn.
  std::uint64_t accounting_index = sequence;
  if (scenario_ == Scenario::kMixed) accounting_index = (sequence / 10) * 7 + sequence % 10;
  const std::uint64_t session = slot(accounting_index).session;
  outstanding.session = session;
  const BenchUser& user = users_[session % users_.size()];
  const std::string id = session_id(session);

  radius::PacketBuilder builder(out);
  builder.begin(radius::Code::kAccountingRequest, identifier);
  builder.reserve_message_authenticator();
  builder.add(radius::attr::kUserName, as_bytes(user.name));
  builder.add(radius::attr::kNasIpAddress, kNasIp);
  builder.add_u32(radius::attr::kNasPort, static_cast<std::uint32_t>(session & 0xffff));
  builder.add(radius::attr::kNasIdentifier, as_bytes("radiusward-bench"));
  builder.add_u32(radius::attr::kAcctStatusType, status_type(kind));
  builder.add(radius::attr::kAcctSessionId, as_bytes(id));
  builder.add_u32(radius::attr::kAcctDelayTime, 0);
  if (kind != RequestKind::kAcctStart) {
    builder.add_u32(radius::attr::kAcctSessionTime, kind == RequestKind::kAcctStop ? 600 : 300);
    builder.add_u32(radius::attr::kAcctInputOctets, static_cast<std::uint32_t>(sequence * 1500));
    builder.add_u32(radius::attr::kAcctOutputOctets, static_cast<std::uint32_t>(sequence * 3000));
  }
  if (kind == RequestKind::kAcctStop) builder.add_u32(radius::attr::kAcctTerminateCause, 1);  // User-Request.
  auto wire = builder.finish();
  if (!wire) return fail(wire.error());
  radius::sign_request(*wire, secret_);
  std::copy_n(wire->begin() + 4, radius::kAuthenticatorLength, outstanding.request_authenticator.begin());
  return Bytes(*wire);
}

std::string_view to_string(VerifyError error) {
  switch (error) {
    case VerifyError::kMalformed:
      return "malformed";
    case VerifyError::kIdentifierMismatch:
      return "identifier mismatch";
    case VerifyError::kBadResponseAuthenticator:
      return "bad Response Authenticator";
    case VerifyError::kMissingMessageAuthenticator:
      return "missing Message-Authenticator";
    case VerifyError::kBadMessageAuthenticator:
      return "bad Message-Authenticator";
    case VerifyError::kUnexpectedCode:
      return "unexpected code";
    case VerifyError::kBadMsChap2Success:
      return "bad MS-CHAP2-Success";
  }
  return "unknown";
}

Result<void, VerifyError> verify_answer(Bytes datagram, const Outstanding& outstanding,
                                        const radius::SharedSecret& secret,
                                        bool require_message_authenticator) {
  auto parsed = radius::Packet::parse(datagram);
  if (!parsed) return fail(VerifyError::kMalformed);
  const radius::Packet& response = *parsed;
  if (response.identifier() != outstanding.identifier) return fail(VerifyError::kIdentifierMismatch);
  const Bytes request_authenticator = outstanding.request_authenticator;
  if (!radius::verify_response_authenticator(response, request_authenticator, secret)) {
    return fail(VerifyError::kBadResponseAuthenticator);
  }
  const auto message_authenticator =
      radius::check_response_message_authenticator(response, request_authenticator, secret);
  if (message_authenticator == radius::MessageAuthenticatorStatus::kInvalid) {
    return fail(VerifyError::kBadMessageAuthenticator);
  }
  if (is_accounting(outstanding.kind)) {
    if (response.code() != radius::Code::kAccountingResponse) return fail(VerifyError::kUnexpectedCode);
    return {};
  }
  // RFC 3579 §3.2 and the BlastRADIUS advisory: the request carried a
  // Message-Authenticator, so the answer must too.
  if (require_message_authenticator && message_authenticator == radius::MessageAuthenticatorStatus::kAbsent) {
    return fail(VerifyError::kMissingMessageAuthenticator);
  }
  if (response.code() != radius::Code::kAccessAccept) return fail(VerifyError::kUnexpectedCode);
  if (outstanding.kind == RequestKind::kMsChapV2) {
    // RFC 2548 §2.3.3: Ident + "S=" + 40 hex digits.
    const auto success = response.find_vendor(radius::kVendorMicrosoft, radius::ms::kChap2Success);
    if (!success || success->size() != auth::kMsChap2SuccessSize || (*success)[0] != outstanding.identifier) {
      return fail(VerifyError::kBadMsChap2Success);
    }
    const Bytes expected(reinterpret_cast<const std::uint8_t*>(outstanding.authenticator_response.data()),
                         outstanding.authenticator_response.size());
    if (!constant_time_equal(success->subspan(1), expected)) return fail(VerifyError::kBadMsChap2Success);
  }
  return {};
}

}  // namespace rw::bench
