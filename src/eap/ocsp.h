// OCSP (RFC 6960) for EAP-TLS client certificates: the request for one
// certificate and the judgment of a responder's answer to it. Pure: the
// bytes travel through a RevocationChecker the shell provides (it owns the
// HTTP exchange and a cache), `now` and the nonce come from the caller.
// OpenSSL verifies the responder's signature against the same CA store that
// verified the client's chain (docs/security.md "OCSP").
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"

struct x509_st;        // OpenSSL's X509.
struct x509_store_st;  // OpenSSL's X509_STORE.
struct stack_st_X509;  // OpenSSL's STACK_OF(X509).

namespace rw::eap {

// What a responder said of a certificate, once its answer is judged.
enum class CertificateStatus : std::uint8_t { kGood, kRevoked, kUnknown };
[[nodiscard]] std::string_view to_string(CertificateStatus status);

// Why an answer could not be judged (the certificate's status stays unknown).
enum class OcspError : std::uint8_t {
  kRequestFailed,  // The request could not be encoded (OpenSSL could not allocate).
  kMalformed,      // Not a DER OCSPResponse.
  kNotSuccessful,  // responseStatus is not successful (malformedRequest, tryLater, unauthorized, ...).
  kNotBasic,       // No BasicOCSPResponse in it.
  kBadSignature,   // Not signed by the CA or by a responder it delegated to (id-kp-OCSPSigning).
  kNonceMismatch,  // The answer carries a nonce, and not ours: a replay or another request's.
  kNoStatus,       // No SingleResponse for our certificate.
  kNotYetValid,    // thisUpdate is in the future (beyond the allowed skew).
  kExpired,        // nextUpdate is past; or, without one, thisUpdate is older than the allowed age.
};
[[nodiscard]] std::string_view to_string(OcspError error);

inline constexpr std::size_t kOcspNonceOctets = 16;

// One DER OCSPRequest for a certificate, with a nonce, and what its answer
// is judged against. Move-only (holds the CertID).
class OcspRequest {
 public:
  // Requires: `issuer` issued `leaf` (the verified chain's second element).
  [[nodiscard]] static Result<OcspRequest, OcspError> create(
      x509_st* leaf, x509_st* issuer, const std::array<std::uint8_t, kOcspNonceOctets>& nonce);
  OcspRequest(OcspRequest&&) noexcept;
  OcspRequest& operator=(OcspRequest&&) noexcept;
  ~OcspRequest();

  // The DER request to POST (application/ocsp-request, RFC 6960 Appendix A.1).
  [[nodiscard]] Bytes der() const { return der_; }
  // A key for caching the answer: the DER CertID (issuer name and key hashes, serial).
  [[nodiscard]] const std::string& cache_key() const { return cache_key_; }

 private:
  friend Result<struct OcspJudgment, OcspError> judge_ocsp_response(const OcspRequest&, Bytes, x509_store_st*,
                                                                    stack_st_X509*,
                                                                    const struct OcspJudgeOptions&);
  struct Parts;
  explicit OcspRequest(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> parts_;
  std::vector<std::uint8_t> der_;
  std::string cache_key_;
};

struct OcspJudgment {
  CertificateStatus status = CertificateStatus::kUnknown;
  // Until when the answer may be reused (Unix seconds): its nextUpdate, or
  // `now` plus the allowed age when it has none.
  std::int64_t good_until_unix_s = 0;
};

struct OcspJudgeOptions {
  std::int64_t now_unix_s = 0;
  // Clock difference tolerated between the responder and us.
  std::int64_t skew_s = 300;
  // An answer without nextUpdate is trusted this long after its thisUpdate.
  std::int64_t age_max_s = 3600;
};

// Judges the responder's DER answer to `request`: its signature against
// `store` (with `untrusted` intermediates to find a delegated responder's
// issuer), our nonce if it carries one (responders that pre-produce answers
// carry none; the validity window then bounds a replay), and the time window.
[[nodiscard]] Result<OcspJudgment, OcspError> judge_ocsp_response(const OcspRequest& request, Bytes response,
                                                                  x509_store_st* store,
                                                                  stack_st_X509* untrusted,
                                                                  const OcspJudgeOptions& options);

// The OCSP responder URLs a certificate names (its Authority Information
// Access extension), in order; empty when none.
[[nodiscard]] std::vector<std::string> ocsp_urls_of(x509_st* cert);

}  // namespace rw::eap
