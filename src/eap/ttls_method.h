// EAP-TTLS version 0 (RFC 5281) with inner PAP or MS-CHAPv2 as an
// eap::Method, Type 21: the same framing (TlsTransfer) and TLS engine
// (TlsServerSession) as EAP-TLS, then the peer's User-Name and
// User-Password AVPs inside the tunnel, checked by a callback the caller
// supplies, or its MS-CHAP-Challenge and MS-CHAP2-Response AVPs checked
// against the user's stored password (RFC 5281 §11.2.4;
// docs/authentication.md "EAP-TTLS"). Does no I/O of its own and assumes no
// thread.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "eap/eap_mschapv2.h"
#include "eap/method.h"
#include "eap/tls_fragments.h"
#include "eap/tls_server_context.h"
#include "eap/tls_session.h"
#include "eap/ttls_avps.h"

namespace rw::eap {

// RFC 5281 §8 (TLS 1.2): PRF(master_secret, "ttls keying material",
// client.random || server.random), 128 octets, MSK the first 64. TLS 1.3
// (RFC 9427 §2.1): TLS-Exporter("EXPORTER_EAP_TLS_Key_Material", Type 21, 128).
inline constexpr std::string_view kTtlsKeyLabel = "ttls keying material";
inline constexpr std::uint8_t kTtlsKeyContext = 0x15;
// RFC 5281 §11.2.4: the MS-CHAP challenge (16 octets) and Ident (1) come
// from PRF(master_secret, "ttls challenge", client.random || server.random);
// over TLS 1.3, from the exporter with the same label and no context.
inline constexpr std::string_view kTtlsChallengeLabel = "ttls challenge";

// The verdict on the inner PAP credentials; `reason` names a refusal for
// the decision log (no secrets).
struct InnerDecision {
  bool accepted = false;
  std::string reason{};
};
// Checks an inner User-Name and User-Password (NUL padding removed). Called
// at most once per conversation, from on_response.
using InnerPapCheck = std::function<InnerDecision(std::string_view user_name, std::string_view password)>;

struct TtlsMethodOptions {
  std::size_t fragment_octets = kTlsFragmentOctetsDefault;
  TlsReassemblyLimits reassembly{};
  std::size_t responses_max = 256;
  std::size_t avps_max = 32;  // AVPs in the peer's inner message.
  // The stored password of an inner MS-CHAPv2 user. Absent: MS-CHAPv2
  // inside is refused as an unsupported mandatory AVP.
  InnerCredentialLookup ms_chap2_credential{};
};

enum class TtlsMethodError : std::uint8_t {
  kFraming,            // The response's framing was refused.
  kExpectedAck,        // Data where an ACK of our fragment was due.
  kVersion,            // The peer's flags name a version other than 0.
  kUnexpectedAck,      // An ACK where a TLS message was due.
  kIncompleteFlight,   // A whole message after which TLS had nothing to answer.
  kTooManyResponses,   // responses_max reached.
  kTls,                // The TLS session failed (TlsFailure says how).
  kAvps,               // The inner AVPs are malformed (AvpError says how).
  kUnsupportedAvp,     // An AVP with M set that is not User-Name or User-Password (RFC 5281 §10.2).
  kNoPapCredentials,   // No User-Name or no User-Password AVP.
  kCredentialTooLong,  // User-Name over 253 or User-Password over 128 octets.
  kRejected,           // The credential check refused; its reason follows.
  kMsChapChallenge,    // MS-CHAP-Challenge or the Ident is not the one the tunnel derived.
  kMsChap2Malformed,   // MS-CHAP2-Response is not 50 octets, or MS-CHAP-Challenge is missing.
  kMsChap2Rejected,    // The user is unknown or the NT-Response is wrong; the reason follows.
  kMsChap2Ack,         // TLS data that does not decrypt where the ACK of MS-CHAP2-Success was due.
};
[[nodiscard]] std::string_view to_string(TtlsMethodError error);

class TtlsMethod final : public Method {
 public:
  // `context` is built with require_client_certificate = false. Requires:
  // options.fragment_octets within bounds; `check` callable.
  TtlsMethod(TlsServerContext context, std::string eap_identity, InnerPapCheck check,
             TtlsMethodOptions options = {});

  [[nodiscard]] Type type() const override { return Type::kTtls; }
  // Start: flags S, version 0 (RFC 5281 §9.1).
  [[nodiscard]] MethodStep start() override;
  [[nodiscard]] MethodStep on_response(Bytes type_data) override;
  // The inner User-Name once the tunnel carried it: the inner identity
  // decides (the outer one, eap_identity(), may be anonymous).
  [[nodiscard]] std::string_view decided_identity() const override { return inner_user_name_; }
  [[nodiscard]] std::string_view eap_identity() const { return eap_identity_; }
  [[nodiscard]] std::optional<TtlsMethodError> error() const { return error_; }
  [[nodiscard]] std::optional<TlsFailure> tls_failure() const { return tls_failure_; }

 private:
  enum class Phase : std::uint8_t { kHandshake, kInner, kMsChap2SuccessSent, kAlertSent, kDone };

  MethodStep on_message(std::vector<std::uint8_t> message);
  MethodStep on_handshake_done();
  MethodStep on_inner(std::vector<std::uint8_t> plaintext);
  MethodStep on_ms_chap2(Bytes user_name, std::optional<Bytes> challenge, Bytes response);
  MethodStep on_ms_chap2_ack(const std::vector<std::uint8_t>& message);
  MethodStep failure(TtlsMethodError error, std::string_view detail = {});
  MethodStep failure_of_tls(TlsFailure failure);

  TlsServerContext context_;
  std::string eap_identity_;
  InnerPapCheck check_;
  TtlsMethodOptions options_;
  std::unique_ptr<TlsServerSession> session_{};
  TlsTransfer transfer_;
  Phase phase_ = Phase::kHandshake;
  std::size_t responses_ = 0;
  std::optional<Msk> msk_{};
  std::array<std::uint8_t, 17> ms_chap_challenge_{};  // RFC 5281 §11.2.4: challenge 16 + Ident 1.
  std::string inner_user_name_{};
  std::optional<TtlsMethodError> error_{};
  std::optional<TlsFailure> tls_failure_{};
  std::string failure_reason_{};
};

}  // namespace rw::eap
