// EapMethodSet: the TLS-based methods of one gateway state.
#include "gateway/eap_method_set.h"

#include <algorithm>

#include "eap/tls_method.h"
#include "eap/ttls_method.h"

namespace rw::gateway {
namespace {

// The source the step running on this thread put in scope.
thread_local InnerCredentialSource* current_source = nullptr;

std::optional<auth::Credential> inner_credential(std::string_view user_name) {
  if (current_source == nullptr) return std::nullopt;
  return current_source->find(user_name);
}

eap::InnerDecision check_inner_pap(std::string_view user_name, std::string_view password) {
  const std::optional<auth::Credential> known_good = inner_credential(user_name);
  if (!known_good) return eap::InnerDecision{.accepted = false, .reason = "unknown inner user"};
  if (auto verified = auth::verify_pap(*known_good, password); !verified) {
    return eap::InnerDecision{.accepted = false, .reason = std::string(auth::to_string(verified.error()))};
  }
  return eap::InnerDecision{.accepted = true};
}

}  // namespace

InnerCredentialScope::InnerCredentialScope(InnerCredentialSource* source) : previous_(current_source) {
  current_source = source;
}

InnerCredentialScope::~InnerCredentialScope() { current_source = previous_; }

bool is_tls_based(eap::Type type) {
  return type == eap::Type::kTls || type == eap::Type::kPeap || type == eap::Type::kTtls;
}

Result<std::shared_ptr<const EapMethodSet>, eap::TlsContextError> EapMethodSet::build(
    const EapMethodSetOptions& options) {
  const auto serves = [&](eap::Type type) {
    return std::find(options.types.begin(), options.types.end(), type) != options.types.end();
  };
  std::optional<eap::TlsServerContext> client_certificate;
  std::optional<eap::TlsServerContext> tunnel;
  if (serves(eap::Type::kTls)) {
    eap::TlsServerConfig config = options.tls;
    config.require_client_certificate = true;
    auto context = eap::TlsServerContext::create(config);
    if (!context) return fail(std::move(context.error()));
    client_certificate = std::move(*context);
  }
  if (serves(eap::Type::kPeap) || serves(eap::Type::kTtls)) {
    eap::TlsServerConfig config = options.tls;
    config.require_client_certificate = false;
    // Nothing to resume safely and no client certificate to check: the
    // inner method must run every time (docs/security.md "EAP-TLS resumption").
    config.resumption_sessions_max = 0;
    config.revocation = nullptr;
    auto context = eap::TlsServerContext::create(config);
    if (!context) return fail(std::move(context.error()));
    tunnel = std::move(*context);
  }
  return std::shared_ptr<const EapMethodSet>(
      new EapMethodSet(options, std::move(client_certificate), std::move(tunnel)));
}

bool EapMethodSet::serves(eap::Type type) const {
  return std::find(options_.types.begin(), options_.types.end(), type) != options_.types.end();
}

std::unique_ptr<eap::Method> EapMethodSet::make(eap::Type type, std::string_view identity,
                                                RandomSource& random) const {
  if (!serves(type)) return nullptr;
  switch (type) {
    case eap::Type::kTls:
      return std::make_unique<eap::TlsMethod>(
          *client_certificate_, std::string(identity),
          eap::TlsMethodOptions{.fragment_octets = options_.fragment_octets});
    case eap::Type::kPeap:
      return std::make_unique<eap::PeapMethod>(
          *tunnel_, std::string(identity), inner_credential, random,
          eap::PeapMethodOptions{.fragment_octets = options_.fragment_octets,
                                 .crypto_binding = options_.crypto_binding});
    case eap::Type::kTtls: {
      eap::TtlsMethodOptions ttls{.fragment_octets = options_.fragment_octets};
      if (options_.ttls_mschapv2) ttls.ms_chap2_credential = inner_credential;
      eap::InnerPapCheck pap = check_inner_pap;
      if (!options_.ttls_pap) {
        pap = [](std::string_view, std::string_view) {
          return eap::InnerDecision{.accepted = false, .reason = "inner PAP is not served"};
        };
      }
      return std::make_unique<eap::TtlsMethod>(*tunnel_, std::string(identity), std::move(pap),
                                               std::move(ttls));
    }
    default:
      return nullptr;
  }
}

}  // namespace rw::gateway
