// Test-only: a PKI made in a temporary folder (a CA, the server's
// certificate, valid, expired and revoked client certificates with a CRL,
// and another CA's client certificate) and an EAP-TLS peer: a real OpenSSL
// client over memory BIOs that speaks the EAP-TLS framing, for the tests of
// EAP-TLS, EAP-TTLS and PEAP and tls_method_bench.cc.
#pragma once

#include <openssl/err.h>
#include <openssl/kdf.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "eap/tls_fragments.h"
#include "eap/tls_method.h"
#include "eap/tls_server_context.h"
#include "io/tls_certificates.h"

namespace rw::eap::testing {

using Octets = std::vector<std::uint8_t>;

// Certificates (EC P-256, io::CertificateAuthority) written once per process.
struct TlsTestPki {
  std::string dir{};
  std::string ca_file{};   // The CA client certificates must chain to.
  std::string crl_file{};  // Revokes `revoked`.
  std::string server_cert_file{};
  std::string server_key_file{};
  io::PemPair valid{};
  io::PemPair expired{};  // Expired yesterday.
  io::PemPair revoked{};
  io::PemPair other_ca_client{};  // Issued by a CA the server does not trust.
  std::string other_ca_file{};    // That CA.
  std::string other_crl_file{};   // That CA's CRL, revoking nothing.
  // Each CA's certificate and key in one PEM (an OCSP responder signing as the CA).
  std::string ca_key_pair_file{};
  std::string other_ca_key_pair_file{};

  ~TlsTestPki() {
    if (!dir.empty()) std::filesystem::remove_all(dir);
  }

  static const TlsTestPki& get() {
    static const TlsTestPki pki = make();
    return pki;
  }

  // The server context of the tunnelled methods (PEAP, EAP-TTLS): the
  // test server certificate, no client certificate asked for.
  [[nodiscard]] TlsServerContext tunnel_context() const {
    TlsServerConfig config = server_config();
    config.require_client_certificate = false;
    auto context = TlsServerContext::create(config);
    if (!context) ADD_FAILURE() << context.error().to_string();
    return *context;
  }

  [[nodiscard]] TlsServerConfig server_config(bool with_crl = true) const {
    return TlsServerConfig{.certificate_chain_file = server_cert_file,
                           .private_key_file = server_key_file,
                           .ca_file = ca_file,
                           .crl_file = with_crl ? std::optional<std::string>(crl_file) : std::nullopt};
  }

  // Writes `text` to `name` in the folder and returns the path.
  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = dir + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

 private:
  static io::PemPair issued(const io::CertificateAuthority& ca, const char* name, int days) {
    auto pem = ca.issue(name, days);
    if (!pem) abort();
    return *pem;
  }

  static TlsTestPki make() {
    TlsTestPki pki;
    char pattern[] = "/tmp/rw_eap_tls_XXXXXX";
    pki.dir = mkdtemp(pattern);
    auto ca = io::CertificateAuthority::create("radiusward-test-eap-ca");
    auto other = io::CertificateAuthority::create("radiusward-test-other-ca");
    if (!ca || !other) abort();
    pki.ca_file = pki.write("ca.pem", ca->pem().cert);
    const io::PemPair server = issued(*ca, "radius.example.org", 30);
    pki.server_cert_file = pki.write("server.pem", server.cert);
    pki.server_key_file = pki.write("server.key", server.key);
    pki.valid = issued(*ca, "alice", 30);
    pki.expired = issued(*ca, "bob-expired", -1);
    pki.revoked = issued(*ca, "carol-revoked", 30);
    pki.other_ca_client = issued(*other, "mallory", 30);
    pki.other_ca_file = pki.write("other_ca.pem", other->pem().cert);
    pki.ca_key_pair_file = pki.write("ca_signer.pem", ca->pem().cert + ca->pem().key);
    pki.other_ca_key_pair_file = pki.write("other_ca_signer.pem", other->pem().cert + other->pem().key);
    auto other_crl = other->crl({});
    if (!other_crl) abort();
    pki.other_crl_file = pki.write("other_crl.pem", *other_crl);
    auto crl = ca->crl({pki.revoked.cert});
    if (!crl) abort();
    pki.crl_file = pki.write("crl.pem", *crl);
    return pki;
  }
};

// The peer's side of EAP-TLS: a TLS client over memory BIOs, fragmenting
// its responses at `fragment_octets` and acknowledging the server's.
class TlsTestPeer {
 public:
  struct Options {
    TlsVersion version = TlsVersion::k1_3;
    const io::PemPair* certificate = nullptr;  // None: the peer sends no certificate.
    std::size_t fragment_octets = 1000;
    bool trust_server = true;  // False: the peer trusts another CA and refuses the server.
    Octets inner{};            // Application data (EAP-TTLS AVPs) sent once the handshake is done.
    // True: the inner data goes with the peer's last handshake flight; false
    // (TLS 1.3 only): in answer to the server's next request.
    bool inner_with_finished = true;
    // The peer's side of a conversation inside the tunnel (PEAP, EAP-TTLS
    // MS-CHAPv2): called with the application data each server message
    // carried, and, when `respond_first`, once with none as the handshake
    // completes; what it returns is written back (nothing: an ACK).
    std::function<Octets(SSL* ssl, const Octets& received)> respond{};
    bool respond_first = false;
    // A session of an earlier handshake to resume (borrowed; none: a full handshake).
    SSL_SESSION* resume = nullptr;
  };

