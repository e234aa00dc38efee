// EAP-MSCHAPv2, the server's side (eap_mschapv2.h).
#include "eap/eap_mschapv2.h"

#include <algorithm>
#include <utility>

#include "auth/mschap.h"
#include "base/assert.h"
#include "eap/method.h"

namespace rw::eap {

std::string_view to_string(MsChapV2Error error) {
  switch (error) {
    case MsChapV2Error::kEmpty:
      return "empty EAP-MSCHAPv2 packet";
    case MsChapV2Error::kUnexpectedOpCode:
      return "unexpected EAP-MSCHAPv2 OpCode";
    case MsChapV2Error::kTruncated:
      return "truncated EAP-MSCHAPv2 Response";
    case MsChapV2Error::kWrongValueSize:
      return "EAP-MSCHAPv2 Value-Size other than 49";
    case MsChapV2Error::kWrongId:
      return "EAP-MSCHAPv2 ID does not match the Challenge";
    case MsChapV2Error::kNameTooLong:
      return "EAP-MSCHAPv2 Name too long";
    case MsChapV2Error::kNameMismatch:
      return "EAP-MSCHAPv2 Name is not the inner identity";
    case MsChapV2Error::kUnknownUser:
      return "unknown user";
    case MsChapV2Error::kUnusableCredential:
      return "stored password unusable for MS-CHAPv2";
    case MsChapV2Error::kWrongPassword:
      return "wrong password";
  }
  return "EAP-MSCHAPv2 failure";
}

namespace {

constexpr std::size_t kHeaderOctets = 4;  // OpCode, MS-CHAPv2-ID, MS-Length.
constexpr std::uint8_t kResponseValueSize = 49;
constexpr std::size_t kResponseFixedOctets = kHeaderOctets + 1 + kResponseValueSize;
constexpr std::size_t kServerNameOctetsMax = 64;

}  // namespace

Result<MsChapV2Response, MsChapV2Error> parse_ms_chap_v2_response(Bytes type_data) {
  if (type_data.empty()) return fail(MsChapV2Error::kEmpty);
  if (type_data[0] != static_cast<std::uint8_t>(MsChapV2OpCode::kResponse)) {
    return fail(MsChapV2Error::kUnexpectedOpCode);
  }
  ByteReader reader(type_data);
  std::uint8_t op_code = 0;
  MsChapV2Response response;
  std::uint16_t ms_length = 0;
  std::uint8_t value_size = 0;
  if (!reader.read_u8(op_code) || !reader.read_u8(response.ms_chap_v2_id) || !reader.read_u16(ms_length) ||
      !reader.read_u8(value_size)) {
    return fail(MsChapV2Error::kTruncated);
  }
  // The draft's MS-Length counts from the OpCode: it must cover the fixed
  // fields and stay inside the data.
  if (ms_length < kResponseFixedOctets || ms_length > type_data.size())
    return fail(MsChapV2Error::kTruncated);
  if (value_size != kResponseValueSize) return fail(MsChapV2Error::kWrongValueSize);
  response.peer_challenge = reader.read_bytes(16);
  (void)reader.read_bytes(8);  // Reserved (RFC 2759 §4: sent as zero, not checked).
  response.nt_response = reader.read_bytes(24);
  if (!reader.read_u8(response.flags)) return fail(MsChapV2Error::kTruncated);
  response.name = type_data.subspan(kResponseFixedOctets, ms_length - kResponseFixedOctets);
  if (response.name.size() > kMsChapV2NameOctetsMax) return fail(MsChapV2Error::kNameTooLong);
  return response;
}

EapMsChapV2::EapMsChapV2(std::string inner_identity, InnerCredentialLookup lookup, RandomSource& random,
                         std::string server_name)
    : inner_identity_(std::move(inner_identity)),
      lookup_(std::move(lookup)),
      random_(random),
      server_name_(std::move(server_name)) {
  RW_ASSERT(lookup_);
  RW_ASSERT(server_name_.size() <= kServerNameOctetsMax);
}

std::string_view EapMsChapV2::decided_identity() const {
  return isk_ ? std::string_view(inner_identity_) : std::string_view();
}

std::vector<std::uint8_t> EapMsChapV2::packet(MsChapV2OpCode op_code, Bytes body) const {
  const std::size_t ms_length = kHeaderOctets + body.size();
  std::vector<std::uint8_t> out(ms_length);
  out[0] = static_cast<std::uint8_t>(op_code);
  out[1] = id_;
  out[2] = static_cast<std::uint8_t>(ms_length >> 8);
  out[3] = static_cast<std::uint8_t>(ms_length & 0xFF);
  std::copy(body.begin(), body.end(), out.begin() + kHeaderOctets);
  return out;
}

MethodStep EapMsChapV2::start() {
  RW_ASSERT(phase_ == Phase::kIdle);
  std::array<std::uint8_t, 1> id{};
  random_.fill(id);
  id_ = id[0];
  random_.fill(challenge_);
  std::vector<std::uint8_t> body(1 + challenge_.size() + server_name_.size());
  body[0] = static_cast<std::uint8_t>(challenge_.size());  // Value-Size.
  std::copy(challenge_.begin(), challenge_.end(), body.begin() + 1);
  std::copy(server_name_.begin(), server_name_.end(),
            body.begin() + 1 + static_cast<std::ptrdiff_t>(challenge_.size()));
  phase_ = Phase::kChallengeSent;
  return request_step(packet(MsChapV2OpCode::kChallenge, body));
}

MethodStep EapMsChapV2::on_response(Bytes type_data) {
  switch (phase_) {
    case Phase::kChallengeSent:
      return on_peer_response(type_data);
    case Phase::kSuccessSent:
      // The peer's acknowledgement is the OpCode alone (draft §2.4); what
      // follows it is ignored, as the draft defines nothing there.
      if (type_data.empty() || type_data[0] != static_cast<std::uint8_t>(MsChapV2OpCode::kSuccess)) {
        isk_.reset();
        return fail(MsChapV2Error::kUnexpectedOpCode);
      }
      phase_ = Phase::kDone;
      return success_step(std::nullopt);
    case Phase::kFailureSent:
      // Whatever the peer answers, the exchange failed (draft §2.5).
      phase_ = Phase::kDone;
      return failure_step(std::string(to_string(*error_)));
    case Phase::kIdle:
    case Phase::kDone:
      break;
  }
  return failure_step("EAP-MSCHAPv2 exchange not in progress");
}

MethodStep EapMsChapV2::on_peer_response(Bytes type_data) {
  auto response = parse_ms_chap_v2_response(type_data);
  if (!response) return fail(response.error());
  if (response->ms_chap_v2_id != id_) return fail(MsChapV2Error::kWrongId);
  // RFC 2759 §8.2 hashes the name without its domain; the Name must be the
  // identity the credential is looked up by.
  if (auth::ms_chap_user_name(as_chars(response->name)) != auth::ms_chap_user_name(inner_identity_)) {
    return send_failure(MsChapV2Error::kNameMismatch);
  }
  const std::optional<auth::Credential> credential = lookup_(inner_identity_);
  if (!credential) return send_failure(MsChapV2Error::kUnknownUser);
  // verify_ms_chap2 reads RFC 2548's MS-CHAP2-Response layout; the same
  // fields in that order.
  auth::NtResponse nt_response{};
  std::copy_n(response->nt_response.begin(), nt_response.size(), nt_response.begin());
  const auto value =
      auth::ms_chap2_response_value(response->ms_chap_v2_id, response->peer_challenge, nt_response);
  const auto accept =
      auth::verify_ms_chap2(*credential, auth::MsChap2Request{.ms_chap_challenge = challenge_,
                                                              .ms_chap2_response = value,
                                                              .user_name = as_chars(response->name)});
  if (!accept) {
    return send_failure(accept.error() == auth::AuthError::kWrongPassword
                            ? MsChapV2Error::kWrongPassword
                            : MsChapV2Error::kUnusableCredential);
  }
  InnerSessionKey isk{};
  std::copy(accept->mppe.recv_key.begin(), accept->mppe.recv_key.end(), isk.begin());
  std::copy(accept->mppe.send_key.begin(), accept->mppe.send_key.end(), isk.begin() + auth::kMppeKeySize);
  isk_ = isk;
  // draft §2.3: "S=<authenticator response> M=<message>"; the Ident octet
  // of the RADIUS attribute is not part of it.
  std::string message(as_chars(Bytes(accept->ms_chap2_success).subspan(1)));
  message += " M=OK";
  phase_ = Phase::kSuccessSent;
  return request_step(packet(MsChapV2OpCode::kSuccess, as_bytes(message)));
}

MethodStep EapMsChapV2::send_failure(MsChapV2Error error) {
  // draft §2.5: "E=691 R=0 C=<challenge> V=3 M=..." (RFC 2759 §6); R=0,
  // so the peer does not retry.
  error_ = error;
  const auth::MsChapError text = auth::ms_chap2_error(id_, random_);
  phase_ = Phase::kFailureSent;
  return request_step(packet(MsChapV2OpCode::kFailure, text.value().subspan(1)));
}

MethodStep EapMsChapV2::fail(MsChapV2Error error) {
  error_ = error;
  phase_ = Phase::kDone;
  return failure_step(std::string(to_string(error)));
}

}  // namespace rw::eap
