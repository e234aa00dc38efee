// The cluster CA and its certificates, made with OpenSSL's API (no openssl
// command): EC P-256 keys, random serials, a SAN equal to the CN, and a CRL.
// `radiusward certs` and `radiusward dev` write a whole cluster's set with
// write_cluster_certificates (docs/security.md "Cluster certificates").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "io/tls_context.h"

namespace rw::io {

inline constexpr int kCaValidityDays = 3650;   // 10 years.
inline constexpr int kLeafValidityDays = 730;  // 2 years.
inline constexpr int kCrlValidityDays = 3650;  // Rewritten on each revocation.

// A certificate and its private key, in PEM.
struct PemPair {
  std::string cert{};
  std::string key{};
};

// A CA able to issue leaf certificates and CRLs. Move-only.
class CertificateAuthority {
 public:
  // A new self-signed CA named `common_name`.
  [[nodiscard]] static Result<CertificateAuthority, TlsError> create(std::string_view common_name,
                                                                     int validity_days = kCaValidityDays);
  // A CA from its PEM files (as written by write_cluster_certificates).
  [[nodiscard]] static Result<CertificateAuthority, TlsError> load(const std::string& cert_path,
                                                                   const std::string& key_path);
  CertificateAuthority(CertificateAuthority&&) noexcept;
  CertificateAuthority& operator=(CertificateAuthority&&) noexcept;
  ~CertificateAuthority();

  [[nodiscard]] const PemPair& pem() const { return pem_; }
  // A leaf for `common_name` (subject CN and SAN DNS name), usable as TLS
  // client and server, valid from now.
  [[nodiscard]] Result<PemPair, TlsError> issue(std::string_view common_name,
                                                int validity_days = kLeafValidityDays) const;
  // A CRL that revokes each of `revoked` (PEM certificates this CA issued).
  [[nodiscard]] Result<std::string, TlsError> crl(const std::vector<std::string>& revoked,
                                                  int validity_days = kCrlValidityDays) const;

 private:
  struct Keys;
  CertificateAuthority();
  std::unique_ptr<Keys> keys_;
  PemPair pem_{};
};

// What `radiusward certs` makes in `dir`.
struct ClusterCertificatesRequest {
  std::string dir{};
  std::vector<std::uint64_t> members{};  // Raft ids: member-<id>.pem / .key.
  std::vector<std::string> gateways{};   // Names: gateway-<name>.pem / .key.
  // Common names whose existing certificates go into crl.pem.
  std::vector<std::string> revoke{};
};

// The files of one identity in a certificates folder.
struct IdentityFiles {
  std::string cert{};
  std::string key{};
};
[[nodiscard]] IdentityFiles identity_files(std::string_view dir, std::string_view common_name);
[[nodiscard]] std::string ca_cert_file(std::string_view dir);  // DIR/ca.pem
[[nodiscard]] std::string crl_file(std::string_view dir);      // DIR/crl.pem
// The TlsFiles of `common_name` in `dir`, with its CRL.
[[nodiscard]] TlsFiles cluster_tls_files(std::string_view dir, std::string_view common_name);

// Creates `dir` (0700) and, for every file that does not exist yet, the CA
// (ca.pem, ca.key), each requested identity and crl.pem; files already there
// are kept, so a second run only adds what is new. crl.pem is rewritten
// when `revoke` is not empty. Keys are written 0600, certificates 0644.
// Returns the paths written.
[[nodiscard]] Result<std::vector<std::string>, TlsError> write_cluster_certificates(
    const ClusterCertificatesRequest& request);

}  // namespace rw::io
