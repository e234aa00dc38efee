// The port through which EAP-TLS asks whether a client certificate is
// revoked beyond what the CRLs say: OCSP (RFC 6960). The TLS engine calls
// it once the chain verified, on the thread stepping the conversation (the
// gateway's TLS pool, never a packet-receiving thread); the shell's
// implementation asks the responder over HTTP with a timeout and caches
// answers (docs/security.md "OCSP").
#pragma once

#include <cstdint>
#include <string_view>

struct x509_st;        // OpenSSL's X509.
struct x509_store_st;  // OpenSSL's X509_STORE.
struct stack_st_X509;  // OpenSSL's STACK_OF(X509).

namespace rw::eap {

// The certificate to check and what its answer is verified with.
struct RevocationQuery {
  x509_st* leaf = nullptr;
  x509_st* issuer = nullptr;       // The CA that issued `leaf`.
  x509_store_st* store = nullptr;  // The context's trust store.
  stack_st_X509* chain = nullptr;  // The verified chain, leaf first.
};

enum class RevocationVerdict : std::uint8_t {
  kGood,
  kRevoked,
  // No usable answer (responder down, too slow, a bad answer, or "unknown"):
  // the context's revocation_required decides.
  kUnknown,
};
[[nodiscard]] std::string_view to_string(RevocationVerdict verdict);

class RevocationChecker {
 public:
  virtual ~RevocationChecker() = default;
  // May block up to the implementation's timeout; called from several
  // threads at once.
  [[nodiscard]] virtual RevocationVerdict check(const RevocationQuery& query) = 0;
};

}  // namespace rw::eap
