// EAP-TLS (RFC 5216; TLS 1.3 per RFC 9190) as an eap::Method, Type 13: the
// Start request, the handshake fragment by fragment over TlsServerSession,
// the protected success indication of TLS 1.3, and the MSK from the TLS
// key exporter (docs/authentication.md "EAP-TLS"). Does no I/O of its own
// and assumes no thread; one handshake costs milliseconds of CPU, so the
// caller runs it off the threads that receive packets.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "eap/method.h"
#include "eap/tls_fragments.h"
#include "eap/tls_server_context.h"
#include "eap/tls_session.h"

namespace rw::eap {

struct TlsMethodOptions {
  // TLS octets per EAP-Request (kTlsFragmentOctetsMin..kTlsFragmentOctetsMax).
  std::size_t fragment_octets = kTlsFragmentOctetsDefault;
  TlsReassemblyLimits reassembly{};
  // Responses one conversation may take before it fails (docs/limits.md
  // "EAP-TLS"): a handshake with 1,000-octet fragments and a few KiB of
  // certificates takes under 10; a peer's largest message (fragments_max)
  // still fits.
  std::size_t responses_max = 256;
};

// The key derivation of RFC 5216 §2.3 and RFC 9190 §2.3: 128 octets of
// keying material, of which the MSK is the first 64 (the EMSK, the next 64,
// is not used).
inline constexpr std::string_view kTls12KeyLabel = "client EAP encryption";
inline constexpr std::string_view kTls13KeyLabel = "EXPORTER_EAP_TLS_Key_Material";
inline constexpr std::uint8_t kTls13KeyContext = 0x0D;  // The EAP-TLS Type, RFC 9190 §2.3.
inline constexpr std::size_t kTlsKeyMaterialOctets = 128;

// Why an EAP-TLS conversation failed, besides the TLS failures.
enum class TlsMethodError : std::uint8_t {
  kFraming,             // The response's framing was refused (TlsFrameError says how).
  kExpectedAck,         // A response other than an ACK while server fragments were due.
  kUnexpectedAck,       // An ACK where a TLS message was due.
  kIncompleteFlight,    // A whole message after which TLS had nothing to answer.
  kTooManyResponses,    // responses_max reached.
  kDataAfterHandshake,  // TLS data where the final ACK was due.
  kTls,                 // The TLS session failed (TlsFailure says how).
};
[[nodiscard]] std::string_view to_string(TlsMethodError error);

class TlsMethod final : public Method {
 public:
  // `eap_identity` is the peer's EAP-Response/Identity (unauthenticated).
  // Requires: options.fragment_octets within bounds.
  TlsMethod(TlsServerContext context, std::string eap_identity, TlsMethodOptions options = {});

  [[nodiscard]] Type type() const override { return Type::kTls; }
  // The EAP-TLS Start: flags S and nothing else (RFC 5216 §2.1.1).
  [[nodiscard]] MethodStep start() override;
  [[nodiscard]] MethodStep on_response(Bytes type_data) override;
  // The verified certificate's name once the handshake succeeded: its
  // subject CN, else its first subject alternative name (as "DNS:...",
  // "email:..."), else the EAP-Identity; empty before. The EAP-Identity is
  // not authenticated by EAP-TLS and may be anonymous (RFC 5216 §2.5, §5.2), so
  // it decides only when the certificate names nobody.
  [[nodiscard]] std::string_view decided_identity() const override { return decided_identity_; }

  // The verified client certificate's names, for policy; nothing before
  // success.
  [[nodiscard]] const std::optional<PeerCertificate>& peer_certificate() const;
  [[nodiscard]] const PeerCertificate* verified_certificate() const override {
    return succeeded_ && peer_certificate() ? &*peer_certificate() : nullptr;
  }
  [[nodiscard]] std::string_view eap_identity() const { return eap_identity_; }
  // The negotiated version, once the handshake finished.
  [[nodiscard]] std::optional<TlsVersion> version() const { return version_; }
  // Whether the handshake resumed an earlier session (its chain verified again first).
  [[nodiscard]] bool resumed() const { return resumed_; }
  // Why it failed; nothing unless on_response returned kFailure.
  [[nodiscard]] std::optional<TlsMethodError> error() const { return error_; }
  [[nodiscard]] std::optional<TlsFrameError> frame_error() const { return frame_error_; }
  [[nodiscard]] std::optional<TlsFailure> tls_failure() const { return tls_failure_; }

 private:
  enum class Phase : std::uint8_t {
    kHandshake,  // Exchanging TLS messages.
    kFinalSent,  // The last server flight is out; the peer's ACK means success.
    kAlertSent,  // A TLS alert is out; the peer's ACK (or anything) means failure.
    kDone,       // Success or failure was returned; every later response fails.
  };

  MethodStep on_message(std::vector<std::uint8_t> message);
  MethodStep on_handshake_done();
  MethodStep send(std::vector<std::uint8_t> tls_message);
  MethodStep failure(TlsMethodError error);
  MethodStep tls_failure(TlsFailure failure);
  MethodStep success();

  TlsServerContext context_;
  std::string eap_identity_;
  TlsMethodOptions options_;
  bool resumed_ = false;
  std::unique_ptr<TlsServerSession> session_{};
  TlsTransfer transfer_;
  Phase phase_ = Phase::kHandshake;
  std::size_t responses_ = 0;
  std::optional<Msk> msk_{};
  bool succeeded_ = false;
  std::optional<TlsVersion> version_{};
  std::string decided_identity_{};
  std::optional<TlsMethodError> error_{};
  std::optional<TlsFrameError> frame_error_{};
  std::optional<TlsFailure> tls_failure_{};
  std::string failure_reason_{};  // Kept while an alert is out.
};

}  // namespace rw::eap
