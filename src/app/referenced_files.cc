// Wiring: calls the loaders of each file format and turns their errors into
// ConfigErrors; no logic of its own.
#include "app/referenced_files.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "config/clients_file.h"
#include "config/users_file.h"
#include "gateway_shell/ocsp_checker.h"
#include "io/csprng.h"
#include "io/http_client.h"
#include "policy/policy_file.h"
#include "radius/dictionary.h"

namespace rw::app {
namespace {

config::ConfigError config_error(std::string file, int line, int column, std::string message) {
  return config::ConfigError{std::move(file), line, column, std::move(message)};
}

Result<std::shared_ptr<const radius::Dictionary>, config::ConfigError> load_dictionary(
    const config::GatewayConfig& config) {
  std::vector<std::string> paths;
  if (config.dictionary_dir) {
    const std::string main_file = config.dictionary_dir->path + "/dictionary";
    if (std::filesystem::exists(main_file) || !config.dictionary_dir_optional) paths.push_back(main_file);
  }
  for (const config::ConfiguredPath& file : config.dictionary_files) paths.push_back(file.path);
  if (paths.empty()) return radius::Dictionary::builtin();
  auto loaded = radius::Dictionary::load(paths);
  if (!loaded) {
    const radius::DictionaryError& e = loaded.error();
    return fail(config_error(e.file, e.line, e.column, e.message));
  }
  return *loaded;
}

std::optional<eap::Type> tls_eap_type(std::string_view name) {
  if (name == "tls") return eap::Type::kTls;
  if (name == "peap") return eap::Type::kPeap;
  if (name == "ttls") return eap::Type::kTtls;
  return std::nullopt;
}

eap::TlsVersion tls_version(config::EapTlsVersion version) {
  return version == config::EapTlsVersion::k1_2 ? eap::TlsVersion::k1_2 : eap::TlsVersion::k1_3;
}

eap::PeapCryptoBinding crypto_binding(config::EapPeapCryptoBinding binding) {
  switch (binding) {
    case config::EapPeapCryptoBinding::kOff:
      return eap::PeapCryptoBinding::kOff;
    case config::EapPeapCryptoBinding::kOptional:
      return eap::PeapCryptoBinding::kOptional;
    case config::EapPeapCryptoBinding::kRequired:
      return eap::PeapCryptoBinding::kRequired;
  }
  return eap::PeapCryptoBinding::kOptional;
}

}  // namespace

gateway::EapOptions eap_options(const config::EapConfig& eap, bool has_tls) {
  gateway::EapOptions options;
  options.rounds_max = eap.rounds_max;
  for (const std::string& name : eap.methods) {
    if (name == "md5" && eap.md5) options.methods.push_back(eap::Type::kMd5Challenge);
    if (const auto type = tls_eap_type(name); type && has_tls) options.methods.push_back(*type);
  }
  return options;
}

Result<std::shared_ptr<const gateway::EapMethodSet>, config::ConfigError> eap_method_set(
    const config::GatewayConfig& config, const config::EapConfig& eap,
    const std::optional<config::ClusterTlsConfig>& tls_section) {
  gateway::EapMethodSetOptions options;
  for (const std::string& name : eap.methods) {
    if (const auto type = tls_eap_type(name)) options.types.push_back(*type);
  }
  if (options.types.empty() || !tls_section) return std::shared_ptr<const gateway::EapMethodSet>();
  // The tenant's `tls:` section is the one place its certificates come
  // from, for RadSec and EAP alike; the TLS options (versions, fragments,
  // cryptobinding, inner methods) are the gateway's top-level eap section's.
  const config::ClusterTlsConfig& tls = *tls_section;
  options.tls.certificate_chain_file = tls.cert.path;
  options.tls.private_key_file = tls.key.path;
  options.tls.ca_file = tls.ca.path;
  if (tls.crl) options.tls.crl_file = tls.crl->path;
  if (tls.ca_path) options.tls.ca_path = tls.ca_path->path;
  options.tls.min_version = tls_version(config.eap.tls_min_version);
  options.tls.max_version = tls_version(config.eap.tls_max_version);
  options.fragment_octets = config.eap.tls_fragment_octets;
  options.crypto_binding = crypto_binding(config.eap.peap_crypto_binding);
  options.ttls_pap = config.eap.ttls_pap;
  options.ttls_mschapv2 = config.eap.ttls_mschapv2;
  // EAP-TLS only (EapMethodSet::build leaves the tunnel context without
  // them): resumption and OCSP (docs/security.md "EAP-TLS resumption", "OCSP").
  options.tls.resumption_sessions_max = config.eap.tls_resumption_sessions;
  options.tls.resumption_lifetime = config.eap.tls_resumption_lifetime;
  if (const std::optional<config::EapOcspConfig>& ocsp = config.eap.ocsp) {
    gateway_shell::OcspOptions checker{.timeout = ocsp->timeout};
    if (ocsp->responder) {
      auto url = io::parse_http_url(*ocsp->responder);
      if (!url) return fail(ocsp->responder_where.error("eap.ocsp.responder: " + url.error()));
      checker.responder = std::move(*url);
    }
    // The nonces: any thread's CSPRNG, since the checker runs on the pool's.
    static io::ThreadLocalCsprng random;
    options.tls.revocation = std::make_shared<gateway_shell::OcspChecker>(std::move(checker), random);
    options.tls.revocation_required = ocsp->required;
  }
  auto set = gateway::EapMethodSet::build(options);
  if (!set) return fail(tls.where.error("EAP: " + set.error().to_string()));
  return std::move(*set);
}

std::unique_ptr<gateway::EapConversations> make_eap_conversations(const config::GatewayConfig& config,
                                                                  RandomSource& random) {
  const config::EapConfig& eap = config.eap;
  bool served = !eap_options(eap, config.tls.has_value()).methods.empty();
  for (const config::TenantConfig& tenant : config.tenants)
    served = served || !eap_options(tenant.eap, tenant.tls.has_value()).methods.empty();
  if (!served) return nullptr;
  std::uint32_t gateway_id = eap.gateway_id.value_or(0);
  while (gateway_id == 0)
    random.fill(MutableBytes(reinterpret_cast<std::uint8_t*>(&gateway_id), sizeof gateway_id));
  return std::make_unique<gateway::EapConversations>(
      gateway::EapTableOptions{.conversations_max = eap.conversations_max,
                               .idle_timeout = eap.idle_timeout,
                               .gateway_id = gateway_id},
      random);
}

namespace {

// What one tenant's files hold; each loader's errors are collected.
struct TenantFiles {
  std::vector<config::ClientDef> clients;
  std::vector<config::ClientDef> radsec_clients;
  std::optional<config::UsersFile> users;
  std::shared_ptr<const policy::Policy> policy;
};

void load_clients(const config::ConfiguredPath& file, const config::ClientsLimits& limits,
                  std::vector<config::ClientDef>& out, config::ConfigErrors& errors) {
  auto loaded = config::load_clients_file(file.path, limits);
  if (loaded) {
    out = std::move(loaded->clients);
  } else {
    const config::SourceError& e = loaded.error();
    errors.push_back(config_error(e.file, e.line, e.column, e.message));
  }
}

TenantFiles load_tenant_files(const config::GatewayConfig& config,
                              const std::shared_ptr<const radius::Dictionary>* dictionary,
                              const config::ConfiguredPath& clients_file,
                              const config::ConfiguredPath* radsec_clients_file,
                              const config::ConfiguredPath& users_file,
                              const std::optional<config::ConfiguredPath>& policy_file,
                              config::ConfigErrors& errors) {
  TenantFiles files;
  config::ClientsLimits clients_limits;
  clients_limits.require_message_authenticator_default =
      config.require_message_authenticator ? config::ClientCheck::kYes : config::ClientCheck::kNo;
  load_clients(clients_file, clients_limits, files.clients, errors);
  if (radsec_clients_file != nullptr) {
    config::ClientsLimits radsec_limits;
    radsec_limits.radsec = true;
    radsec_limits.require_certificate_name = config.radsec && config.radsec->require_certificate_name;
    load_clients(*radsec_clients_file, radsec_limits, files.radsec_clients, errors);
  }
  if (dictionary != nullptr) {
    auto loaded = config::UsersFile::load(users_file.path, *dictionary, gateway::gateway_users_limits());
    if (loaded) {
      files.users = std::move(*loaded);
    } else {
      const config::SourceError& e = loaded.error();
      errors.push_back(config_error(e.file, e.line, e.column, e.message));
    }
  }
  if (policy_file) {
    auto policy = policy::load_policy(policy_file->path);
    if (policy) {
      files.policy = std::make_shared<const policy::Policy>(std::move(*policy));
    } else {
      errors.insert(errors.end(), policy.error().begin(), policy.error().end());
    }
  }
  return files;
}

// A client prefix in two tenants' files (or twice in one), at the later
// entry's position: a NAS has exactly one tenant (docs/design.md "Tenants").
void check_one_tenant_per_prefix(const std::vector<const std::vector<config::ClientDef>*>& lists,
                                 config::ConfigErrors& errors) {
  std::map<std::tuple<bool, std::array<std::uint8_t, 16>, std::uint8_t>, const config::ClientDef*> seen;
  for (const std::vector<config::ClientDef>* list : lists) {
    for (const config::ClientDef& client : *list) {
      auto [found, inserted] =
          seen.emplace(std::tuple{client.is_v6, client.address, client.prefix_length}, &client);
      if (inserted) continue;
      errors.push_back(config_error(
          client.file, client.line, 1,
          fmt::format("client {}: its address and prefix are those of client {} at {}:{}", client.name,
                      found->second->name, found->second->file, found->second->line)));
    }
  }
}

}  // namespace

Result<LoadedFiles, config::ConfigErrors> load_referenced_files(const config::GatewayConfig& config) {
  config::ConfigErrors errors = config::check_referenced_files(config);
  if (!errors.empty()) return fail(std::move(errors));

  auto dictionary = load_dictionary(config);
  if (!dictionary) errors.push_back(dictionary.error());
  const std::shared_ptr<const radius::Dictionary>* loaded_dictionary = dictionary ? &*dictionary : nullptr;
  TenantFiles files = load_tenant_files(config, loaded_dictionary, config.clients_file,
                                        config.radsec ? &config.radsec->clients_file : nullptr,
                                        config.users_file, config.policy_file, errors);
  std::vector<TenantFiles> tenant_files;
  tenant_files.reserve(config.tenants.size());
  for (const config::TenantConfig& tenant : config.tenants) {
    tenant_files.push_back(
        load_tenant_files(config, loaded_dictionary, tenant.clients_file,
                          tenant.radsec_clients_file ? &*tenant.radsec_clients_file : nullptr,
                          tenant.users_file, tenant.policy_file, errors));
  }
  for (const bool radsec : {false, true}) {
    std::vector<const std::vector<config::ClientDef>*> lists{radsec ? &files.radsec_clients : &files.clients};
    for (const TenantFiles& tenant : tenant_files)
      lists.push_back(radsec ? &tenant.radsec_clients : &tenant.clients);
    check_one_tenant_per_prefix(lists, errors);
  }
  // Each tenant's EAP-TLS, PEAP and EAP-TTLS with its own certificates and CA.
  const auto method_set = [&](const config::EapConfig& eap,
                              const std::optional<config::ClusterTlsConfig>& tls) {
    std::shared_ptr<const gateway::EapMethodSet> made;
    if (auto set = eap_method_set(config, eap, tls); set) {
      made = std::move(*set);
    } else {
      errors.push_back(std::move(set.error()));
    }
    return made;
  };
  std::shared_ptr<const gateway::EapMethodSet> eap_methods = method_set(config.eap, config.tls);
  std::vector<std::shared_ptr<const gateway::EapMethodSet>> tenant_eap_methods;
  for (const config::TenantConfig& tenant : config.tenants)
    tenant_eap_methods.push_back(method_set(tenant.eap, tenant.tls));
  if (!errors.empty()) return fail(std::move(errors));

  gateway::GatewayOptions options;
  options.access.mab_default = config.mab_default == config::MabDefault::kAccept
                                   ? gateway::MabDefault::kAccept
                                   : gateway::MabDefault::kReject;
  options.duplicates.window = config.duplicate_window;
  options.access.users_stores = config.users_stores;
  options.access.simultaneous_use_unavailable = config.simultaneous_use_unavailable;
  if (config.accounting) options.access.session_query_timeout = config.accounting->session_query_timeout;
  options.access.eap = eap_options(config.eap, config.tls.has_value());
  std::vector<gateway::TenantState::Inputs> tenants;
  for (std::size_t i = 0; i < config.tenants.size(); ++i) {
    const config::TenantConfig& tenant = config.tenants[i];
    TenantFiles& loaded = tenant_files[i];
    tenants.push_back({.name = tenant.name,
                       .users = std::move(*loaded.users),
                       .users_stores = tenant.users_stores,
                       .eap = eap_options(tenant.eap, tenant.tls.has_value()),
                       .policy = std::move(loaded.policy),
                       .clients = std::move(loaded.clients),
                       .radsec_clients = std::move(loaded.radsec_clients),
                       .eap_methods = std::move(tenant_eap_methods[i])});
  }
  auto state = gateway::GatewayState::build({.dictionary = *dictionary,
                                             .clients = std::move(files.clients),
                                             .users = std::move(*files.users),
                                             .options = options,
                                             .policy = std::move(files.policy),
                                             .radsec_clients = std::move(files.radsec_clients),
                                             .tenants = std::move(tenants),
                                             .eap_methods = std::move(eap_methods)});
  if (!state) {
    const config::SourceLocation& where = config.clients_file.where;
    return fail(config::ConfigErrors{config_error(where.file, where.line, where.column, state.error())});
  }
  LoadedFiles loaded{std::move(*state)};
  if (config.accounting) {
    const config::AccountingConfig& accounting = *config.accounting;
    if (!accounting.key) {
      loaded.recipe =
          std::make_shared<const accounting::KeyRecipe>(accounting::KeyRecipe::freeradius_default());
    } else {
      // FreeRADIUS's class_value_prefix, as in freeradius_default().
      auto recipe = accounting::KeyRecipe::parse(*accounting.key, "ai:", *dictionary);
      if (!recipe) {
        const config::SourceLocation& where = accounting.key_where;
        return fail(config::ConfigErrors{
            config_error(where.file, where.line, where.column, "accounting.key: " + recipe.error())});
      }
      loaded.recipe = std::make_shared<const accounting::KeyRecipe>(std::move(*recipe));
    }
  }
  return loaded;
}

std::unique_ptr<gateway::RequestHandlerFactory> make_handler_factory(const LoadedFiles& files,
                                                                     RandomSource& random,
                                                                     gateway::DecisionObserver* observer,
                                                                     gateway::AccountingSink* sink) {
  gateway::AccountingSetup accounting;
  if (sink != nullptr) {
    accounting.sink = sink;
    accounting.recipe = files.recipe;
    accounting.deferred_max = std::min<std::size_t>(files.state->options().duplicates.in_progress_max, 65536);
  }
  return std::make_unique<gateway::RequestHandlerFactory>(files.state, random, observer,
                                                          std::move(accounting));
}

Result<io::TlsContext, config::ConfigError> cluster_tls_context(const config::ClusterTlsConfig& tls,
                                                                io::TlsRole role) {
  io::TlsFiles files{.ca = tls.ca.path, .cert = tls.cert.path, .key = tls.key.path};
  if (tls.crl) files.crl = tls.crl->path;
  auto context = io::make_tls_context(files, role);
  if (!context) return fail(tls.where.error(context.error().to_string()));
  return std::move(*context);
}

Result<io::TlsContext, config::ConfigError> gateway_tls_context(const config::ClusterTlsConfig& tls) {
  io::TlsFiles files{.ca = tls.ca.path, .cert = tls.cert.path, .key = tls.key.path};
  if (tls.crl) files.crl = tls.crl->path;
  auto context = io::make_tls_context(files, io::TlsRole::kServer, io::TlsVersions::k12And13);
  if (!context) return fail(tls.where.error(context.error().to_string()));
  return std::move(*context);
}

bool is_loopback_address(const config::HostPort& address) {
  if (!address.is_v6) return address.bytes[0] == 127;
  for (std::size_t i = 0; i < 15; ++i) {
    if (address.bytes[i] != 0) return false;
  }
  return address.bytes[15] == 1;
}

}  // namespace rw::app
