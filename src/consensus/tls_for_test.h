// Test-only TLS material for the raft transport: a throwaway certificate
// authority that issues member and gateway certificates and a CRL into a
// folder (OpenSSL API, ECDSA P-256), and an SSL_CTX built from PEM paths with
// TLS 1.3 only and peer verification, as production builds it.
#pragma once

#include <openssl/asn1.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "consensus/tls_transport.h"

namespace rw::consensus {

struct TestCertificate {
  std::string certificate;  // PEM paths.
  std::string key;
  long serial = 0;
};

class TestAuthority {
 public:
  // A CA named `name` whose files go to `folder` (created).
  TestAuthority(std::filesystem::path folder, const std::string& name)
      : folder_(std::move(folder)), name_(name) {
    std::filesystem::create_directories(folder_);
    key_.reset(EVP_EC_gen("P-256"));
    certificate_.reset(make_certificate(name, key_.get(), nullptr, /*ca=*/true, next_serial_++));
    certificate_path_ = (folder_ / (name + "-ca.pem")).string();
    write_certificate(certificate_path_, certificate_.get());
  }

  [[nodiscard]] const std::string& certificate_path() const { return certificate_path_; }

  // A leaf certificate with subject CN `common_name`.
  TestCertificate issue(const std::string& common_name) {
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), &EVP_PKEY_free);
    const long serial = next_serial_++;
    std::unique_ptr<X509, decltype(&X509_free)> certificate(
        make_certificate(common_name, key.get(), this, /*ca=*/false, serial), &X509_free);
    const std::string stem = (folder_ / (name_ + "-" + common_name + "-" + std::to_string(serial))).string();
    write_certificate(stem + ".pem", certificate.get());
    FILE* file = std::fopen((stem + ".key").c_str(), "w");
    if (file == nullptr) throw std::runtime_error("cannot write " + stem + ".key");
    PEM_write_PrivateKey(file, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
    std::fclose(file);
    return TestCertificate{stem + ".pem", stem + ".key", serial};
  }

  // A CRL of this CA revoking `serials`; returns its path.
  std::string crl(const std::vector<long>& serials) {
    std::unique_ptr<X509_CRL, decltype(&X509_CRL_free)> list(X509_CRL_new(), &X509_CRL_free);
    X509_CRL_set_version(list.get(), 1);
    X509_CRL_set_issuer_name(list.get(), X509_get_subject_name(certificate_.get()));
    std::unique_ptr<ASN1_TIME, decltype(&ASN1_TIME_free)> last(X509_gmtime_adj(nullptr, -3600),
                                                               &ASN1_TIME_free);
    std::unique_ptr<ASN1_TIME, decltype(&ASN1_TIME_free)> next(X509_gmtime_adj(nullptr, 86400),
                                                               &ASN1_TIME_free);
    X509_CRL_set1_lastUpdate(list.get(), last.get());
    X509_CRL_set1_nextUpdate(list.get(), next.get());
    for (const long serial : serials) {
      X509_REVOKED* revoked = X509_REVOKED_new();
      ASN1_INTEGER* number = ASN1_INTEGER_new();
      ASN1_INTEGER_set(number, serial);
      X509_REVOKED_set_serialNumber(revoked, number);
      ASN1_INTEGER_free(number);
      X509_REVOKED_set_revocationDate(revoked, last.get());
      X509_CRL_add0_revoked(list.get(), revoked);
    }
    X509_CRL_sort(list.get());
    X509_CRL_sign(list.get(), key_.get(), EVP_sha256());
    const std::string path = (folder_ / (name_ + "-crl.pem")).string();
    FILE* file = std::fopen(path.c_str(), "w");
    PEM_write_X509_CRL(file, list.get());
    std::fclose(file);
    return path;
  }

 private:
  X509* make_certificate(const std::string& common_name, EVP_PKEY* key, TestAuthority* issuer, bool ca,
                         long serial) {
    X509* certificate = X509_new();
    X509_set_version(certificate, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(certificate), serial);
    X509_gmtime_adj(X509_getm_notBefore(certificate), -3600);
    X509_gmtime_adj(X509_getm_notAfter(certificate), 86400);
    X509_set_pubkey(certificate, key);
    X509_NAME* subject = X509_get_subject_name(certificate);
    X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1, 0);
    X509* issuer_certificate = issuer != nullptr ? issuer->certificate_.get() : certificate;
    X509_set_issuer_name(certificate, X509_get_subject_name(issuer_certificate));
    X509V3_CTX context;
    X509V3_set_ctx_nodb(&context);
    X509V3_set_ctx(&context, issuer_certificate, certificate, nullptr, nullptr, 0);
    X509_EXTENSION* constraints =
        X509V3_EXT_conf_nid(nullptr, &context, NID_basic_constraints, ca ? "critical,CA:TRUE" : "CA:FALSE");
    X509_add_ext(certificate, constraints, -1);
    X509_EXTENSION_free(constraints);
    X509_sign(certificate, issuer != nullptr ? issuer->key_.get() : key, EVP_sha256());
    return certificate;
  }

  static void write_certificate(const std::string& path, X509* certificate) {
    FILE* file = std::fopen(path.c_str(), "w");
    if (file == nullptr) throw std::runtime_error("cannot write " + path);
    PEM_write_X509(file, certificate);
    std::fclose(file);
  }

  std::filesystem::path folder_;
  std::string name_;
  long next_serial_ = 1;
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key_{nullptr, &EVP_PKEY_free};
  std::unique_ptr<X509, decltype(&X509_free)> certificate_{nullptr, &X509_free};
  std::string certificate_path_;
};

// An SSL_CTX that verifies peers against `ca` (and `crl` when not empty,
// with X509_V_FLAG_CRL_CHECK), speaks TLS 1.3 only, and presents `certificate`
// when one is given. nullptr on any failure.
inline std::shared_ptr<SSL_CTX> tls_context_for_test(const std::string& ca,
                                                     const TestCertificate* certificate,
                                                     const std::string& crl = {}) {
  auto context = share_ssl_context(SSL_CTX_new(TLS_method()));
  if (!context) return nullptr;
  SSL_CTX* raw = context.get();
  SSL_CTX_set_min_proto_version(raw, TLS1_3_VERSION);
  SSL_CTX_set_verify(raw, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  if (SSL_CTX_load_verify_locations(raw, ca.c_str(), nullptr) != 1) return nullptr;
  if (certificate != nullptr) {
    if (SSL_CTX_use_certificate_chain_file(raw, certificate->certificate.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(raw, certificate->key.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(raw) != 1) {
      return nullptr;
    }
  }
  if (!crl.empty()) {
    X509_STORE* store = SSL_CTX_get_cert_store(raw);
    X509_LOOKUP* lookup = X509_STORE_add_lookup(store, X509_LOOKUP_file());
    if (lookup == nullptr || X509_load_crl_file(lookup, crl.c_str(), X509_FILETYPE_PEM) != 1) return nullptr;
    X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK);
  }
  return context;
}

}  // namespace rw::consensus
