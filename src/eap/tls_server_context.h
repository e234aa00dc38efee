// The OpenSSL server context of the TLS-based EAP methods (EAP-TLS; later
// PEAP and EAP-TTLS), built from configuration: the server's certificate
// chain and key, the CAs client certificates must chain to, an optional CRL,
// the TLS versions (docs/security.md "EAP-TLS"). Reads its files once, when
// built, like the other configuration loaders; sessions share it read-only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "base/time.h"
#include "eap/revocation.h"

struct ssl_ctx_st;  // OpenSSL's SSL_CTX, kept out of the header.

namespace rw::eap {

enum class TlsVersion : std::uint8_t { k1_2, k1_3 };
[[nodiscard]] std::string_view to_string(TlsVersion version);

struct TlsServerConfig {
  std::string certificate_chain_file{};  // PEM: the server certificate first, then its intermediates.
  std::string private_key_file{};        // PEM: the key of the first certificate.
  std::string ca_file{};                 // PEM: the CAs a client certificate must chain to.
  std::optional<std::string> ca_path{};  // A folder of CA certificates (and CRLs) by hash links (c_rehash).
  // PEM CRLs; when given, every certificate of the client's chain must be
  // covered by a current CRL of its issuer (X509_V_FLAG_CRL_CHECK_ALL).
  std::optional<std::string> crl_file{};
  TlsVersion min_version = TlsVersion::k1_2;
  TlsVersion max_version = TlsVersion::k1_3;
  // EAP-TLS requires it (RFC 5216 §2.1.1). False: no client certificate is
  // asked for (PEAP, EAP-TTLS).
  bool require_client_certificate = true;
  // Most intermediate CA certificates between a client certificate and its
  // trust anchor (OpenSSL's verify depth; docs/limits.md "EAP-TLS").
  int verify_depth_max = 5;
  // OCSP for the client certificate (docs/security.md "OCSP"), asked once
  // the chain verified, on the handshake's thread; null: the CRLs alone.
  // Shared by every session of the context.
  std::shared_ptr<RevocationChecker> revocation{};
  // True: a certificate the checker cannot vouch for (no usable answer) is
  // refused; false: only a revoked answer refuses (soft fail).
  bool revocation_required = false;
  // Session resumption (docs/security.md "EAP-TLS resumption"): sessions
  // kept for resumption, 0 for none. Only with require_client_certificate:
  // a resumed PEAP or EAP-TTLS session would skip nothing but the
  // certificate, which they never had.
  std::size_t resumption_sessions_max = 0;
  // How long a session may be resumed after the full handshake that made it.
  Duration resumption_lifetime = Duration::seconds(3600);
};

// Why a context could not be built: the kind, the file at fault (empty when
// none) and OpenSSL's reasons.
struct TlsContextError {
  enum class Kind : std::uint8_t {
    kCertificateChain,  // The server certificate chain file cannot be read or used.
    kPrivateKey,        // The key file cannot be read, or does not match the certificate.
    kCaFile,            // The CA file cannot be read or holds no certificate.
    kCaPath,            // The CA folder cannot be used.
    kCrlFile,           // The CRL file cannot be read or holds no CRL.
    kVersions,          // min_version is above max_version.
    kResumption,        // Resumption asked for a context that requires no client certificate.
    kOpenSsl,           // OpenSSL could not allocate the context.
  };
  Kind kind = Kind::kOpenSsl;
  std::string file{};
  std::string reason{};
  [[nodiscard]] std::string to_string() const;  // "FILE: what: reason".
};

// An SSL_CTX for the server side of TLS-based EAP, shared by every session
// made from it (each SSL holds its own reference). Copyable; immutable once
// built, so sessions on several threads may use it at once.
//
// Session resumption, when configured, keeps sessions in the context's own
// bounded cache (TLS 1.2 session IDs, TLS 1.3 stateful tickets; never
// stateless tickets, whose keys would have to be managed). Before a session
// is resumed its client certificate chain is verified again against the
// trust store, CRLs and OCSP as they are now (RFC 9190 §5.7, RFC 5216
// §5.6); a session that no longer verifies is dropped and the peer does a
// full handshake.
class TlsServerContext {
 public:
  [[nodiscard]] static Result<TlsServerContext, TlsContextError> create(const TlsServerConfig& config);

  // Sessions held for resumption now.
  [[nodiscard]] std::size_t resumable_sessions() const;

  [[nodiscard]] ssl_ctx_st* get() const { return context_.get(); }

 private:
  explicit TlsServerContext(std::shared_ptr<ssl_ctx_st> context) : context_(std::move(context)) {}
  std::shared_ptr<ssl_ctx_st> context_;
};

}  // namespace rw::eap