  explicit TlsTestPeer(Options options)
      : fragmenter_(options.fragment_octets),
        inner_(options.inner),
        inner_with_finished_(options.inner_with_finished),
        respond_(std::move(options.respond)),
        respond_first_(options.respond_first) {
    const int version = options.version == TlsVersion::k1_2 ? TLS1_2_VERSION : TLS1_3_VERSION;
    context_.reset(SSL_CTX_new(TLS_client_method()));
    SSL_CTX_set_min_proto_version(context_.get(), version);
    SSL_CTX_set_max_proto_version(context_.get(), version);
    const TlsTestPki& pki = TlsTestPki::get();
    SSL_CTX_load_verify_file(context_.get(),
                             (options.trust_server ? pki.ca_file : pki.other_ca_file).c_str());
    SSL_CTX_set_verify(context_.get(), SSL_VERIFY_PEER, nullptr);
    if (options.certificate != nullptr) {
      BIO* cert = BIO_new_mem_buf(options.certificate->cert.data(),
                                  static_cast<int>(options.certificate->cert.size()));
      BIO* key =
          BIO_new_mem_buf(options.certificate->key.data(), static_cast<int>(options.certificate->key.size()));
      X509* x509 = PEM_read_bio_X509(cert, nullptr, nullptr, nullptr);
      EVP_PKEY* pkey = PEM_read_bio_PrivateKey(key, nullptr, nullptr, nullptr);
      SSL_CTX_use_certificate(context_.get(), x509);
      SSL_CTX_use_PrivateKey(context_.get(), pkey);
      X509_free(x509);
      EVP_PKEY_free(pkey);
      BIO_free(cert);
      BIO_free(key);
    }
    ssl_.reset(SSL_new(context_.get()));
    BIO* in = BIO_new(BIO_s_mem());
    BIO* out = BIO_new(BIO_s_mem());
    BIO_set_mem_eof_return(in, -1);
    BIO_set_mem_eof_return(out, -1);
    SSL_set_bio(ssl_.get(), in, out);
    if (options.resume != nullptr) SSL_set_session(ssl_.get(), options.resume);
    SSL_set_connect_state(ssl_.get());
  }

  // The Type-Data of the peer's response to one EAP-TLS Request.
  Octets on_request(Bytes type_data) {
    auto frame = parse_tls_frame(type_data);
    if (!frame) return ack();
    if ((frame->flags & kTlsFlagStart) != 0) {
      handshake();
      return send_output();
    }
    if (fragmenter_.pending()) return fragmenter_.next();  // The server's ACK of our fragment.
    auto step = reassembler_.on_fragment(type_data);
    if (!step) {
      framing_errors_++;
      return ack();
    }
    if (!*step) {
      server_fragmented_++;
      return ack();  // More server fragments due.
    }
    server_messages_++;
    if (!(*step)->empty()) {
      BIO_write(SSL_get_rbio(ssl_.get()), (*step)->data(), static_cast<int>((*step)->size()));
    }
    const bool was_done = done_;
    if (!done_) handshake();
    if (done_) read_application();
    if (done_ && !inner_.empty() && (was_done || inner_with_finished_)) {
      SSL_write(ssl_.get(), inner_.data(), static_cast<int>(inner_.size()));
      inner_.clear();
    }
    if (done_ && respond_) {
      if (!was_done && respond_first_) write(respond_(ssl_.get(), Octets{}));
      if (!application_.empty()) {
        const Octets received = std::move(application_);
        application_.clear();
        write(respond_(ssl_.get(), received));
      }
    }
    return send_output();
  }

