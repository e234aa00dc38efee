// libFuzzer target for the judgment of OCSP answers (ocsp.h): the input is
// a responder's answer to a request for a certificate of a CA made once at
// start. Properties: no crash, no leak; a refusal has a name; nothing not
// signed by that CA is ever judged (the fuzzer cannot sign). Corpus:
// tests/corpus/ocsp_fuzz/ (real `openssl ocsp` answers, for another CA's
// certificate, and their truncations).
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "eap/ocsp.h"
#include "io/tls_certificates.h"

namespace {

using namespace rw;
using namespace rw::eap;

X509* parse(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return cert;
}

struct Setup {
  X509_STORE* store = X509_STORE_new();
  std::optional<OcspRequest> request{};
  Setup() {
    auto ca = io::CertificateAuthority::create("radiusward-fuzz-ca");
    if (!ca) __builtin_trap();
    auto leaf = ca->issue("alice", 30);
    if (!leaf) __builtin_trap();
    X509* ca_cert = parse(ca->pem().cert);
    X509* leaf_cert = parse(leaf->cert);
    X509_STORE_add_cert(store, ca_cert);
    auto made = OcspRequest::create(leaf_cert, ca_cert, std::array<std::uint8_t, kOcspNonceOctets>{});
    if (!made) __builtin_trap();
    request.emplace(std::move(*made));
    X509_free(ca_cert);
    X509_free(leaf_cert);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Setup setup;
  auto judged = judge_ocsp_response(*setup.request, Bytes(data, size), setup.store, nullptr,
                                    OcspJudgeOptions{.now_unix_s = 1'800'000'000});
  if (judged) __builtin_trap();  // Only the CA signs, and the fuzzer is not the CA.
  if (to_string(judged.error()).empty()) __builtin_trap();
  return 0;
}
