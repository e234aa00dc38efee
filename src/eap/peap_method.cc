// PEAPv0 with inner EAP-MSCHAPv2 (peap_method.h).
#include "eap/peap_method.h"

#include <algorithm>
#include <utility>

#include "base/assert.h"
#include "eap/method.h"
#include "eap/tls_method.h"

namespace rw::eap {

std::string_view to_string(PeapMethodError error) {
  switch (error) {
    case PeapMethodError::kFraming:
      return "PEAP framing refused";
    case PeapMethodError::kExpectedAck:
      return "expected a PEAP ACK";
    case PeapMethodError::kVersion:
      return "PEAP version other than 0";
    case PeapMethodError::kUnexpectedAck:
      return "unexpected PEAP ACK";
    case PeapMethodError::kIncompleteFlight:
      return "incomplete TLS flight";
    case PeapMethodError::kTooManyResponses:
      return "too many PEAP round trips";
    case PeapMethodError::kTls:
      return "TLS failure";
    case PeapMethodError::kInnerUnexpectedType:
      return "inner EAP response of an unexpected Type";
    case PeapMethodError::kInnerIdentity:
      return "inner EAP-Identity empty or too long";
    case PeapMethodError::kInnerMalformed:
      return "malformed inner EAP-MSCHAPv2";
    case PeapMethodError::kInnerRejected:
      return "inner EAP-MSCHAPv2 rejected";
    case PeapMethodError::kExtensions:
      return "malformed Extensions response";
    case PeapMethodError::kPeerResultFailure:
      return "the peer's Result TLV is Failure";
    case PeapMethodError::kCryptoBindingMissing:
      return "no Crypto-Binding TLV from the peer";
    case PeapMethodError::kCryptoBindingInvalid:
      return "wrong Compound MAC in the Crypto-Binding TLV";
  }
  return "PEAP failure";
}

namespace {

constexpr std::uint8_t kVersionBits = 0x07;  // The low three flag bits carry the PEAP version.
constexpr std::size_t kInnerIdentityOctetsMax = 253;
constexpr std::size_t kTempKeyOctets = 40;  // [MS-PEAP] §3.1.5.5.2.2: the first 40 octets of TK.

bool rejected_by_password_check(MsChapV2Error error) {
  switch (error) {
    case MsChapV2Error::kNameMismatch:
    case MsChapV2Error::kUnknownUser:
    case MsChapV2Error::kUnusableCredential:
    case MsChapV2Error::kWrongPassword:
      return true;
    default:
      return false;
  }
}

}  // namespace

PeapMethod::PeapMethod(TlsServerContext context, std::string eap_identity, InnerCredentialLookup lookup,
                       RandomSource& random, PeapMethodOptions options)
    : context_(std::move(context)),
      eap_identity_(std::move(eap_identity)),
      lookup_(std::move(lookup)),
      random_(random),
      options_(std::move(options)),
      transfer_(options_.fragment_octets, options_.reassembly, /*flags_base=*/0) {
  RW_ASSERT(lookup_);
}

std::string_view PeapMethod::decided_identity() const {
  return succeeded_ ? std::string_view(inner_identity_) : std::string_view();
}

std::optional<MsChapV2Error> PeapMethod::inner_error() const {
  return inner_ ? inner_->error() : std::nullopt;
}

MethodStep PeapMethod::start() {
  auto session = TlsServerSession::create(context_);
  if (!session) return failure_of_tls(session.error());
  session_ = std::move(*session);
  // The Start offers version 0, the only one built: a peer must answer
  // with it or fail (docs/authentication.md "PEAP").
  return request_step(transfer_.start());
}

MethodStep PeapMethod::on_response(Bytes type_data) {
  if (phase_ == Phase::kDone || !session_) return failure_step("PEAP conversation not in progress");
  if (++responses_ > options_.responses_max) return failure(PeapMethodError::kTooManyResponses);
  if (phase_ == Phase::kAlertSent) {
    phase_ = Phase::kDone;  // RFC 5216 §2.1.3, which PEAP follows.
    return failure_step(failure_reason_);
  }
  if (!type_data.empty() && (type_data[0] & kVersionBits) != 0) return failure(PeapMethodError::kVersion);
  auto step = transfer_.on_response(type_data);
  if (!step) {
    if (step.error() == TlsTransfer::Error::kExpectedAck) return failure(PeapMethodError::kExpectedAck);
    return failure(PeapMethodError::kFraming, to_string(*transfer_.framing_error()));
  }
  if (auto* next = std::get_if<TlsTransfer::Request>(&*step)) return request_step(std::move(next->type_data));
  std::vector<std::uint8_t> message = std::move(std::get<TlsTransfer::Message>(*step).records);
  if (phase_ == Phase::kFinishedSent && message.empty()) {
    phase_ = Phase::kIdentity;
    return send_inner(Type::kIdentity, {});
  }
  if (message.empty()) return failure(PeapMethodError::kUnexpectedAck);
  return on_message(std::move(message));
}

MethodStep PeapMethod::on_message(std::vector<std::uint8_t> message) {
  const bool was_done = session_->handshake_done();
  if (auto read = session_->on_records(message); !read) {
    std::vector<std::uint8_t> alert = session_->take_output();
    MethodStep refusal = failure_of_tls(read.error());
    if (alert.empty() || was_done) return refusal;
    phase_ = Phase::kAlertSent;
    failure_reason_ = std::move(refusal.reason);
    return request_step(transfer_.send(std::move(alert)));
  }
  if (!session_->handshake_done()) {
    std::vector<std::uint8_t> output = session_->take_output();
    if (output.empty()) return failure(PeapMethodError::kIncompleteFlight);
    return request_step(transfer_.send(std::move(output)));
  }
  if (!was_done) return on_handshake_done();
  std::vector<std::uint8_t> plaintext = session_->read_application();
  if (plaintext.empty()) return failure(PeapMethodError::kIncompleteFlight);
  MethodStep step = on_inner(plaintext);
  std::fill(plaintext.begin(), plaintext.end(), 0);
  return step;
}

MethodStep PeapMethod::on_handshake_done() {
  version_ = session_->version();
  const bool v13 = *version_ == TlsVersion::k1_3;
  auto material =
      v13 ? session_->export_key(kTls13KeyLabel, Bytes(&kPeapKeyContext, 1), kTlsKeyMaterialOctets)
          : session_->export_key(kTls12KeyLabel, std::nullopt, kTlsKeyMaterialOctets);
  if (!material) return failure_of_tls(material.error());
  key_material_ = std::move(*material);
  if (!v13) {
    // TLS 1.2: our ChangeCipherSpec and Finished go alone, as the peer
    // expects; its ACK starts phase 2.
    std::vector<std::uint8_t> output = session_->take_output();
    if (output.empty()) return failure(PeapMethodError::kIncompleteFlight);
    phase_ = Phase::kFinishedSent;
    return request_step(transfer_.send(std::move(output)));
  }
  // TLS 1.3: our Finished went in the first flight; phase 2 starts at once,
  // behind whatever TLS still had to say (send_plaintext takes it all).
  phase_ = Phase::kIdentity;
  return send_inner(Type::kIdentity, {});
}

MethodStep PeapMethod::on_inner(Bytes plaintext) {
  switch (phase_) {
    case Phase::kIdentity:
      return on_inner_identity(plaintext);
    case Phase::kMsChapV2:
      return on_inner_ms_chap_v2(plaintext);
    case Phase::kResult:
      return on_result(plaintext);
    default:
      return failure(PeapMethodError::kIncompleteFlight);
  }
}

// PEAPv0 compresses inner packets other than Extensions to Type and
// Type-Data: no Code, Identifier or Length ([MS-PEAP] §2.2.5).
MethodStep PeapMethod::on_inner_identity(Bytes plaintext) {
  if (plaintext[0] != static_cast<std::uint8_t>(Type::kIdentity)) {
    return failure(PeapMethodError::kInnerUnexpectedType);
  }
  const Bytes identity = plaintext.subspan(1);
  if (identity.empty() || identity.size() > kInnerIdentityOctetsMax) {
    return failure(PeapMethodError::kInnerIdentity);
  }
  inner_identity_ = std::string(as_chars(identity));
  inner_ = std::make_unique<EapMsChapV2>(inner_identity_, lookup_, random_, options_.server_name);
  phase_ = Phase::kMsChapV2;
  const MethodStep challenge = inner_->start();
  return send_inner(Type::kMsChapV2, challenge.type_data);
}

MethodStep PeapMethod::on_inner_ms_chap_v2(Bytes plaintext) {
  // A Nak (Type 3) lands here too: the peer refuses EAP-MSCHAPv2, the only inner method.
  if (plaintext[0] != static_cast<std::uint8_t>(Type::kMsChapV2)) {
    return failure(PeapMethodError::kInnerUnexpectedType);
  }
  const MethodStep step = inner_->on_response(plaintext.subspan(1));
  switch (step.kind) {
    case MethodStep::Kind::kRequest:
      return send_inner(Type::kMsChapV2, step.type_data);
    case MethodStep::Kind::kSuccess:
      return send_result(kResultSuccess);
    case MethodStep::Kind::kCredential:  // EapMsChapV2 asks its own lookup, never the conversation.
    case MethodStep::Kind::kFailure:
      break;
  }
  const std::optional<MsChapV2Error> error = inner_->error();
  if (!error || !rejected_by_password_check(*error))
    return failure(PeapMethodError::kInnerMalformed, step.reason);
  // The password check refused, and the peer saw the E=691 Failure: the
  // Result TLV says Failure, and EAP-Failure follows the peer's answer.
  error_ = PeapMethodError::kInnerRejected;
  failure_reason_ = std::string(to_string(PeapMethodError::kInnerRejected)) + ": " + step.reason;
  return send_result(kResultFailure);
}

MethodStep PeapMethod::send_result(std::uint16_t result) {
  std::array<std::uint8_t, 1> identifier{};
  random_.fill(identifier);
  extensions_identifier_ = identifier[0];
  result_sent_ = result;
  phase_ = Phase::kResult;
  std::optional<std::array<std::uint8_t, kCryptoBindingTlvOctets>> binding;
  if (result == kResultSuccess && options_.crypto_binding != PeapCryptoBinding::kOff &&
      *version_ == TlsVersion::k1_2) {
    // [MS-PEAP] §3.1.5.5.2: TempKey, the first 40 octets of TK, and the ISK
    // of the inner MS-CHAPv2 give IPMK and CMK.
    const InnerSessionKey& isk = *inner_->inner_session_key();
    const CompoundKeys keys = compound_keys(Bytes(key_material_).first(kTempKeyOctets), isk);
    ipmk_ = keys.ipmk;
    cmk_ = keys.cmk;
    std::array<std::uint8_t, kCryptoBindingNonceOctets> nonce{};
    random_.fill(nonce);
    binding = crypto_binding_request(*cmk_, nonce);
  }
  const std::vector<std::uint8_t> packet = extensions_request(
      extensions_identifier_, result, binding ? std::optional<Bytes>(*binding) : std::nullopt);
  return send_plaintext(packet);
}

MethodStep PeapMethod::on_result(Bytes plaintext) {
  auto response = parse_extensions_response(plaintext, extensions_identifier_, options_.tlvs_max);
  if (result_sent_ == kResultFailure) {
    phase_ = Phase::kDone;
    wipe_keys();
    return failure_step(failure_reason_);  // Whatever the peer answers.
  }
  if (!response) return failure(PeapMethodError::kExtensions, to_string(response.error()));
  if (response->result != kResultSuccess) return failure(PeapMethodError::kPeerResultFailure);
  Msk msk{};
  if (cmk_ && response->crypto_binding) {
    const CompoundMac expected = compound_mac(*cmk_, response->crypto_binding->whole);
    if (!constant_time_equal(expected, response->crypto_binding->compound_mac)) {
      return failure(PeapMethodError::kCryptoBindingInvalid);
    }
    crypto_bound_ = true;
    msk = cryptobinding_msk(*ipmk_);
  } else if (cmk_ && options_.crypto_binding == PeapCryptoBinding::kRequired) {
    return failure(PeapMethodError::kCryptoBindingMissing);
  } else {
    std::copy_n(key_material_.begin(), msk.size(), msk.begin());
  }
  wipe_keys();
  phase_ = Phase::kDone;
  succeeded_ = true;
  return success_step(msk);
}

MethodStep PeapMethod::send_inner(Type type, Bytes type_data) {
  std::vector<std::uint8_t> plaintext{static_cast<std::uint8_t>(type)};
  plaintext.insert(plaintext.end(), type_data.begin(), type_data.end());
  return send_plaintext(plaintext);
}

MethodStep PeapMethod::send_plaintext(Bytes plaintext) {
  if (auto wrote = session_->write_application(plaintext); !wrote) return failure_of_tls(wrote.error());
  return request_step(transfer_.send(session_->take_output()));
}

MethodStep PeapMethod::failure(PeapMethodError error, std::string_view detail) {
  error_ = error;
  phase_ = Phase::kDone;
  wipe_keys();
  std::string reason(to_string(error));
  if (!detail.empty()) reason += ": " + std::string(detail);
  return failure_step(std::move(reason));
}

MethodStep PeapMethod::failure_of_tls(TlsFailure failure) {
  error_ = PeapMethodError::kTls;
  tls_failure_ = failure;
  phase_ = Phase::kDone;
  wipe_keys();
  return failure_step(std::string(to_string(failure)));
}

void PeapMethod::wipe_keys() {
  std::fill(key_material_.begin(), key_material_.end(), 0);
  if (ipmk_) ipmk_->fill(0);
  if (cmk_) cmk_->fill(0);
}

}  // namespace rw::eap
