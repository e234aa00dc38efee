// Loading what a gateway config names — dictionaries, clients, users — into
// the immutable GatewayState, and the handler factory built on it. Shared by
// `radiusward gateway` and `radiusward check`, so that check refuses exactly
// what the gateway would refuse.
#pragma once

#include <memory>

#include "accounting/record.h"
#include "base/random.h"
#include "base/result.h"
#include "config/gateway_config.h"
#include "gateway/datagram.h"
#include "gateway/eap_conversations.h"
#include "gateway/gateway_state.h"
#include "gateway/request_handler.h"
#include "io/tls_context.h"

namespace rw::app {

struct LoadedFiles {
  std::shared_ptr<const gateway::GatewayState> state;
  // The session-key recipe of `accounting.key`, resolved against the
  // dictionary; null when accounting is not configured.
  std::shared_ptr<const accounting::KeyRecipe> recipe{};
};

// Loads every file `config` names and builds the gateway state. Collects
// the errors of every file (each as file:line:col: message) rather than
// stopping at the first.
[[nodiscard]] Result<LoadedFiles, config::ConfigErrors> load_referenced_files(
    const config::GatewayConfig& config);

// The EAP options of the state (methods offered, in order; rounds) from the
// eap: section.
[[nodiscard]] gateway::EapOptions eap_options(const config::EapConfig& eap, bool has_tls);

// EAP-TLS, PEAP and EAP-TTLS as a tenant's eap: section (`eap`) lists them,
// with the certificates of its tls: section (`tls`) and the TLS options of
// the gateway's top-level eap section; null when none is listed. A file
// that does not load is an error at that tls: section.
[[nodiscard]] Result<std::shared_ptr<const gateway::EapMethodSet>, config::ConfigError> eap_method_set(
    const config::GatewayConfig& config, const config::EapConfig& eap,
    const std::optional<config::ClusterTlsConfig>& tls);

// The gateway's EAP conversations, shared by its workers and tenants
// (docs/design.md "EAP across several gateways"), sized by the top-level
// eap section; null when no tenant has an EAP method on. The State key is
// drawn from `random`, and so is the gateway id when eap.gateway_id is not set.
[[nodiscard]] std::unique_ptr<gateway::EapConversations> make_eap_conversations(
    const config::GatewayConfig& config, RandomSource& random);

// The workers' handler factory. `random`, `observer` and `sink` (null: no
// accounting) must outlive it. Each worker may hold as many deferred
// Accounting-Requests as its duplicate cache has in-progress entries.
[[nodiscard]] std::unique_ptr<gateway::RequestHandlerFactory> make_handler_factory(
    const LoadedFiles& files, RandomSource& random, gateway::DecisionObserver* observer,
    gateway::AccountingSink* sink = nullptr);

// The TLS context of a `cluster_tls` / `accounting.tls` section for `role`;
// the error names the file and OpenSSL's reason, at the key that named it.
[[nodiscard]] Result<io::TlsContext, config::ConfigError> cluster_tls_context(
    const config::ClusterTlsConfig& tls, io::TlsRole role);

// The server context of the gateway's `tls` section (RadSec): TLS 1.2 and
// 1.3, client certificates required and verified against its CA (and CRL);
// the error names the file and OpenSSL's reason, at the section.
[[nodiscard]] Result<io::TlsContext, config::ConfigError> gateway_tls_context(
    const config::ClusterTlsConfig& tls);

// True when `address` is a loopback address (127/8 or ::1): the only place an
// insecure_plaintext_cluster may send submissions.
[[nodiscard]] bool is_loopback_address(const config::HostPort& address);

}  // namespace rw::app
