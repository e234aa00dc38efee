// EAP-TTLS version 0 with inner PAP (ttls_method.h; RFC 5281).
#include "eap/ttls_method.h"

#include <algorithm>
#include <utility>

#include "auth/mschap.h"
#include "base/assert.h"
#include "eap/method.h"

namespace rw::eap {

std::string_view to_string(TtlsMethodError error) {
  switch (error) {
    case TtlsMethodError::kFraming:
      return "EAP-TTLS framing refused";
    case TtlsMethodError::kExpectedAck:
      return "expected an EAP-TTLS ACK";
    case TtlsMethodError::kVersion:
      return "EAP-TTLS version other than 0";
    case TtlsMethodError::kUnexpectedAck:
      return "unexpected EAP-TTLS ACK";
    case TtlsMethodError::kIncompleteFlight:
      return "incomplete TLS flight";
    case TtlsMethodError::kTooManyResponses:
      return "too many EAP-TTLS round trips";
    case TtlsMethodError::kTls:
      return "TLS failure";
    case TtlsMethodError::kAvps:
      return "malformed inner AVPs";
    case TtlsMethodError::kUnsupportedAvp:
      return "unsupported mandatory inner AVP";
    case TtlsMethodError::kNoPapCredentials:
      return "no inner User-Name and User-Password";
    case TtlsMethodError::kCredentialTooLong:
      return "inner User-Name or User-Password too long";
    case TtlsMethodError::kRejected:
      return "inner PAP rejected";
    case TtlsMethodError::kMsChapChallenge:
      return "MS-CHAP-Challenge is not the tunnel's";
    case TtlsMethodError::kMsChap2Malformed:
      return "malformed inner MS-CHAPv2";
    case TtlsMethodError::kMsChap2Rejected:
      return "inner MS-CHAPv2 rejected";
    case TtlsMethodError::kMsChap2Ack:
      return "expected the ACK of MS-CHAP2-Success";
  }
  return "EAP-TTLS failure";
}

namespace {

constexpr std::uint8_t kVersionBits = 0x07;  // RFC 5281 §9.1: the low three flag bits.
constexpr std::size_t kUserNameOctetsMax = 253;
constexpr std::size_t kPasswordOctetsMax = 128;  // RFC 2865 §5.2, as for RADIUS PAP.

}  // namespace

TtlsMethod::TtlsMethod(TlsServerContext context, std::string eap_identity, InnerPapCheck check,
                       TtlsMethodOptions options)
    : context_(std::move(context)),
      eap_identity_(std::move(eap_identity)),
      check_(std::move(check)),
      options_(options),
      transfer_(options.fragment_octets, options.reassembly, /*flags_base=*/0) {
  RW_ASSERT(check_);
}

MethodStep TtlsMethod::start() {
  auto session = TlsServerSession::create(context_);
  if (!session) return failure_of_tls(session.error());
  session_ = std::move(*session);
  return request_step(transfer_.start());
}

MethodStep TtlsMethod::on_response(Bytes type_data) {
  if (phase_ == Phase::kDone || !session_) return failure_step("EAP-TTLS conversation not in progress");
  if (++responses_ > options_.responses_max) return failure(TtlsMethodError::kTooManyResponses);
  if (phase_ == Phase::kAlertSent) {
    phase_ = Phase::kDone;  // RFC 5216 §2.1.3, which RFC 5281 follows.
    return failure_step(failure_reason_);
  }
  if (!type_data.empty() && (type_data[0] & kVersionBits) != 0) return failure(TtlsMethodError::kVersion);
  auto step = transfer_.on_response(type_data);
  if (!step) {
    if (step.error() == TlsTransfer::Error::kExpectedAck) return failure(TtlsMethodError::kExpectedAck);
    return failure(TtlsMethodError::kFraming, to_string(*transfer_.framing_error()));
  }
  if (auto* next = std::get_if<TlsTransfer::Request>(&*step)) return request_step(std::move(next->type_data));
  std::vector<std::uint8_t> message = std::move(std::get<TlsTransfer::Message>(*step).records);
  if (phase_ == Phase::kMsChap2SuccessSent) return on_ms_chap2_ack(message);
  if (message.empty()) return failure(TtlsMethodError::kUnexpectedAck);
  return on_message(std::move(message));
}

MethodStep TtlsMethod::on_ms_chap2_ack(const std::vector<std::uint8_t>& message) {
  // RFC 5281 §11.2.4: the peer checked MS-CHAP2-Success and answers with no
  // data; a peer that sends a TLS record instead is heard out, its content
  // ignored, unless TLS refuses it.
  if (!message.empty()) {
    if (auto read = session_->on_records(message); !read) return failure(TtlsMethodError::kMsChap2Ack);
    std::vector<std::uint8_t> ignored = session_->read_application();
    std::fill(ignored.begin(), ignored.end(), 0);
  }
  phase_ = Phase::kDone;
  return success_step(msk_);
}

MethodStep TtlsMethod::on_message(std::vector<std::uint8_t> message) {
  const bool was_done = session_->handshake_done();
  if (auto read = session_->on_records(message); !read) {
    std::vector<std::uint8_t> alert = session_->take_output();
    MethodStep refusal = failure_of_tls(read.error());
    if (alert.empty() || was_done) return refusal;
    phase_ = Phase::kAlertSent;  // The alert goes out; the peer's answer ends it.
    failure_reason_ = std::move(refusal.reason);
    return request_step(transfer_.send(std::move(alert)));
  }
  if (!session_->handshake_done()) {
    std::vector<std::uint8_t> output = session_->take_output();
    if (output.empty()) return failure(TtlsMethodError::kIncompleteFlight);
    return request_step(transfer_.send(std::move(output)));
  }
  if (!was_done) return on_handshake_done();
  std::vector<std::uint8_t> plaintext = session_->read_application();
  if (plaintext.empty()) return failure(TtlsMethodError::kIncompleteFlight);
  return on_inner(std::move(plaintext));
}

MethodStep TtlsMethod::on_handshake_done() {
  phase_ = Phase::kInner;
  const bool v13 = session_->version() == TlsVersion::k1_3;
  auto material = v13 ? session_->export_key("EXPORTER_EAP_TLS_Key_Material", Bytes(&kTtlsKeyContext, 1), 128)
                      : session_->export_key(kTtlsKeyLabel, std::nullopt, 128);
  if (!material) return failure_of_tls(material.error());
  Msk msk;
  std::copy_n(material->begin(), msk.size(), msk.begin());
  std::fill(material->begin(), material->end(), 0);
  msk_ = msk;
  auto challenge = session_->export_key(kTtlsChallengeLabel, std::nullopt, ms_chap_challenge_.size());
  if (!challenge) return failure_of_tls(challenge.error());
  std::copy(challenge->begin(), challenge->end(), ms_chap_challenge_.begin());
  // TLS 1.3: the peer may have sent its AVPs with its Finished.
  std::vector<std::uint8_t> plaintext = session_->read_application();
  if (!plaintext.empty()) return on_inner(std::move(plaintext));
  std::vector<std::uint8_t> output = session_->take_output();
  // TLS 1.2: our ChangeCipherSpec and Finished; the AVPs come in answer.
  // TLS 1.3: nothing is due from us, so an empty request asks for the AVPs.
  return request_step(output.empty() ? transfer_.ack() : transfer_.send(std::move(output)));
}

MethodStep TtlsMethod::on_inner(std::vector<std::uint8_t> plaintext) {
  // The password travels in clear inside the tunnel: wipe it on every path.
  struct Wipe {
    std::vector<std::uint8_t>& octets;
    ~Wipe() { std::fill(octets.begin(), octets.end(), 0); }
  } wipe{plaintext};
  auto avps = parse_avps(plaintext, options_.avps_max);
  if (!avps) return failure(TtlsMethodError::kAvps, to_string(avps.error()));
  std::optional<Bytes> user_name;
  std::optional<Bytes> password;
  std::optional<Bytes> ms_chap_challenge;
  std::optional<Bytes> ms_chap2_response;
  const bool ms_chap2 = static_cast<bool>(options_.ms_chap2_credential);
  for (const Avp& avp : *avps) {
    if (!avp.vendor_id && avp.code == kAvpUserName) {
      user_name = avp.data;
    } else if (!avp.vendor_id && avp.code == kAvpUserPassword) {
      password = avp.data;
    } else if (ms_chap2 && avp.vendor_id == kVendorMicrosoft && avp.code == kAvpMsChapChallenge) {
      ms_chap_challenge = avp.data;
    } else if (ms_chap2 && avp.vendor_id == kVendorMicrosoft && avp.code == kAvpMsChap2Response) {
      ms_chap2_response = avp.data;
    } else if ((avp.flags & kAvpFlagMandatory) != 0) {
      return failure(TtlsMethodError::kUnsupportedAvp);  // RFC 5281 §10.2.
    }
  }
  if (user_name && ms_chap2_response) {
    return on_ms_chap2(*user_name, ms_chap_challenge, *ms_chap2_response);
  }
  if (!user_name || !password) return failure(TtlsMethodError::kNoPapCredentials);
  // RFC 5281 §11.2.5: the password may be padded with NULs to 16 octets.
  while (!password->empty() && password->back() == 0) *password = password->first(password->size() - 1);
  if (user_name->size() > kUserNameOctetsMax || password->size() > kPasswordOctetsMax) {
    return failure(TtlsMethodError::kCredentialTooLong);
  }
  inner_user_name_ = std::string(as_chars(*user_name));
  const InnerDecision decision = check_(inner_user_name_, as_chars(*password));
  if (!decision.accepted) return failure(TtlsMethodError::kRejected, decision.reason);
  phase_ = Phase::kDone;
  return success_step(msk_);
}

MethodStep TtlsMethod::on_ms_chap2(Bytes user_name, std::optional<Bytes> challenge, Bytes response) {
  if (user_name.size() > kUserNameOctetsMax) return failure(TtlsMethodError::kCredentialTooLong);
  inner_user_name_ = std::string(as_chars(user_name));
  // RFC 5281 §11.2.4: the challenge and the Ident are the tunnel's, so a
  // response recorded in another conversation is worthless here.
  if (!challenge || response.size() != auth::kMsChapResponseSize) {
    return failure(TtlsMethodError::kMsChap2Malformed);
  }
  const Bytes expected(ms_chap_challenge_);
  if (!constant_time_equal(*challenge, expected.first(16)) || response[0] != expected[16]) {
    return failure(TtlsMethodError::kMsChapChallenge);
  }
  const std::optional<auth::Credential> credential = options_.ms_chap2_credential(inner_user_name_);
  if (!credential) return failure(TtlsMethodError::kMsChap2Rejected, "unknown user");
  const auto accept = auth::verify_ms_chap2(*credential, auth::MsChap2Request{.ms_chap_challenge = *challenge,
                                                                              .ms_chap2_response = response,
                                                                              .user_name = inner_user_name_});
  if (!accept) {
    const bool wrong = accept.error() == auth::AuthError::kWrongPassword;
    return failure(TtlsMethodError::kMsChap2Rejected,
                   wrong ? "wrong password" : "stored password unusable for MS-CHAPv2");
  }
  // The authenticator response goes back in MS-CHAP2-Success; EAP-Success
  // follows the peer's empty answer.
  const std::vector<std::uint8_t> avp =
      encode_vendor_avp(kVendorMicrosoft, kAvpMsChap2Success, accept->ms_chap2_success);
  if (auto wrote = session_->write_application(avp); !wrote) return failure_of_tls(wrote.error());
  phase_ = Phase::kMsChap2SuccessSent;
  return request_step(transfer_.send(session_->take_output()));
}

MethodStep TtlsMethod::failure(TtlsMethodError error, std::string_view detail) {
  error_ = error;
  phase_ = Phase::kDone;
  msk_.reset();
  std::string reason(to_string(error));
  if (!detail.empty()) reason += ": " + std::string(detail);
  return failure_step(std::move(reason));
}

MethodStep TtlsMethod::failure_of_tls(TlsFailure failure) {
  error_ = TtlsMethodError::kTls;
  tls_failure_ = failure;
  phase_ = Phase::kDone;
  msk_.reset();
  return failure_step(std::string(to_string(failure)));
}

}  // namespace rw::eap
