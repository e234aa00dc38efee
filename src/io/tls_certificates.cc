// Certificate and CRL generation with OpenSSL 3's API (tls_certificates.h).
// Small RAII wrappers keep every OpenSSL object freed on each error path.
#include "io/tls_certificates.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "io/text_file.h"

namespace rw::io {
namespace {

template <class T, void (*Free)(T*)>
struct Freer {
  void operator()(T* p) const { Free(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Freer<EVP_PKEY, EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Freer<X509, X509_free>>;
using Crl = std::unique_ptr<X509_CRL, Freer<X509_CRL, X509_CRL_free>>;
using Bio = std::unique_ptr<BIO, Freer<BIO, BIO_free_all>>;
using Revoked = std::unique_ptr<X509_REVOKED, Freer<X509_REVOKED, X509_REVOKED_free>>;
using Integer = std::unique_ptr<ASN1_INTEGER, Freer<ASN1_INTEGER, ASN1_INTEGER_free>>;
using Number = std::unique_ptr<BIGNUM, Freer<BIGNUM, BN_free>>;

TlsError error(std::string_view what, std::string file = "") {
  return TlsError{.file = std::move(file), .reason = openssl_reasons(what)};
}

Result<Key, TlsError> new_p256_key() {
  Key key(EVP_EC_gen("P-256"));
  if (!key) return fail(error("cannot generate an EC P-256 key"));
  return key;
}

// PEM text written by one of OpenSSL's PEM_write_bio_* functions.
template <class Write>
Result<std::string, TlsError> to_pem(Write write) {
  Bio bio(BIO_new(BIO_s_mem()));
  if (!bio || write(bio.get()) != 1) return fail(error("cannot encode PEM"));
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(length));
}

Result<Bio, TlsError> pem_reader(const std::string& text) {
  Bio bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
  if (!bio) return fail(error("BIO_new_mem_buf failed"));
  return bio;
}

// 159 random bits: positive, unique in practice, within RFC 5280's 20 octets.
Result<Integer, TlsError> random_serial() {
  Number number(BN_new());
  if (!number || BN_rand(number.get(), 159, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1) {
    return fail(error("cannot draw a serial number"));
  }
  Integer serial(BN_to_ASN1_INTEGER(number.get(), nullptr));
  if (!serial) return fail(error("cannot encode a serial number"));
  return serial;
}

bool add_extension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value);
  if (extension == nullptr) return false;
  const int added = X509_add_ext(cert, extension, -1);
  X509_EXTENSION_free(extension);
  return added == 1;
}

// A certificate for `subject_key` named `common_name`; self-signed when
// `issuer` is null (then `signing_key` is the subject's own).
Result<Cert, TlsError> make_certificate(std::string_view common_name, EVP_PKEY* subject_key, X509* issuer,
                                        EVP_PKEY* signing_key, int validity_days, bool is_ca) {
  Cert cert(X509_new());
  if (!cert) return fail(error("X509_new failed"));
  auto serial = random_serial();
  if (!serial) return fail(serial.error());
  X509_NAME* name = X509_get_subject_name(cert.get());
  const std::string cn(common_name);
  bool ok = X509_set_version(cert.get(), 2) == 1 && X509_set_serialNumber(cert.get(), serial->get()) == 1 &&
            X509_gmtime_adj(X509_getm_notBefore(cert.get()), -300) != nullptr &&
            X509_gmtime_adj(X509_getm_notAfter(cert.get()), 86400L * validity_days) != nullptr &&
            X509_set_pubkey(cert.get(), subject_key) == 1 &&
            X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                       reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0) == 1 &&
            X509_set_issuer_name(cert.get(), issuer ? X509_get_subject_name(issuer) : name) == 1;
  X509* signer = issuer ? issuer : cert.get();
  if (ok && is_ca) {
    ok = add_extension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") &&
         add_extension(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign") &&
         add_extension(cert.get(), signer, NID_subject_key_identifier, "hash");
  } else if (ok) {
    const std::string san = "DNS:" + cn;
    ok = add_extension(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE") &&
         add_extension(cert.get(), signer, NID_key_usage, "critical,digitalSignature") &&
         // Members are TLS servers (submission) and clients (raft); gateways clients.
         add_extension(cert.get(), signer, NID_ext_key_usage, "serverAuth,clientAuth") &&
         add_extension(cert.get(), signer, NID_subject_alt_name, san.c_str()) &&
         add_extension(cert.get(), signer, NID_subject_key_identifier, "hash") &&
         add_extension(cert.get(), signer, NID_authority_key_identifier, "keyid:always");
  }
  if (!ok) return fail(error("cannot fill in the certificate of " + cn));
  if (X509_sign(cert.get(), signing_key, EVP_sha256()) == 0) return fail(error("cannot sign " + cn));
  return cert;
}

Result<PemPair, TlsError> pem_of(X509* cert, EVP_PKEY* key) {
  auto cert_pem = to_pem([&](BIO* bio) { return PEM_write_bio_X509(bio, cert); });
  if (!cert_pem) return fail(cert_pem.error());
  auto key_pem = to_pem(
      [&](BIO* bio) { return PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr); });
  if (!key_pem) return fail(key_pem.error());
  return PemPair{.cert = std::move(*cert_pem), .key = std::move(*key_pem)};
}

Result<Cert, TlsError> read_cert(const std::string& text, const std::string& file) {
  auto bio = pem_reader(text);
  if (!bio) return fail(bio.error());
  Cert cert(PEM_read_bio_X509(bio->get(), nullptr, nullptr, nullptr));
  if (!cert) return fail(error("no PEM certificate", file));
  return cert;
}

Result<std::string, TlsError> read_file(const std::string& path) {
  auto text = read_text_file(path);
  if (!text) return fail(TlsError{.file = path, .reason = text.error().to_string()});
  return std::move(*text);
}

Result<void, TlsError> write_file(const std::string& path, const std::string& text, unsigned mode) {
  auto written = replace_text_file(path, text, mode);
  if (!written) return fail(TlsError{.file = path, .reason = written.error().to_string()});
  return {};
}

}  // namespace

struct CertificateAuthority::Keys {
  Key key;
  Cert cert;
};

CertificateAuthority::CertificateAuthority() : keys_(std::make_unique<Keys>()) {}
CertificateAuthority::CertificateAuthority(CertificateAuthority&&) noexcept = default;
CertificateAuthority& CertificateAuthority::operator=(CertificateAuthority&&) noexcept = default;
CertificateAuthority::~CertificateAuthority() = default;

Result<CertificateAuthority, TlsError> CertificateAuthority::create(std::string_view common_name,
                                                                    int validity_days) {
  ERR_clear_error();
  CertificateAuthority ca;
  auto key = new_p256_key();
  if (!key) return fail(key.error());
  auto cert = make_certificate(common_name, key->get(), nullptr, key->get(), validity_days, /*is_ca=*/true);
  if (!cert) return fail(cert.error());
  auto pem = pem_of(cert->get(), key->get());
  if (!pem) return fail(pem.error());
  ca.keys_->key = std::move(*key);
  ca.keys_->cert = std::move(*cert);
  ca.pem_ = std::move(*pem);
  return ca;
}

Result<CertificateAuthority, TlsError> CertificateAuthority::load(const std::string& cert_path,
                                                                  const std::string& key_path) {
  ERR_clear_error();
  CertificateAuthority ca;
  auto cert_text = read_file(cert_path);
  if (!cert_text) return fail(cert_text.error());
  auto key_text = read_file(key_path);
  if (!key_text) return fail(key_text.error());
  auto cert = read_cert(*cert_text, cert_path);
  if (!cert) return fail(cert.error());
  auto bio = pem_reader(*key_text);
  if (!bio) return fail(bio.error());
  Key key(PEM_read_bio_PrivateKey(bio->get(), nullptr, nullptr, nullptr));
  if (!key) return fail(error("no PEM private key", key_path));
  if (X509_check_private_key(cert->get(), key.get()) != 1) {
    return fail(error("the key does not match " + cert_path, key_path));
  }
  ca.keys_->key = std::move(key);
  ca.keys_->cert = std::move(*cert);
  ca.pem_ = PemPair{.cert = std::move(*cert_text), .key = std::move(*key_text)};
  return ca;
}

Result<PemPair, TlsError> CertificateAuthority::issue(std::string_view common_name, int validity_days) const {
  ERR_clear_error();
  auto key = new_p256_key();
  if (!key) return fail(key.error());
  auto cert = make_certificate(common_name, key->get(), keys_->cert.get(), keys_->key.get(), validity_days,
                               /*is_ca=*/false);
  if (!cert) return fail(cert.error());
  return pem_of(cert->get(), key->get());
}

Result<std::string, TlsError> CertificateAuthority::crl(const std::vector<std::string>& revoked,
                                                        int validity_days) const {
  ERR_clear_error();
  Crl crl(X509_CRL_new());
  if (!crl) return fail(error("X509_CRL_new failed"));
  using Time = std::unique_ptr<ASN1_TIME, Freer<ASN1_TIME, ASN1_TIME_free>>;
  Time now(X509_gmtime_adj(nullptr, -300));
  Time next(X509_gmtime_adj(nullptr, 86400L * validity_days));
  bool ok = now && next && X509_CRL_set_version(crl.get(), 1) == 1 &&
            X509_CRL_set_issuer_name(crl.get(), X509_get_subject_name(keys_->cert.get())) == 1 &&
            X509_CRL_set1_lastUpdate(crl.get(), now.get()) == 1 &&
            X509_CRL_set1_nextUpdate(crl.get(), next.get()) == 1;
  for (const std::string& pem : revoked) {
    if (!ok) break;
    auto cert = read_cert(pem, "");
    if (!cert) return fail(cert.error());
    Revoked entry(X509_REVOKED_new());
    ok = entry && X509_REVOKED_set_serialNumber(entry.get(), X509_get_serialNumber(cert->get())) == 1 &&
         X509_REVOKED_set_revocationDate(entry.get(), now.get()) == 1 &&
         X509_CRL_add0_revoked(crl.get(), entry.get()) == 1;
    if (ok) (void)entry.release();  // Owned by the CRL now.
  }
  if (!ok) return fail(error("cannot fill in the CRL"));
  X509_CRL_sort(crl.get());
  if (X509_CRL_sign(crl.get(), keys_->key.get(), EVP_sha256()) == 0)
    return fail(error("cannot sign the CRL"));
  return to_pem([&](BIO* bio) { return PEM_write_bio_X509_CRL(bio, crl.get()); });
}

IdentityFiles identity_files(std::string_view dir, std::string_view common_name) {
  const std::string base = std::string(dir) + "/" + std::string(common_name);
  return IdentityFiles{.cert = base + ".pem", .key = base + ".key"};
}

std::string ca_cert_file(std::string_view dir) { return std::string(dir) + "/ca.pem"; }
std::string crl_file(std::string_view dir) { return std::string(dir) + "/crl.pem"; }

TlsFiles cluster_tls_files(std::string_view dir, std::string_view common_name) {
  IdentityFiles files = identity_files(dir, common_name);
  return TlsFiles{.ca = ca_cert_file(dir),
                  .cert = std::move(files.cert),
                  .key = std::move(files.key),
                  .crl = crl_file(dir)};
}

Result<std::vector<std::string>, TlsError> write_cluster_certificates(
    const ClusterCertificatesRequest& request) {
  std::vector<std::string> written;
  const std::string& dir = request.dir;
  std::error_code code;
  std::filesystem::create_directories(dir, code);
  if (code) return fail(TlsError{.file = dir, .reason = "cannot create the folder: " + code.message()});
  ::chmod(dir.c_str(), 0700);
  const IdentityFiles ca_files = identity_files(dir, "ca");
  Result<CertificateAuthority, TlsError> ca = fail(TlsError{});
  if (std::filesystem::exists(ca_files.cert)) {
    ca = CertificateAuthority::load(ca_files.cert, ca_files.key);
  } else {
    ca = CertificateAuthority::create("radiusward-cluster-ca");
    if (ca) {
      if (auto w = write_file(ca_files.key, ca->pem().key, 0600); !w) return fail(w.error());
      if (auto w = write_file(ca_files.cert, ca->pem().cert, 0644); !w) return fail(w.error());
      written.push_back(ca_files.cert);
    }
  }
  if (!ca) return fail(ca.error());

  std::vector<std::string> names;
  for (std::uint64_t id : request.members) names.push_back(member_common_name(id));
  for (const std::string& gateway : request.gateways) {
    if (!valid_gateway_name(gateway)) {
      return fail(TlsError{.reason = "gateway name '" + gateway + "' is not 1 to 64 of a-z, 0-9 and -"});
    }
    names.push_back(gateway_common_name(gateway));
  }
  for (const std::string& name : names) {
    const IdentityFiles files = identity_files(dir, name);
    if (std::filesystem::exists(files.cert)) continue;
    auto issued = ca->issue(name);
    if (!issued) return fail(issued.error());
    // The key first: a certificate without its key would look complete.
    if (auto w = write_file(files.key, issued->key, 0600); !w) return fail(w.error());
    if (auto w = write_file(files.cert, issued->cert, 0644); !w) return fail(w.error());
    written.push_back(files.cert);
  }

  const std::string crl_path = crl_file(dir);
  if (!request.revoke.empty() || !std::filesystem::exists(crl_path)) {
    // Revoked certificates are kept in revoked.pem, so that a later run (or
    // a re-issued certificate of the same name) keeps them revoked.
    const std::string list_path = std::string(dir) + "/revoked.pem";
    std::string list;
    if (std::filesystem::exists(list_path)) {
      auto old = read_file(list_path);
      if (!old) return fail(old.error());
      list = std::move(*old);
    }
    for (const std::string& name : request.revoke) {
      auto pem = read_file(identity_files(dir, name).cert);
      if (!pem) return fail(pem.error());
      list += *pem;
    }
    std::vector<std::string> revoked;
    constexpr std::string_view kEnd = "-----END CERTIFICATE-----";
    for (std::size_t start = 0, end = 0; (end = list.find(kEnd, start)) != std::string::npos;
         start = end + kEnd.size()) {
      revoked.push_back(list.substr(start, end + kEnd.size() - start) + "\n");
    }
    auto crl = ca->crl(revoked);
    if (!crl) return fail(crl.error());
    if (auto w = write_file(crl_path, *crl, 0644); !w) return fail(w.error());
    if (!request.revoke.empty()) {
      if (auto w = write_file(list_path, list, 0644); !w) return fail(w.error());
    }
    written.push_back(crl_path);
  }
  return written;
}

}  // namespace rw::io