  [[nodiscard]] bool handshake_done() const { return done_; }
  [[nodiscard]] const Octets& application() const { return application_; }
  [[nodiscard]] int server_messages() const { return server_messages_; }
  [[nodiscard]] int framing_errors() const { return framing_errors_; }
  // Server fragments with M set this peer acknowledged, and messages it
  // sent in more than one fragment.
  [[nodiscard]] int server_fragmented() const { return server_fragmented_; }
  [[nodiscard]] int fragmented() const { return fragmented_; }
  // Whether the server sent this peer a TLS alert.
  [[nodiscard]] bool alert_received() const { return alert_received_; }

  // The first 64 octets of the client's export of the EAP-TLS key material,
  // with the RFCs' labels written out here (RFC 5216 §2.3, RFC 9190 §2.3).
  [[nodiscard]] Msk msk() const {
    Octets material(128);
    const bool v13 = SSL_version(ssl_.get()) == TLS1_3_VERSION;
    const std::string label = v13 ? "EXPORTER_EAP_TLS_Key_Material" : "client EAP encryption";
    const unsigned char context = 0x0D;
    if (SSL_export_keying_material(ssl_.get(), material.data(), material.size(), label.data(), label.size(),
                                   v13 ? &context : nullptr, v13 ? 1 : 0, v13 ? 1 : 0) != 1) {
      abort();
    }
    Msk msk;
    std::copy_n(material.begin(), msk.size(), msk.begin());
    return msk;
  }
  [[nodiscard]] SSL* ssl() const { return ssl_.get(); }
  // The session to resume later (the caller frees it), once the handshake
  // is done and, in TLS 1.3, its ticket was read; null when none came.
  [[nodiscard]] SSL_SESSION* session() const {
    SSL_SESSION* session = SSL_get1_session(ssl_.get());
    if (session != nullptr && SSL_SESSION_is_resumable(session) != 1) {
      SSL_SESSION_free(session);
      return nullptr;
    }
    return session;
  }
  [[nodiscard]] bool resumed() const { return SSL_session_reused(ssl_.get()) == 1; }

 private:
  static Octets ack() { return Octets{0x00}; }

  void write(const Octets& plaintext) {
    if (!plaintext.empty()) SSL_write(ssl_.get(), plaintext.data(), static_cast<int>(plaintext.size()));
  }

  void handshake() {
    const int result = SSL_do_handshake(ssl_.get());
    if (result == 1) done_ = true;
    note_alerts();
  }

  void read_application() {
    unsigned char buffer[256];
    int read = 0;
    while ((read = SSL_read(ssl_.get(), buffer, sizeof buffer)) > 0) {
      application_.insert(application_.end(), buffer, buffer + read);
    }
    note_alerts();
  }

  // OpenSSL reports a received alert as SSL_AD_REASON_OFFSET + its code.
  void note_alerts() {
    while (const unsigned long code = ERR_get_error()) {
      if (ERR_GET_LIB(code) == ERR_LIB_SSL && ERR_GET_REASON(code) >= SSL_AD_REASON_OFFSET)
        alert_received_ = true;
    }
  }

  Octets send_output() {
    BIO* out = SSL_get_wbio(ssl_.get());
    Octets output(BIO_ctrl_pending(out));
    if (output.empty()) return ack();
    BIO_read(out, output.data(), static_cast<int>(output.size()));
    if (output.size() > fragmenter_.fragment_octets()) fragmented_++;
    fragmenter_.load(std::move(output));
    return fragmenter_.next();
  }

