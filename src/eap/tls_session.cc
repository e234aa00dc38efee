// A server TLS session over memory BIOs (tls_session.h).
#include "eap/tls_session.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <utility>

#include "eap/tls_openssl.h"

namespace rw::eap {

std::string_view to_string(TlsFailure failure) {
  switch (failure) {
    case TlsFailure::kNoClientCertificate:
      return "no client certificate";
    case TlsFailure::kCertificateExpired:
      return "certificate expired";
    case TlsFailure::kCertificateNotYetValid:
      return "certificate not yet valid";
    case TlsFailure::kCertificateRevoked:
      return "certificate revoked";
    case TlsFailure::kRevocationUnknown:
      return "certificate revocation unknown";
    case TlsFailure::kUnknownCa:
      return "unknown CA";
    case TlsFailure::kCrlUnavailable:
      return "no valid CRL";
    case TlsFailure::kCertificateInvalid:
      return "certificate invalid";
    case TlsFailure::kPeerAlert:
      return "TLS alert from the peer";
    case TlsFailure::kHandshakeFailed:
      return "TLS handshake failed";
    case TlsFailure::kApplicationDataTooLarge:
      return "TLS application data over the bound";
    case TlsFailure::kInternal:
      return "TLS internal error";
  }
  return "TLS failure";
}

std::string utf8_of(const ASN1_STRING* text) {
  unsigned char* out = nullptr;
  const int length = ASN1_STRING_to_UTF8(&out, text);
  if (length < 0) return {};
  std::string value(reinterpret_cast<const char*>(out), static_cast<std::size_t>(length));
  OPENSSL_free(out);
  return value;
}

namespace {

// The closed failure of an X509 verify result other than X509_V_OK.
TlsFailure failure_of_verify(long result) {
  switch (result) {
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return TlsFailure::kCertificateExpired;
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return TlsFailure::kCertificateNotYetValid;
    case X509_V_ERR_CERT_REVOKED:
      return TlsFailure::kCertificateRevoked;
    case X509_V_ERR_OCSP_VERIFY_FAILED:
      return TlsFailure::kRevocationUnknown;
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_CERT_UNTRUSTED:
      return TlsFailure::kUnknownCa;
    case X509_V_ERR_UNABLE_TO_GET_CRL:
    case X509_V_ERR_UNABLE_TO_GET_CRL_ISSUER:
    case X509_V_ERR_CRL_HAS_EXPIRED:
    case X509_V_ERR_CRL_NOT_YET_VALID:
    case X509_V_ERR_CRL_SIGNATURE_FAILURE:
    case X509_V_ERR_UNABLE_TO_DECRYPT_CRL_SIGNATURE:
    case X509_V_ERR_ERROR_IN_CRL_LAST_UPDATE_FIELD:
    case X509_V_ERR_ERROR_IN_CRL_NEXT_UPDATE_FIELD:
      return TlsFailure::kCrlUnavailable;
    default:
      return TlsFailure::kCertificateInvalid;
  }
}

std::string one_line(const X509_NAME* name) {
  openssl::Owned<BIO, BIO_free_all> bio(BIO_new(BIO_s_mem()));
  if (!bio || X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB) < 0) return {};
  char* text = nullptr;
  const long length = BIO_get_mem_data(bio.get(), &text);
  return length > 0 ? std::string(text, static_cast<std::size_t>(length)) : std::string();
}

// The subject alternative names kept for policy (docs/limits.md "EAP-TLS").
constexpr std::size_t kAltNamesMax = 32;

std::vector<std::string> alt_names(X509* cert) {
  std::vector<std::string> names;
  auto* general = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (general == nullptr) return names;
  for (int i = 0; i < sk_GENERAL_NAME_num(general) && names.size() < kAltNamesMax; ++i) {
    const GENERAL_NAME* entry = sk_GENERAL_NAME_value(general, i);
    switch (entry->type) {
      case GEN_DNS:
        names.push_back("DNS:" + utf8_of(entry->d.dNSName));
        break;
      case GEN_EMAIL:
        names.push_back("email:" + utf8_of(entry->d.rfc822Name));
        break;
      case GEN_URI:
        names.push_back("URI:" + utf8_of(entry->d.uniformResourceIdentifier));
        break;
      default:
        break;  // Other forms (otherName, IP, directoryName) are not kept.
    }
  }
  GENERAL_NAMES_free(general);
  return names;
}

PeerCertificate names_of(X509* cert) {
  PeerCertificate peer;
  const X509_NAME* subject = X509_get_subject_name(cert);
  peer.subject = one_line(subject);
  for (int i = -1; (i = X509_NAME_get_index_by_NID(subject, NID_commonName, i)) >= 0;) {
    peer.subject_common_name = utf8_of(X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i)));
  }
  peer.subject_alt_names = alt_names(cert);
  peer.issuer = one_line(X509_get_issuer_name(cert));
  openssl::Owned<BIGNUM, BN_free> serial(ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr));
  if (serial) {
    char* hex = BN_bn2hex(serial.get());
    if (hex != nullptr) peer.serial = hex;
    OPENSSL_free(hex);
  }
  return peer;
}

}  // namespace

