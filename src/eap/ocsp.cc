// OCSP requests and the judgment of their answers (ocsp.h).
#include "eap/ocsp.h"

#include <openssl/err.h>
#include <openssl/ocsp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <utility>

#include "eap/tls_openssl.h"

namespace rw::eap {

std::string_view to_string(CertificateStatus status) {
  switch (status) {
    case CertificateStatus::kGood:
      return "good";
    case CertificateStatus::kRevoked:
      return "revoked";
    case CertificateStatus::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::string_view to_string(OcspError error) {
  switch (error) {
    case OcspError::kRequestFailed:
      return "request_failed";
    case OcspError::kMalformed:
      return "malformed";
    case OcspError::kNotSuccessful:
      return "not_successful";
    case OcspError::kNotBasic:
      return "not_basic";
    case OcspError::kBadSignature:
      return "bad_signature";
    case OcspError::kNonceMismatch:
      return "nonce_mismatch";
    case OcspError::kNoStatus:
      return "no_status";
    case OcspError::kNotYetValid:
      return "not_yet_valid";
    case OcspError::kExpired:
      return "expired";
  }
  return "malformed";
}

struct OcspRequest::Parts {
  openssl::Owned<OCSP_REQUEST, OCSP_REQUEST_free> request;
  openssl::Owned<OCSP_CERTID, OCSP_CERTID_free> id;  // A copy of the one the request owns.
};

OcspRequest::OcspRequest(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}
OcspRequest::OcspRequest(OcspRequest&&) noexcept = default;
OcspRequest& OcspRequest::operator=(OcspRequest&&) noexcept = default;
OcspRequest::~OcspRequest() = default;

Result<OcspRequest, OcspError> OcspRequest::create(x509_st* leaf, x509_st* issuer,
                                                   const std::array<std::uint8_t, kOcspNonceOctets>& nonce) {
  auto parts = std::make_unique<Parts>();
  parts->request.reset(OCSP_REQUEST_new());
  // SHA-1 CertIDs are what every responder indexes by (RFC 6960 §4.1.1,
  // RFC 5019 §2.1.1); the hash names, it does not protect.
  OCSP_CERTID* id = OCSP_cert_to_id(EVP_sha1(), leaf, issuer);
  if (!parts->request || id == nullptr) {
    OCSP_CERTID_free(id);
    return fail(OcspError::kRequestFailed);
  }
  parts->id.reset(OCSP_CERTID_dup(id));
  if (!parts->id || OCSP_request_add0_id(parts->request.get(), id) == nullptr) {
    OCSP_CERTID_free(id);
    return fail(OcspError::kRequestFailed);
  }
  // The nonce as an OCTET STRING inside the extension (RFC 8954 §2.1).
  if (OCSP_request_add1_nonce(parts->request.get(), const_cast<std::uint8_t*>(nonce.data()),
                              static_cast<int>(nonce.size())) != 1) {
    return fail(OcspError::kRequestFailed);
  }
  OcspRequest made(std::move(parts));
  unsigned char* der = nullptr;
  const int length = i2d_OCSP_REQUEST(made.parts_->request.get(), &der);
  if (length <= 0) return fail(OcspError::kRequestFailed);
  made.der_.assign(der, der + length);
  OPENSSL_free(der);
  unsigned char* key = nullptr;
  const int key_length = i2d_OCSP_CERTID(made.parts_->id.get(), &key);
  if (key_length <= 0) return fail(OcspError::kRequestFailed);
  made.cache_key_.assign(reinterpret_cast<const char*>(key), static_cast<std::size_t>(key_length));
  OPENSSL_free(key);
  return made;
}

Result<OcspJudgment, OcspError> judge_ocsp_response(const OcspRequest& request, Bytes response,
                                                    x509_store_st* store, stack_st_X509* untrusted,
                                                    const OcspJudgeOptions& options) {
  const unsigned char* cursor = response.data();
  openssl::Owned<OCSP_RESPONSE, OCSP_RESPONSE_free> parsed(
      d2i_OCSP_RESPONSE(nullptr, &cursor, static_cast<long>(response.size())));
  if (!parsed || cursor != response.data() + response.size()) return fail(OcspError::kMalformed);
  if (OCSP_response_status(parsed.get()) != OCSP_RESPONSE_STATUS_SUCCESSFUL)
    return fail(OcspError::kNotSuccessful);
  openssl::Owned<OCSP_BASICRESP, OCSP_BASICRESP_free> basic(OCSP_response_get1_basic(parsed.get()));
  if (!basic) return fail(OcspError::kNotBasic);
  // The signer must be the CA itself or a responder certificate the CA
  // issued for OCSP signing (RFC 6960 §4.2.2.2); OpenSSL checks both, and
  // the signer's own chain against the store.
  if (OCSP_basic_verify(basic.get(), untrusted, store, 0) != 1) {
    ERR_clear_error();
    return fail(OcspError::kBadSignature);
  }
  // 1: the same nonce; -1: the answer has none (pre-produced, RFC 5019);
  // 0: another nonce, refused.
  if (OCSP_check_nonce(request.parts_->request.get(), basic.get()) == 0)
    return fail(OcspError::kNonceMismatch);

  int status = V_OCSP_CERTSTATUS_UNKNOWN;
  int reason = 0;
  ASN1_GENERALIZEDTIME* revoked_at = nullptr;
  ASN1_GENERALIZEDTIME* this_update = nullptr;
  ASN1_GENERALIZEDTIME* next_update = nullptr;
  if (OCSP_resp_find_status(basic.get(), request.parts_->id.get(), &status, &reason, &revoked_at,
                            &this_update, &next_update) != 1 ||
      this_update == nullptr) {
    return fail(OcspError::kNoStatus);
  }
  // ASN1_TIME_cmp_time_t: -1 when the time is before t, 1 when after.
  if (ASN1_TIME_cmp_time_t(this_update, static_cast<time_t>(options.now_unix_s + options.skew_s)) > 0) {
    return fail(OcspError::kNotYetValid);
  }
  OcspJudgment judgment;
  if (next_update != nullptr) {
    if (ASN1_TIME_cmp_time_t(next_update, static_cast<time_t>(options.now_unix_s - options.skew_s)) < 0) {
      return fail(OcspError::kExpired);
    }
    std::tm tm{};
    if (ASN1_TIME_to_tm(next_update, &tm) != 1) return fail(OcspError::kMalformed);
    judgment.good_until_unix_s = static_cast<std::int64_t>(timegm(&tm));
  } else {
    if (ASN1_TIME_cmp_time_t(this_update, static_cast<time_t>(options.now_unix_s - options.age_max_s)) < 0) {
      return fail(OcspError::kExpired);
    }
    judgment.good_until_unix_s = options.now_unix_s + options.age_max_s;
  }
  switch (status) {
    case V_OCSP_CERTSTATUS_GOOD:
      judgment.status = CertificateStatus::kGood;
      break;
    case V_OCSP_CERTSTATUS_REVOKED:
      judgment.status = CertificateStatus::kRevoked;
      break;
    default:
      judgment.status = CertificateStatus::kUnknown;
      break;
  }
  return judgment;
}

std::vector<std::string> ocsp_urls_of(x509_st* cert) {
  std::vector<std::string> urls;
  openssl::Owned<STACK_OF(OPENSSL_STRING), X509_email_free> found(X509_get1_ocsp(cert));
  if (!found) return urls;
  for (int i = 0; i < sk_OPENSSL_STRING_num(found.get()); ++i)
    urls.emplace_back(sk_OPENSSL_STRING_value(found.get(), i));
  return urls;
}

}  // namespace rw::eap
