// EAP-TLS as an eap::Method (tls_method.h; RFC 5216, RFC 9190).
#include "eap/tls_method.h"

#include <algorithm>
#include <utility>

#include "eap/method.h"

namespace rw::eap {

std::string_view to_string(TlsMethodError error) {
  switch (error) {
    case TlsMethodError::kFraming:
      return "EAP-TLS framing refused";
    case TlsMethodError::kExpectedAck:
      return "expected an EAP-TLS ACK";
    case TlsMethodError::kUnexpectedAck:
      return "unexpected EAP-TLS ACK";
    case TlsMethodError::kIncompleteFlight:
      return "incomplete TLS flight";
    case TlsMethodError::kTooManyResponses:
      return "too many EAP-TLS round trips";
    case TlsMethodError::kDataAfterHandshake:
      return "TLS data after the handshake";
    case TlsMethodError::kTls:
      return "TLS failure";
  }
  return "EAP-TLS failure";
}

TlsMethod::TlsMethod(TlsServerContext context, std::string eap_identity, TlsMethodOptions options)
    : context_(std::move(context)),
      eap_identity_(std::move(eap_identity)),
      options_(options),
      transfer_(options.fragment_octets, options.reassembly) {}

const std::optional<PeerCertificate>& TlsMethod::peer_certificate() const {
  static const std::optional<PeerCertificate> kNone;
  return succeeded_ ? session_->peer_certificate() : kNone;
}

MethodStep TlsMethod::start() {
  auto session = TlsServerSession::create(context_);
  if (!session) return tls_failure(session.error());
  session_ = std::move(*session);
  return request_step(transfer_.start());
}

MethodStep TlsMethod::on_response(Bytes type_data) {
  if (phase_ == Phase::kDone || !session_) {
    return failure_step("EAP-TLS conversation not in progress");
  }
  if (++responses_ > options_.responses_max) return failure(TlsMethodError::kTooManyResponses);
  if (phase_ == Phase::kAlertSent) {
    // RFC 5216 §2.1.3: the peer acknowledged the alert; EAP-Failure follows.
    phase_ = Phase::kDone;
    return failure_step(failure_reason_);
  }
  auto step = transfer_.on_response(type_data);
  if (!step) {
    frame_error_ = transfer_.framing_error();
    return failure(step.error() == TlsTransfer::Error::kFraming ? TlsMethodError::kFraming
                                                                : TlsMethodError::kExpectedAck);
  }
  if (auto* next = std::get_if<TlsTransfer::Request>(&*step)) return request_step(std::move(next->type_data));
  std::vector<std::uint8_t> message = std::move(std::get<TlsTransfer::Message>(*step).records);
  if (phase_ == Phase::kFinalSent) {
    if (message.empty()) return success();
    // The peer refused our last flight (an alert) or sent what it must not.
    if (auto read = session_->on_records(message); !read) return tls_failure(read.error());
    return failure(TlsMethodError::kDataAfterHandshake);
  }
  if (message.empty()) return failure(TlsMethodError::kUnexpectedAck);
  return on_message(std::move(message));
}

MethodStep TlsMethod::on_message(std::vector<std::uint8_t> message) {
  if (auto read = session_->on_records(message); !read) {
    std::vector<std::uint8_t> alert = session_->take_output();
    MethodStep refusal = tls_failure(read.error());
    if (alert.empty()) return refusal;
    // RFC 5216 §2.1.3: the alert goes to the peer; its ACK ends the conversation.
    phase_ = Phase::kAlertSent;
    failure_reason_ = std::move(refusal.reason);
    return send(std::move(alert));
  }
  if (session_->handshake_done()) return on_handshake_done();
  std::vector<std::uint8_t> output = session_->take_output();
  if (output.empty()) return failure(TlsMethodError::kIncompleteFlight);
  return send(std::move(output));
}

MethodStep TlsMethod::on_handshake_done() {
  // RFC 5216 §2.1.1: EAP-TLS authenticates the peer by its certificate.
  if (!session_->peer_certificate()) return tls_failure(TlsFailure::kNoClientCertificate);
  version_ = session_->version();
  resumed_ = session_->resumed();
  Result<std::vector<std::uint8_t>, TlsFailure> material = fail(TlsFailure::kInternal);
  if (*version_ == TlsVersion::k1_3) {
    // RFC 9190 §2.5: one octet 0x00 of application data is the protected
    // success indication: no handshake message follows it.
    constexpr std::uint8_t kSuccessIndication = 0x00;
    if (auto wrote = session_->write_application(Bytes(&kSuccessIndication, 1)); !wrote) {
      return tls_failure(wrote.error());
    }
    material = session_->export_key(kTls13KeyLabel, Bytes(&kTls13KeyContext, 1), kTlsKeyMaterialOctets);
  } else {
    material = session_->export_key(kTls12KeyLabel, std::nullopt, kTlsKeyMaterialOctets);
  }
  if (!material) return tls_failure(material.error());
  Msk msk;
  std::copy_n(material->begin(), msk.size(), msk.begin());
  std::fill(material->begin(), material->end(), 0);
  msk_ = msk;
  std::vector<std::uint8_t> output = session_->take_output();
  // RFC 5216 §2.1.2: a resumed TLS 1.2 session ends with the peer's
  // Finished, the server's went first; EAP-Success follows it directly.
  if (output.empty() && resumed_ && *version_ == TlsVersion::k1_2) return success();
  if (output.empty()) return failure(TlsMethodError::kIncompleteFlight);
  phase_ = Phase::kFinalSent;
  return send(std::move(output));
}

MethodStep TlsMethod::send(std::vector<std::uint8_t> tls_message) {
  return request_step(transfer_.send(std::move(tls_message)));
}

MethodStep TlsMethod::failure(TlsMethodError error) {
  error_ = error;
  phase_ = Phase::kDone;
  msk_.reset();
  std::string reason(to_string(error));
  if (error == TlsMethodError::kFraming && frame_error_)
    reason += ": " + std::string(to_string(*frame_error_));
  return failure_step(std::move(reason));
}

MethodStep TlsMethod::tls_failure(TlsFailure failure) {
  error_ = TlsMethodError::kTls;
  tls_failure_ = failure;
  phase_ = Phase::kDone;
  msk_.reset();
  return failure_step(std::string(to_string(failure)));
}

MethodStep TlsMethod::success() {
  phase_ = Phase::kDone;
  succeeded_ = true;
  const PeerCertificate& peer = *session_->peer_certificate();
  if (!peer.subject_common_name.empty()) {
    decided_identity_ = peer.subject_common_name;
  } else if (!peer.subject_alt_names.empty()) {
    decided_identity_ = peer.subject_alt_names.front();
  } else {
    decided_identity_ = eap_identity_;
  }
  return success_step(msk_);
}

}  // namespace rw::eap
