// One server-side TLS session over memory BIOs: the peer's TLS records go
// in, OpenSSL's records come out; no socket, no file, no thread. EAP-TLS
// drives the handshake with it; PEAP and EAP-TTLS also carry application
// data through it after the handshake. OpenSSL draws its own randomness and
// reads the clock for certificate validity (docs/architecture.md "Layers").
#pragma once

#include <openssl/asn1.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "eap/tls_server_context.h"

struct ssl_st;  // OpenSSL's SSL, kept out of the header.

namespace rw::eap {

// Why a handshake or a session failed. Closed: each has a name, and the
// certificate ones follow OpenSSL's X509 verify result.
enum class TlsFailure : std::uint8_t {
  kNoClientCertificate,      // The peer sent no certificate, and one is required.
  kCertificateExpired,       // X509_V_ERR_CERT_HAS_EXPIRED.
  kCertificateNotYetValid,   // X509_V_ERR_CERT_NOT_YET_VALID.
  kCertificateRevoked,       // X509_V_ERR_CERT_REVOKED: listed in the CRL, or OCSP said revoked.
  kRevocationUnknown,        // OCSP is required and gave no usable answer (X509_V_ERR_OCSP_VERIFY_FAILED).
  kUnknownCa,                // The chain does not reach a configured CA.
  kCrlUnavailable,           // No current, valid CRL for a certificate of the chain.
  kCertificateInvalid,       // Any other verify error (signature, purpose, constraints, depth).
  kPeerAlert,                // The peer sent a TLS alert.
  kHandshakeFailed,          // A protocol error (versions, ciphers, malformed records).
  kApplicationDataTooLarge,  // More application data buffered than the bound.
  kInternal,                 // OpenSSL could not allocate.
};
[[nodiscard]] std::string_view to_string(TlsFailure failure);

// The names of the verified client certificate, for policy (issue: identity
// and certificate name checks). Strings are OpenSSL's UTF-8 renderings.
// An ASN.1 string of a certificate (a CN, a SAN name) as UTF-8; empty when
// OpenSSL cannot convert it. Also used for RadSec's certificate_name
// (gateway_shell/certificate_names.h).
[[nodiscard]] std::string utf8_of(const ASN1_STRING* text);

struct PeerCertificate {
  std::string subject{};                         // RFC 2253 one-line DN.
  std::string subject_common_name{};             // The last CN of the subject; empty when none.
  std::vector<std::string> subject_alt_names{};  // "DNS:name", "email:addr", "URI:uri", in order.
  std::string issuer{};                          // RFC 2253 one-line DN of the issuer.
  std::string serial{};                          // Upper-case hexadecimal.
};

struct TlsSessionLimits {
  // Decrypted application data held between reads (PEAP and EAP-TTLS
  // inner messages; docs/limits.md "EAP-TLS").
  std::size_t application_octets_max = 16'384;
};

// Owned by one EAP conversation; not for concurrent use. Move-only.
class TlsServerSession {
 public:
  [[nodiscard]] static Result<std::unique_ptr<TlsServerSession>, TlsFailure> create(
      const TlsServerContext& context, TlsSessionLimits limits = {});
  ~TlsServerSession();
  TlsServerSession(const TlsServerSession&) = delete;
  TlsServerSession& operator=(const TlsServerSession&) = delete;

  // Feeds the peer's TLS records (one whole reassembled message) and drives
  // the handshake, or, after it, decrypts application data into the buffer
  // read_application() empties. On failure the session is spent; the output
  // may still hold the alert to send the peer.
  [[nodiscard]] Result<void, TlsFailure> on_records(Bytes records);
  // Whatever OpenSSL wrote for the peer since the last call.
  [[nodiscard]] std::vector<std::uint8_t> take_output();

  [[nodiscard]] bool handshake_done() const { return handshake_done_; }
  // The negotiated version. Requires: handshake_done().
  [[nodiscard]] TlsVersion version() const;
  // Whether the handshake resumed an earlier session. Requires: handshake_done().
  [[nodiscard]] bool resumed() const;
  // The verified client certificate's names; nothing before the handshake
  // finished or when the peer sent none.
  [[nodiscard]] const std::optional<PeerCertificate>& peer_certificate() const { return peer_; }

  // Encrypts application data for the peer (it lands in take_output()).
  // Requires: handshake_done().
  [[nodiscard]] Result<void, TlsFailure> write_application(Bytes plaintext);
  // The application data decrypted so far; empties the buffer.
  [[nodiscard]] std::vector<std::uint8_t> read_application();

  // RFC 5705 / RFC 8446 §7.5 keying material exporter. `context` absent is
  // "no context" (TLS 1.2's PRF without it). Requires: handshake_done().
  [[nodiscard]] Result<std::vector<std::uint8_t>, TlsFailure> export_key(std::string_view label,
                                                                         std::optional<Bytes> context,
                                                                         std::size_t length) const;

 private:
  TlsServerSession(ssl_st* ssl, TlsSessionLimits limits) : ssl_(ssl), limits_(limits) {}
  Result<void, TlsFailure> drive_handshake();
  Result<void, TlsFailure> drain_application();
  TlsFailure failure_from_openssl() const;

  ssl_st* ssl_;
  TlsSessionLimits limits_;
  bool handshake_done_ = false;
  bool failed_ = false;
  std::optional<PeerCertificate> peer_{};
  std::vector<std::uint8_t> application_{};
};

}  // namespace rw::eap