Result<std::unique_ptr<TlsServerSession>, TlsFailure> TlsServerSession::create(
    const TlsServerContext& context, TlsSessionLimits limits) {
  SSL* ssl = SSL_new(context.get());
  if (ssl == nullptr) return fail(TlsFailure::kInternal);
  BIO* in = BIO_new(BIO_s_mem());
  BIO* out = BIO_new(BIO_s_mem());
  if (in == nullptr || out == nullptr) {
    BIO_free(in);
    BIO_free(out);
    SSL_free(ssl);
    return fail(TlsFailure::kInternal);
  }
  // An empty input BIO means "wait for the peer's next message", not EOF.
  BIO_set_mem_eof_return(in, -1);
  BIO_set_mem_eof_return(out, -1);
  SSL_set_bio(ssl, in, out);  // The SSL owns both now.
  SSL_set_accept_state(ssl);
  return std::unique_ptr<TlsServerSession>(new TlsServerSession(ssl, limits));
}

TlsServerSession::~TlsServerSession() {
  // OpenSSL drops from the cache the session of an SSL freed without a
  // shutdown; a session whose handshake succeeded stays resumable (its
  // chain is verified again before it is resumed).
  if (handshake_done_ && !failed_) SSL_set_shutdown(ssl_, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
  SSL_free(ssl_);
}

Result<void, TlsFailure> TlsServerSession::on_records(Bytes records) {
  if (failed_) return fail(TlsFailure::kHandshakeFailed);
  if (!records.empty()) {
    const int written = BIO_write(SSL_get_rbio(ssl_), records.data(), static_cast<int>(records.size()));
    if (written != static_cast<int>(records.size())) {
      failed_ = true;
      return fail(TlsFailure::kInternal);
    }
  }
  if (!handshake_done_) {
    if (auto step = drive_handshake(); !step) return step;
  }
  if (handshake_done_) return drain_application();
  return {};
}

Result<void, TlsFailure> TlsServerSession::drive_handshake() {
  ERR_clear_error();
  const int result = SSL_do_handshake(ssl_);
  if (result == 1) {
    X509* cert = SSL_get0_peer_certificate(ssl_);
    // OpenSSL aborts a handshake whose chain failed (no verify callback);
    // this only refuses to trust a result it did not set.
    if (cert != nullptr && SSL_get_verify_result(ssl_) != X509_V_OK) {
      failed_ = true;
      return fail(failure_of_verify(SSL_get_verify_result(ssl_)));
    }
    if (cert != nullptr) peer_ = names_of(cert);
    handshake_done_ = true;
    return {};
  }
  const int error = SSL_get_error(ssl_, result);
  if (error == SSL_ERROR_WANT_READ) return {};
  failed_ = true;
  return fail(failure_from_openssl());
}

TlsFailure TlsServerSession::failure_from_openssl() const {
  const long verify = SSL_get_verify_result(ssl_);
  TlsFailure failure = verify != X509_V_OK ? failure_of_verify(verify) : TlsFailure::kHandshakeFailed;
  while (const unsigned long code = ERR_get_error()) {
    if (failure != TlsFailure::kHandshakeFailed || ERR_GET_LIB(code) != ERR_LIB_SSL) continue;
    const int reason = ERR_GET_REASON(code);
    if (reason == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE) failure = TlsFailure::kNoClientCertificate;
    // OpenSSL reports a received alert as SSL_AD_REASON_OFFSET + its code.
    if (reason >= SSL_AD_REASON_OFFSET) failure = TlsFailure::kPeerAlert;
  }
  return failure;
}

Result<void, TlsFailure> TlsServerSession::drain_application() {
  std::array<std::uint8_t, 4096> buffer;
  for (;;) {
    ERR_clear_error();
    const int read = SSL_read(ssl_, buffer.data(), static_cast<int>(buffer.size()));
    if (read > 0) {
      if (application_.size() + static_cast<std::size_t>(read) > limits_.application_octets_max) {
        failed_ = true;
        return fail(TlsFailure::kApplicationDataTooLarge);
      }
      application_.insert(application_.end(), buffer.begin(), buffer.begin() + read);
      continue;
    }
    const int error = SSL_get_error(ssl_, read);
    if (error == SSL_ERROR_WANT_READ) return {};
    failed_ = true;
    if (error == SSL_ERROR_ZERO_RETURN) {  // close_notify: the peer ended the session.
      ERR_clear_error();
      return fail(TlsFailure::kPeerAlert);
    }
    return fail(failure_from_openssl());
  }
}

std::vector<std::uint8_t> TlsServerSession::take_output() {
  BIO* out = SSL_get_wbio(ssl_);
  std::vector<std::uint8_t> output(BIO_ctrl_pending(out));
  if (output.empty()) return output;
  const int read = BIO_read(out, output.data(), static_cast<int>(output.size()));
  output.resize(read > 0 ? static_cast<std::size_t>(read) : 0);
  return output;
}

bool TlsServerSession::resumed() const { return SSL_session_reused(ssl_) == 1; }

TlsVersion TlsServerSession::version() const {
  return SSL_version(ssl_) == TLS1_3_VERSION ? TlsVersion::k1_3 : TlsVersion::k1_2;
}

Result<void, TlsFailure> TlsServerSession::write_application(Bytes plaintext) {
  if (failed_ || !handshake_done_ || plaintext.empty()) return fail(TlsFailure::kInternal);
  ERR_clear_error();
  const int written = SSL_write(ssl_, plaintext.data(), static_cast<int>(plaintext.size()));
  if (written != static_cast<int>(plaintext.size())) {
    ERR_clear_error();
    return fail(TlsFailure::kInternal);
  }
  return {};
}

std::vector<std::uint8_t> TlsServerSession::read_application() { return std::exchange(application_, {}); }

Result<std::vector<std::uint8_t>, TlsFailure> TlsServerSession::export_key(std::string_view label,
                                                                           std::optional<Bytes> context,
                                                                           std::size_t length) const {
  if (!handshake_done_) return fail(TlsFailure::kInternal);
  std::vector<std::uint8_t> key(length);
  const int exported = SSL_export_keying_material(ssl_, key.data(), key.size(), label.data(), label.size(),
                                                  context ? context->data() : nullptr,
                                                  context ? context->size() : 0, context ? 1 : 0);
  if (exported != 1) {
    ERR_clear_error();
    return fail(TlsFailure::kInternal);
  }
  return key;
}

}  // namespace rw::eap