  struct CtxFree {
    void operator()(SSL_CTX* p) const { SSL_CTX_free(p); }
  };
  struct SslFree {
    void operator()(SSL* p) const { SSL_free(p); }
  };
  std::unique_ptr<SSL_CTX, CtxFree> context_;
  std::unique_ptr<SSL, SslFree> ssl_;
  TlsFragmenter fragmenter_;
  TlsReassembler reassembler_;
  bool done_ = false;
  Octets application_{};
  int server_messages_ = 0;
  int framing_errors_ = 0;
  int server_fragmented_ = 0;
  int fragmented_ = 0;
  bool alert_received_ = false;
  Octets inner_;
  bool inner_with_finished_;
  std::function<Octets(SSL*, const Octets&)> respond_;
  bool respond_first_;
};

// The TLS 1.2 PRF computed from the client's master secret and randoms
// directly, not through the exporter: PRF(master_secret, label,
// client.random || server.random), `length` octets (RFC 5216 §2.3, RFC 5281 §8).
inline Octets tls12_prf_of_peer(SSL* ssl, const std::string& label, std::size_t length) {
  Octets master(48);
  master.resize(SSL_SESSION_get_master_key(SSL_get_session(ssl), master.data(), master.size()));
  Octets seed(64);
  SSL_get_client_random(ssl, seed.data(), 32);
  SSL_get_server_random(ssl, seed.data() + 32, 32);
  const EVP_MD* digest = SSL_CIPHER_get_handshake_digest(SSL_get_current_cipher(ssl));
  EVP_PKEY_CTX* prf = EVP_PKEY_CTX_new_id(EVP_PKEY_TLS1_PRF, nullptr);
  Octets material(length);
  std::size_t size = material.size();
  const bool ok =
      prf != nullptr && EVP_PKEY_derive_init(prf) == 1 && EVP_PKEY_CTX_set_tls1_prf_md(prf, digest) == 1 &&
      EVP_PKEY_CTX_set1_tls1_prf_secret(prf, master.data(), static_cast<int>(master.size())) == 1 &&
      EVP_PKEY_CTX_add1_tls1_prf_seed(prf, reinterpret_cast<const unsigned char*>(label.data()),
                                      static_cast<int>(label.size())) == 1 &&
      EVP_PKEY_CTX_add1_tls1_prf_seed(prf, seed.data(), static_cast<int>(seed.size())) == 1 &&
      EVP_PKEY_derive(prf, material.data(), &size) == 1;
  EVP_PKEY_CTX_free(prf);
  if (!ok) abort();
  return material;
}

// The first 64 octets of the client's export with `label` and a one-octet
// `context` (TLS 1.3 key derivations of RFC 9190 §2.3 and RFC 9427 §2.1).
inline Msk tls13_msk_of_peer(SSL* ssl, const std::string& label, std::uint8_t context) {
  Octets material(128);
  if (SSL_export_keying_material(ssl, material.data(), material.size(), label.data(), label.size(), &context,
                                 1, 1) != 1) {
    abort();
  }
  Msk msk;
  std::copy_n(material.begin(), msk.size(), msk.begin());
  return msk;
}

// Runs a whole conversation; returns the method's final step and counts
// the EAP-Requests it sent in `requests`.
inline MethodStep run_conversation(Method& method, TlsTestPeer& peer, int* requests = nullptr) {
  MethodStep step = method.start();
  int sent = 0;
  while (step.kind == MethodStep::Kind::kRequest && sent < 1000) {
    ++sent;
    const Octets response = peer.on_request(step.type_data);
    step = method.on_response(response);
  }
  if (requests != nullptr) *requests = sent;
  return step;
}

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
using OwnedX509 = std::unique_ptr<X509, X509Free>;

// The first certificate of a PEM text; null when there is none.
inline OwnedX509 parse_certificate(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  OwnedX509 cert(PEM_read_bio_X509(bio, nullptr, nullptr, nullptr));
  BIO_free(bio);
  return cert;
}

// One line of an `openssl ca` database index, which `openssl ocsp -index`
// answers from: 'V' (valid) or 'R' (revoked) for `cert`'s serial.
inline std::string ocsp_index_line(char status, X509* cert) {
  BIGNUM* serial = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr);
  char* hex = BN_bn2hex(serial);
  std::string line(1, status);
  line += "\t301231235959Z\t";
  if (status == 'R') line += "240101000000Z";
  line += std::string("\t") + hex + "\tunknown\t/CN=x\n";
  OPENSSL_free(hex);
  BN_free(serial);
  return line;
}

}  // namespace rw::eap::testing
