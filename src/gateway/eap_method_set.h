// The TLS-based EAP methods one gateway serves (EAP-TLS, PEAP, EAP-TTLS):
// the OpenSSL server contexts built once from the `tls:` files and the
// `eap:` options, and the methods made from them for each conversation.
// One object, owned by the published GatewayState and rebuilt with it on
// reload, so that whatever holds a state (later: a tenant) has its own
// certificate and methods; nothing else reads the TLS configuration.
//
// The inner methods of PEAP and EAP-TTLS ask for the inner user's password
// while a TLS step runs (eap_mschapv2.h, ttls_method.h). The step runs on
// whichever thread took the conversation (the EAP pool in the gateway), so
// the user stores are reached through the InnerCredentialSource that thread
// put in scope for the step: the methods keep no pointer to a state or a
// request.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/password.h"
#include "base/random.h"
#include "base/result.h"
#include "eap/method.h"
#include "eap/peap_method.h"
#include "eap/tls_server_context.h"

namespace rw::gateway {

struct EapMethodSetOptions {
  // The TLS-based types served (kTls, kPeap, kTtls), in any order.
  std::vector<eap::Type> types{};
  // The server certificate, key, CA, CRL and TLS versions (the `tls:`
  // section and eap.tls_*); require_client_certificate is set per method.
  eap::TlsServerConfig tls{};
  std::size_t fragment_octets = 1000;
  eap::PeapCryptoBinding crypto_binding = eap::PeapCryptoBinding::kOptional;
  bool ttls_pap = true;
  bool ttls_mschapv2 = true;
};

// The known good password of an inner user (PEAP's EAP-MSCHAPv2, EAP-TTLS's
// PAP and MS-CHAPv2): the users policy of the inner identity, as PAP gets it.
class InnerCredentialSource {
 public:
  virtual ~InnerCredentialSource() = default;
  // Nothing when no store knows the user or the policy refuses it.
  [[nodiscard]] virtual std::optional<auth::Credential> find(std::string_view user_name) = 0;
};

// Puts `source` in scope for the methods stepped on this thread until
// destroyed. Without one in scope, inner users are unknown.
class InnerCredentialScope {
 public:
  explicit InnerCredentialScope(InnerCredentialSource* source);
  ~InnerCredentialScope();
  InnerCredentialScope(const InnerCredentialScope&) = delete;
  InnerCredentialScope& operator=(const InnerCredentialScope&) = delete;

 private:
  InnerCredentialSource* previous_;
};

// Whether `type` is one whose steps run TLS (and so go to the EAP pool).
[[nodiscard]] bool is_tls_based(eap::Type type);

class EapMethodSet {
 public:
  // Reads the certificate files; an error names the file and OpenSSL's reason.
  [[nodiscard]] static Result<std::shared_ptr<const EapMethodSet>, eap::TlsContextError> build(
      const EapMethodSetOptions& options);

  // Whether `type` is served.
  [[nodiscard]] bool serves(eap::Type type) const;
  // A new method for a conversation of `identity`, or null when `type` is
  // not served. `random` must be usable from any thread and outlive the
  // method (PEAP's MS-CHAPv2 challenge).
  [[nodiscard]] std::unique_ptr<eap::Method> make(eap::Type type, std::string_view identity,
                                                  RandomSource& random) const;

 private:
  EapMethodSet(EapMethodSetOptions options, std::optional<eap::TlsServerContext> client_certificate,
               std::optional<eap::TlsServerContext> tunnel)
      : options_(std::move(options)),
        client_certificate_(std::move(client_certificate)),
        tunnel_(std::move(tunnel)) {}

  EapMethodSetOptions options_;
  std::optional<eap::TlsServerContext> client_certificate_;  // EAP-TLS: a client certificate is required.
  std::optional<eap::TlsServerContext> tunnel_;              // PEAP, EAP-TTLS: none is asked for.
};

}  // namespace rw::gateway
