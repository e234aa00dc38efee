// Parsing and validation of the gateway's YAML configuration, on the shared
// YamlReader (yaml_reader.h): every call into yaml-cpp, which throws, is
// inside YamlReader::read_document, which turns exceptions into ConfigErrors.
#include "config/gateway_config.h"

#include "config/member_config.h"
#include "config/yaml_reader.h"

#include <arpa/inet.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

namespace rw::config {
namespace {

std::optional<MabDefault> parse_mab_default(std::string_view text) {
  return parse_named(text, {MabDefault::kReject, MabDefault::kAccept});
}

std::optional<SimultaneousUseUnavailable> parse_simultaneous_use_unavailable(std::string_view text) {
  return parse_named(text, {SimultaneousUseUnavailable::kReject, SimultaneousUseUnavailable::kAccept,
                            SimultaneousUseUnavailable::kDrop});
}

// Larger config files are refused before yaml-cpp sees them: a real gateway
// config is a few kilobytes, and the bound keeps the parser's time and memory
// small on hostile input (the fuzz target).
constexpr std::size_t kConfigBytesMax = 1024 * 1024;

std::optional<ListenAddress> parse_address(std::string_view text, SourceLocation where) {
  ListenAddress address{.text = std::string(text), .where = std::move(where)};
  const std::string terminated(text);
  if (inet_pton(AF_INET, terminated.c_str(), address.bytes.data()) == 1) return address;
  if (inet_pton(AF_INET6, terminated.c_str(), address.bytes.data()) == 1) {
    address.is_v6 = true;
    return address;
  }
  return std::nullopt;
}

std::vector<ListenAddress> default_listen() {
  std::vector<ListenAddress> addresses;
  for (std::string_view text : {"0.0.0.0", "::"}) addresses.push_back(*parse_address(text, {}));
  return addresses;
}

// True if `members` holds `address` however written (HostPort::same_endpoint).
bool listed(const std::vector<SubmissionAddress>& members, const HostPort& address) {
  return std::any_of(members.begin(), members.end(),
                     [&](const SubmissionAddress& other) { return other.address.same_endpoint(address); });
}

// Checks that apply to the finished config whatever it was built from.
void validate_ports(const GatewayConfig& config, const SourceLocation& where, ConfigErrors& errors) {
  if (config.auth_port != 0 && config.auth_port == config.acct_port) {
    errors.push_back(where.error(fmt::format("auth_port and acct_port are both {}", config.auth_port)));
  }
}

// RadSec presents the gateway's certificate and verifies its peers' against
// the gateway's CA: it needs the `tls` section.
void validate_radsec(const GatewayConfig& config, const SourceLocation& where, ConfigErrors& errors) {
  if (config.radsec && !config.tls) {
    errors.push_back(
        where.error("radsec needs a 'tls' section (the server certificate and key, and the CA of the client "
                    "certificates)"));
  }
}

// EAP-TLS, PEAP and EAP-TTLS present the gateway's certificate and verify
// client certificates against its CA: they need the `tls` section.
void validate_eap_tls(const EapConfig& eap, const std::optional<ClusterTlsConfig>& tls,
                      const SourceLocation& where, ConfigErrors& errors) {
  if (tls) return;
  for (const std::string& method : eap.methods) {
    if (!is_tls_eap_method(method)) continue;
    errors.push_back(where.error(fmt::format(
        "eap.methods lists {} but there is no 'tls' section (the server certificate and key, and the CA "
        "of the client certificates)",
        method)));
  }
}

void validate_eap_tls(const GatewayConfig& config, const SourceLocation& where, ConfigErrors& errors) {
  validate_eap_tls(config.eap, config.tls, where, errors);
  // A tenant's TLS-based methods use the tenant's own certificates and CA.
  for (const TenantConfig& tenant : config.tenants)
    validate_eap_tls(tenant.eap, tenant.tls, tenant.eap.where.line > 0 ? tenant.eap.where : tenant.where,
                     errors);
}

// The accounting section's transport: TLS with every member's id, or an
// explicit plaintext opt-in (docs/security.md "Submission port").
void validate_accounting_security(const AccountingConfig& accounting, const SourceLocation& where,
                                  ConfigErrors& errors) {
  if (accounting.tls && accounting.insecure_plaintext_cluster) {
    errors.push_back(
        where.error("accounting.tls and accounting.insecure_plaintext_cluster exclude each other"));
  } else if (!accounting.tls && !accounting.insecure_plaintext_cluster) {
    errors.push_back(
        where.error("accounting needs 'tls' (the cluster certificates: radiusward certs) or "
                    "'insecure_plaintext_cluster: true'"));
  }
  if (!accounting.tls) return;
  std::set<std::uint64_t> ids;
  for (const SubmissionAddress& member : accounting.members) {
    if (member.member_id == 0) {
      errors.push_back(member.where.error(fmt::format(
          "with accounting.tls each member needs its id: {{id: N, address: {}}}", member.address.text)));
    } else if (!ids.insert(member.member_id).second) {
      errors.push_back(member.where.error(fmt::format("member id {} is listed twice", member.member_id)));
    }
  }
}

// Walks the YAML tree once and fills a GatewayConfig, collecting errors.
class Parser : YamlReader {
 public:
  explicit Parser(std::string_view file_name) : YamlReader(file_name), config_(default_gateway_config()) {
    config_.source_file = file_;
    // The default folder is named by no key; problems with it point at the file.
    config_.dictionary_dir->where = SourceLocation{.file = file_};
  }

  void parse_root(const YAML::Node& root) {
    if (!expect_root(root)) return;
    static const Table kTopLevel = {
        {"listen", &Parser::on_listen},
        {"auth_port", &Parser::on_auth_port},
        {"acct_port", &Parser::on_acct_port},
        {"workers", &Parser::on_workers},
        {"users_file", &Parser::on_users_file},
        {"clients_file", &Parser::on_clients_file},
        {"dictionary_dir", &Parser::on_dictionary_dir},
        {"dictionary_files", &Parser::on_dictionary_files},
        {"logging", &Parser::on_logging},
        {"duplicate_window_ms", &Parser::on_duplicate_window_ms},
        {"mab_default", &Parser::on_mab_default},
        {"simultaneous_use_unavailable", &Parser::on_simultaneous_use_unavailable},
        {"admin_socket", &Parser::on_admin_socket},
        {"admin_listen", &Parser::on_admin_listen},
        {"admin_token_file", &Parser::on_admin_token_file},
        {"require_message_authenticator", &Parser::on_require_message_authenticator},
        {"share_ports", &Parser::on_share_ports},
        {"accounting", &Parser::on_accounting},
        {"users_stores", &Parser::on_users_stores},
        {"sql_users", &Parser::on_sql_users},
        {"eap", &Parser::on_eap},
        {"policy", &Parser::on_policy},
        {"tls", &Parser::on_tls},
        {"radsec", &Parser::on_radsec},
        {"audit", &Parser::on_audit},
        {"tenants", &Parser::on_tenants},
    };
    const std::set<std::string> seen = read_section(root, "", kTopLevel);
    require(seen, "", "users_file", at(root));
    require(seen, "", "clients_file", at(root));
    check_sql_stores(at(root));
    validate_ports(config_, auth_port_where_.value_or(at(root)), errors_);
    validate_radsec(config_, config_.radsec ? config_.radsec->where : at(root), errors_);
    validate_tenants(config_, errors_);
    validate_eap_tls(config_, eap_methods_where_.value_or(at(root)), errors_);
    check_admin_tcp(config_.admin_socket.has_value(), config_.admin_listen,
                    config_.admin_token_file.has_value(), at(root), errors_);
  }

  void parse(std::string_view text) {
    read_document(text, kConfigBytesMax, [&](const YAML::Node& root) { parse_root(root); });
  }

  ConfigErrors& errors() { return errors_; }
  GatewayConfig& config() { return config_; }

 private:
  using KeyHandler = void (Parser::*)(const YAML::Node& value, const SourceLocation& where);
  using Table = std::vector<std::pair<std::string_view, KeyHandler>>;

  // users_stores lists sql exactly when there is an sql_users section (at
  // the top level or in the tenant being read).
  void check_sql_stores(const SourceLocation& where) {
    const bool wants_sql = std::find(config_.users_stores.begin(), config_.users_stores.end(),
                                     UsersStore::kSql) != config_.users_stores.end();
    if (wants_sql && !config_.sql_users) {
      errors_.push_back(where.error("users_stores lists sql but there is no 'sql_users' section"));
    } else if (!wants_sql && config_.sql_users) {
      errors_.push_back(
          config_.sql_users->where.error("'sql_users' is set but users_stores does not list sql"));
    }
  }

  // Reads the keys of one mapping through the handlers `table` names.
  std::set<std::string> read_section(const YAML::Node& map, std::string_view section, const Table& table) {
    return each_key(map, section,
                    [&](const std::string& key, const YAML::Node& value, const SourceLocation& where) {
                      for (const auto& [name, handler] : table) {
                        if (name != key) continue;
                        if (section.empty()) config_.key_where[key] = where;
                        (this->*handler)(value, where);
                        return true;
                      }
                      return false;
                    });
  }

  void on_listen(const YAML::Node& value, const SourceLocation& where) {
    config_.listen.clear();
    std::set<std::string> seen;
    sequence(value, where, "IP addresses", [&](const YAML::Node& element) {
      std::optional<std::string> text = scalar(element, at(element), "an IP address");
      if (!text) return;
      std::optional<ListenAddress> address = parse_address(*text, at(element));
      if (!address) {
        errors_.push_back(at(element).error(fmt::format("'{}' is not an IPv4 or IPv6 address", *text)));
      } else if (!seen.insert(*text).second) {
        errors_.push_back(at(element).error(fmt::format("address '{}' is listed twice", *text)));
      } else {
        config_.listen.push_back(std::move(*address));
      }
    });
    if (value.IsSequence() && value.size() == 0) {
      errors_.push_back(at(value).error("listen needs at least one address"));
    }
  }

  void on_auth_port(const YAML::Node& value, const SourceLocation& where) {
    auth_port_where_ = where;
    set_integer(config_.auth_port, value, where, 0, 65535);
  }

  void on_acct_port(const YAML::Node& value, const SourceLocation& where) {
    set_integer(config_.acct_port, value, where, 0, 65535);
  }

  void on_workers(const YAML::Node& value, const SourceLocation& where) {
    set_integer(config_.workers, value, where, 0, kWorkersMax);
  }

  void on_users_file(const YAML::Node& value, const SourceLocation& where) {
    if (auto file = path(value, where)) config_.users_file = std::move(*file);
  }

  void on_policy(const YAML::Node& value, const SourceLocation& where) {
    config_.policy_file = path(value, where);
  }

  void on_clients_file(const YAML::Node& value, const SourceLocation& where) {
    if (auto file = path(value, where)) config_.clients_file = std::move(*file);
  }

  void on_dictionary_dir(const YAML::Node& value, const SourceLocation& where) {
    config_.dictionary_dir_optional = false;
    if (value.IsNull()) {
      // `dictionary_dir:` with no value, or `~`: the built-in dictionary only.
      config_.dictionary_dir.reset();
      return;
    }
    config_.dictionary_dir = path(value, where);
  }

  void on_dictionary_files(const YAML::Node& value, const SourceLocation& where) {
    sequence(value, where, "paths", [&](const YAML::Node& element) {
      if (auto file = path(element, at(element))) config_.dictionary_files.push_back(std::move(*file));
    });
  }

  void on_logging(const YAML::Node& value, const SourceLocation& where) {
    logging(value, where, config_.logging);
  }

  void on_duplicate_window_ms(const YAML::Node& value, const SourceLocation& where) {
    if (auto window = duration(value, where, DurationUnit::kMilliseconds, kDuplicateWindowMsMin,
                               kDuplicateWindowMsMax)) {
      config_.duplicate_window = *window;
    }
  }

  void on_mab_default(const YAML::Node& value, const SourceLocation& where) {
    if (auto action = choice<MabDefault>(value, where, "reject or accept", parse_mab_default)) {
      config_.mab_default = *action;
    }
  }

  void on_simultaneous_use_unavailable(const YAML::Node& value, const SourceLocation& where) {
    if (auto policy = choice<SimultaneousUseUnavailable>(value, where, "reject, accept or drop",
                                                         parse_simultaneous_use_unavailable)) {
      config_.simultaneous_use_unavailable = *policy;
    }
  }

  void on_admin_socket(const YAML::Node& value, const SourceLocation& where) {
    if (value.IsNull()) return;
    config_.admin_socket = path(value, where);
  }

  void on_admin_listen(const YAML::Node& value, const SourceLocation& where) {
    if (value.IsNull()) return;
    config_.admin_listen = address(value, where);
  }

  void on_admin_token_file(const YAML::Node& value, const SourceLocation& where) {
    if (value.IsNull()) return;
    config_.admin_token_file = path(value, where);
  }

  void on_require_message_authenticator(const YAML::Node& value, const SourceLocation& where) {
    if (auto flag = boolean(value, where)) config_.require_message_authenticator = *flag;
  }

  void on_share_ports(const YAML::Node& value, const SourceLocation& where) {
    if (auto flag = boolean(value, where)) config_.share_ports = *flag;
  }

  void on_accounting(const YAML::Node& value, const SourceLocation& where) {
    static const Table kAccounting = {
        {"members", &Parser::on_members},
        {"pending_records_max", &Parser::on_pending_records_max},
        {"batch_records_max", &Parser::on_batch_records_max},
        {"batch_delay_us", &Parser::on_batch_delay_us},
        {"session_query_timeout_ms", &Parser::on_session_query_timeout_ms},
        {"key", &Parser::on_key},
        {"tls", &Parser::on_accounting_tls},
        {"insecure_plaintext_cluster", &Parser::on_insecure_plaintext_cluster},
    };
    if (!expect_map(value, where, "with 'members' and bounds")) return;
    config_.accounting.emplace();
    config_.accounting->where = where;
    const std::set<std::string> seen = read_section(value, "accounting.", kAccounting);
    require(seen, "accounting.", "members", at(value));
    validate_accounting_security(*config_.accounting, where, errors_);
  }

  void on_accounting_tls(const YAML::Node& value, const SourceLocation& where) {
    config_.accounting->tls = tls_section(value, where, "accounting.tls.");
  }

  void on_insecure_plaintext_cluster(const YAML::Node& value, const SourceLocation& where) {
    if (auto flag = boolean(value, where)) config_.accounting->insecure_plaintext_cluster = *flag;
  }

  void on_users_stores(const YAML::Node& value, const SourceLocation& where) {
    std::vector<UsersStore> stores;
    sequence(value, where, "user stores", [&](const YAML::Node& element) {
      std::optional<std::string> text = scalar(element, at(element), "files or sql");
      if (!text) return;
      std::optional<UsersStore> store;
      if (*text == "files") store = UsersStore::kFiles;
      if (*text == "sql") store = UsersStore::kSql;
      if (!store) {
        errors_.push_back(at(element).error(fmt::format("unknown user store '{}' (files or sql)", *text)));
      } else if (std::find(stores.begin(), stores.end(), *store) != stores.end()) {
        errors_.push_back(at(element).error(fmt::format("user store '{}' is listed twice", *text)));
      } else {
        stores.push_back(*store);
      }
    });
    if (value.IsSequence() && value.size() == 0) {
      errors_.push_back(at(value).error("users_stores needs at least one store"));
    }
    config_.users_stores = std::move(stores);
  }

  void on_sql_users(const YAML::Node& value, const SourceLocation& where) {
    static const Table kSqlUsers = {
        {"sqlite", &Parser::on_sql_sqlite},
        {"postgresql", &Parser::on_sql_postgresql},
        {"read_replica", &Parser::on_sql_read_replica},
        {"connections", &Parser::on_sql_connections},
        {"cache_ttl_s", &Parser::on_sql_cache_ttl_s},
        {"negative_ttl_s", &Parser::on_sql_negative_ttl_s},
        {"cache_entries_max", &Parser::on_sql_cache_entries_max},
        {"miss_wait_ms", &Parser::on_sql_miss_wait_ms},
    };
    if (!expect_map(value, where, "with 'sqlite' or 'postgresql'")) return;
    config_.sql_users.emplace();
    config_.sql_users->where = where;
    read_section(value, "sql_users.", kSqlUsers);
    const SqlUsersConfig& sql = *config_.sql_users;
    if (sql.sqlite.has_value() == sql.postgresql.has_value()) {
      errors_.push_back(at(value).error("sql_users needs exactly one of 'sqlite' and 'postgresql'"));
    }
    if (sql.read_replica && !sql.postgresql) {
      errors_.push_back(at(value).error("sql_users.read_replica needs 'postgresql'"));
    }
  }

  void on_sql_sqlite(const YAML::Node& value, const SourceLocation& where) {
    if (auto file = path(value, where)) config_.sql_users->sqlite = std::move(*file);
  }
  void on_sql_connection_string(const YAML::Node& value, const SourceLocation& where,
                                std::optional<std::string>& out) {
    if (auto conninfo = non_empty(value, where, "a libpq connection string")) out = std::move(*conninfo);
  }
  void on_sql_postgresql(const YAML::Node& value, const SourceLocation& where) {
    on_sql_connection_string(value, where, config_.sql_users->postgresql);
  }
  void on_sql_read_replica(const YAML::Node& value, const SourceLocation& where) {
    on_sql_connection_string(value, where, config_.sql_users->read_replica);
  }
  void on_sql_connections(const YAML::Node& value, const SourceLocation& where) {
    set_integer(config_.sql_users->connections, value, where, 1, kSqlConnectionsMax);
  }
  void on_sql_cache_ttl_s(const YAML::Node& value, const SourceLocation& where) {
    if (auto ttl = duration(value, where, DurationUnit::kSeconds, 0, kSqlTtlSecondsMax)) {
      config_.sql_users->cache_ttl = *ttl;
    }
  }
  void on_sql_negative_ttl_s(const YAML::Node& value, const SourceLocation& where) {
    if (auto ttl = duration(value, where, DurationUnit::kSeconds, 0, kSqlTtlSecondsMax)) {
      config_.sql_users->negative_ttl = *ttl;
    }
  }
  void on_sql_cache_entries_max(const YAML::Node& value, const SourceLocation& where) {
    set_integer(config_.sql_users->cache_entries_max, value, where, 1, kSqlCacheEntriesMax);
  }
  void on_sql_miss_wait_ms(const YAML::Node& value, const SourceLocation& where) {
    if (auto wait = duration(value, where, DurationUnit::kMilliseconds, 0, kSqlMissWaitMsMax)) {
      config_.sql_users->miss_wait = *wait;
    }
  }

  void on_eap(const YAML::Node& value, const SourceLocation& where) {
    static const Table kEap = {
        {"methods", &Parser::on_eap_methods},
        {"md5", &Parser::on_eap_md5},
        {"conversations_max", &Parser::on_eap_conversations_max},
        {"idle_timeout_s", &Parser::on_eap_idle_timeout_s},
        {"rounds_max", &Parser::on_eap_rounds_max},
        {"gateway_id", &Parser::on_eap_gateway_id},
        {"forward", &Parser::on_eap_forward},
        {"tls_fragment_octets", &Parser::on_eap_tls_fragment_octets},
        {"tls_min_version", &Parser::on_eap_tls_min_version},
        {"tls_max_version", &Parser::on_eap_tls_max_version},
        {"peap_crypto_binding", &Parser::on_eap_peap_crypto_binding},
        {"ttls_inner_methods", &Parser::on_eap_ttls_inner_methods},
        {"pool_threads", &Parser::on_eap_pool_threads},
        {"pool_queue_max", &Parser::on_eap_pool_queue_max},
        {"tls_resumption_sessions", &Parser::on_eap_tls_resumption_sessions},
        {"tls_resumption_lifetime_s", &Parser::on_eap_tls_resumption_lifetime_s},
        {"ocsp", &Parser::on_eap_ocsp},
    };
    eap_section(value, where, "eap.", kEap);
  }
  // A tenant's eap section: its methods and rounds; the conversation
  // table (its size, idle timeout and State key) is the gateway's.
  void on_tenant_eap(const YAML::Node& value, const SourceLocation& where) {
    static const Table kTenantEap = {
        {"methods", &Parser::on_eap_methods},
        {"md5", &Parser::on_eap_md5},
        {"rounds_max", &Parser::on_eap_rounds_max},
    };
    eap_section(value, where, "tenants.eap.", kTenantEap);
  }
  void eap_section(const YAML::Node& value, const SourceLocation& where, std::string_view prefix,
                   const Table& table) {
    if (!expect_map(value, where, "with 'md5', 'methods' and bounds")) return;
    config_.eap.where = where;
    read_section(value, prefix, table);
    const EapConfig& eap = config_.eap;
    if (eap.md5 && std::find(eap.methods.begin(), eap.methods.end(), "md5") == eap.methods.end()) {
      errors_.push_back(
          eap_methods_where_.value_or(where).error("eap.md5 is true but eap.methods does not list md5"));
    }
    if (eap.tls_min_version > eap.tls_max_version) {
      errors_.push_back(
          tls_version_where_.value_or(where).error("eap.tls_min_version is above eap.tls_max_version"));
    }
    if (eap.forward) check_eap_forward(*eap.forward, eap.gateway_id);
  }
  void on_eap_tls_fragment_octets(const YAML::Node& value, const SourceLocation& where) {
    set_integer(config_.eap.tls_fragment_octets, value, where, kEapTlsFragmentOctetsMin,
                kEapTlsFragmentOctetsMax);
  }
  static std::optional<EapTlsVersion> tls_version(const std::string& word) {
    if (word == "1.2") return EapTlsVersion::k1_2;
    if (word == "1.3") return EapTlsVersion::k1_3;
    return std::nullopt;
  }
  void on_eap_tls_min_version(const YAML::Node& value, const SourceLocation& where) {
    tls_version_where_ = where;
    if (auto version = choice<EapTlsVersion>(value, where, "a TLS version: 1.2 or 1.3", tls_version))
      config_.eap.tls_min_version = *version;
  }
  void on_eap_tls_max_version(const YAML::Node& value, const SourceLocation& where) {
    tls_version_where_ = where;
    if (auto version = choice<EapTlsVersion>(value, where, "a TLS version: 1.2 or 1.3", tls_version))
      config_.eap.tls_max_version = *version;
  }
  void on_eap_peap_crypto_binding(const YAML::Node& value, const SourceLocation& where) {
    auto binding =
        choice<EapPeapCryptoBinding>(value, where, "off, optional or required",
                                     [](const std::string& word) -> std::optional<EapPeapCryptoBinding> {
                                       if (word == "off") return EapPeapCryptoBinding::kOff;
                                       if (word == "optional") return EapPeapCryptoBinding::kOptional;
                                       if (word == "required") return EapPeapCryptoBinding::kRequired;
                                       return std::nullopt;
                                     });
    if (binding) config_.eap.peap_crypto_binding = *binding;
  }
  void on_eap_ttls_inner_methods(const YAML::Node& value, const SourceLocation& where) {
    bool pap = false;
    bool mschapv2 = false;
    sequence(value, where, "EAP-TTLS inner methods", [&](const YAML::Node& element) {
      std::optional<std::string> text = scalar(element, at(element), "an inner method: pap or mschapv2");
      if (!text) return;
      bool& flag = *text == "pap" ? pap : mschapv2;
      if (*text != "pap" && *text != "mschapv2") {
        invalid(element, "an inner method: pap or mschapv2", *text);
      } else if (flag) {
        errors_.push_back(at(element).error(fmt::format("inner method '{}' is listed twice", *text)));
      } else {
        flag = true;
      }
    });
    if (value.IsSequence() && value.size() == 0) {
      errors_.push_back(at(value).error("eap.ttls_inner_methods needs at least one method"));
    }
    config_.eap.ttls_pap = pap;
    config_.eap.ttls_mschapv2 = mschapv2;
  }
  void on_eap_pool_threads(const YAML::Node& value, const SourceLocation& where) {
    set_integer(config_.eap.pool_threads, value, where, 1, kEapPoolThreadsMax);
  }
  void on_eap_pool_queue_max(const YAML::Node& value, const SourceLocation& where) {
    set_integer(config_.eap.pool_queue_max, value, where, 1, kEapPoolQueueMax);
  }
  void on_eap_tls_resumption_sessions(const YAML::Node& value, const SourceLocation& where) {
    set_integer(config_.eap.tls_resumption_sessions, value, where, 0, kEapTlsResumptionSessionsMax);
  }
  void on_eap_tls_resumption_lifetime_s(const YAML::Node& value, const SourceLocation& where) {
    if (auto lifetime = duration(value, where, DurationUnit::kSeconds, 1, kEapTlsResumptionLifetimeSMax)) {
      config_.eap.tls_resumption_lifetime = *lifetime;
    }
  }
  void on_eap_ocsp(const YAML::Node& value, const SourceLocation& where) {
    static const Table kOcsp = {
        {"responder", &Parser::on_eap_ocsp_responder},
        {"required", &Parser::on_eap_ocsp_required},
        {"timeout_ms", &Parser::on_eap_ocsp_timeout_ms},
    };
    if (!expect_map(value, where, "with 'responder', 'required' and 'timeout_ms'")) return;
    config_.eap.ocsp.emplace();
    config_.eap.ocsp->where = where;
    read_section(value, "eap.ocsp.", kOcsp);
  }
  void on_eap_ocsp_responder(const YAML::Node& value, const SourceLocation& where) {
    std::optional<std::string> text = scalar(value, where, "an http:// URL");
    if (!text) return;
    // The URL's parts are checked where the checker is made (app::eap_method_set).
    if (!text->starts_with("http://")) {
      errors_.push_back(at(value).error(fmt::format(
          "eap.ocsp.responder '{}' is not an http:// URL (OCSP answers are signed; https is not used)",
          *text)));
      return;
    }
    config_.eap.ocsp->responder = std::move(*text);
    config_.eap.ocsp->responder_where = at(value);
  }
  void on_eap_ocsp_required(const YAML::Node& value, const SourceLocation& where) {
    if (auto flag = boolean(value, where)) config_.eap.ocsp->required = *flag;
  }
  void on_eap_ocsp_timeout_ms(const YAML::Node& value, const SourceLocation& where) {
    if (auto timeout =
            duration(value, where, DurationUnit::kMilliseconds, kEapOcspTimeoutMsMin, kEapOcspTimeoutMsMax)) {
      config_.eap.ocsp->timeout = *timeout;
    }
  }
  // Peers name each other by gateway id: a random one would be unknown to them.
  void check_eap_forward(const EapForwardConfig& forward, std::optional<std::uint32_t> self) {
    // Forwards leave from the listener, and peers check where they come from.
    const std::array<std::uint8_t, 16> any{};
    if (!forward.listen.text.empty() && forward.listen.bytes == any) {
      errors_.push_back(forward.listen.where.error(
          fmt::format("eap.forward.listen '{}' must be this gateway's own address, which its peers expect "
                      "forwards from, not a wildcard",
                      forward.listen.text)));
    }
    if (!self) {
      errors_.push_back(forward.where.error("eap.forward needs eap.gateway_id, which its peers name it by"));
      return;
    }
    for (const EapForwardPeer& peer : forward.peers) {
      if (peer.gateway_id == *self) {
        errors_.push_back(peer.where.error(
            fmt::format("peer id {} is this gateway's own eap.gateway_id", peer.gateway_id)));
      }
      if (peer.address.same_endpoint(forward.listen)) {
        errors_.push_back(peer.address.where.error(
            fmt::format("peer address '{}' is this gateway's own eap.forward.listen", peer.address.text)));
      }
    }
  }
  void on_eap_forward(const YAML::Node& value, const SourceLocation& where) {
    static const Table kForward = {
        {"listen", &Parser::on_eap_forward_listen},
        {"key_file", &Parser::on_eap_forward_key_file},
        {"peers", &Parser::on_eap_forward_peers},
        {"timeout_ms", &Parser::on_eap_forward_timeout_ms},
        {"in_flight_max", &Parser::on_eap_forward_in_flight_max},
    };
    if (!expect_map(value, where, "with 'listen', 'key_file' and 'peers'")) return;
    config_.eap.forward.emplace();
    config_.eap.forward->where = where;
    const std::set<std::string> seen = read_section(value, "eap.forward.", kForward);
    for (const char* key : {"listen", "key_file", "peers"}) require(seen, "eap.forward.", key, at(value));
  }
  void on_eap_forward_listen(const YAML::Node& value, const SourceLocation& where) {
    if (auto listen = address(value, where)) config_.eap.forward->listen = std::move(*listen);
  }
  void on_eap_forward_key_file(const YAML::Node& value, const SourceLocation& where) {
    if (auto file = path(value, where)) config_.eap.forward->key_file = std::move(*file);
  }
  void on_eap_forward_timeout_ms(const YAML::Node& value, const SourceLocation& where) {
    if (auto timeout = duration(value, where, DurationUnit::kMilliseconds, kEapForwardTimeoutMsMin,
                                kEapForwardTimeoutMsMax)) {
      config_.eap.forward->timeout = *timeout;
    }
  }
  void on_eap_forward_in_flight_max(const YAML::Node& value, const SourceLocation& where) {
    set_integer(config_.eap.forward->in_flight_max, value, where, 1, kEapForwardInFlightMax);
  }
  void on_eap_forward_peers(const YAML::Node& value, const SourceLocation& where) {
    std::vector<EapForwardPeer>& peers = config_.eap.forward->peers;
    sequence(value, where, "peer gateways ({id, address})", [&](const YAML::Node& element) {
      std::optional<EapForwardPeer> peer = eap_forward_peer(element);
      if (!peer) return;
      for (const EapForwardPeer& other : peers) {
        if (other.gateway_id == peer->gateway_id) {
          errors_.push_back(peer->where.error(fmt::format("peer id {} is listed twice", peer->gateway_id)));
          return;
        }
        if (other.address.same_endpoint(peer->address)) {
          errors_.push_back(peer->address.where.error(
              fmt::format("peer address '{}' is listed twice", peer->address.text)));
          return;
        }
      }
      peers.push_back(std::move(*peer));
    });
    if (value.IsSequence() && (value.size() == 0 || value.size() > kEapForwardPeersMax)) {
      errors_.push_back(
          at(value).error(fmt::format("eap.forward.peers needs 1 to {} peers", kEapForwardPeersMax)));
    }
  }
  std::optional<EapForwardPeer> eap_forward_peer(const YAML::Node& element) {
    const SourceLocation where = at(element);
    if (!element.IsMap()) {
      errors_.push_back(where.error("expected a peer gateway {id, address}"));
      return std::nullopt;
    }
    std::optional<IdAndAddress> entry =
        id_and_address(element, "eap.forward.peers.", "a peer", 4'294'967'295);
    if (!entry) return std::nullopt;
    return EapForwardPeer{.gateway_id = static_cast<std::uint32_t>(entry->id),
                          .address = std::move(entry->address),
                          .where = where};
  }
  void on_eap_methods(const YAML::Node& value, const SourceLocation& where) {
    eap_methods_where_ = where;
    std::vector<std::string> methods;
    sequence(value, where, "EAP method names", [&](const YAML::Node& element) {
      std::optional<std::string> text = scalar(element, at(element), "an EAP method name");
      if (!text) return;
      if (std::find(kEapMethodNames.begin(), kEapMethodNames.end(), *text) == kEapMethodNames.end()) {
        std::string known;
        for (const std::string_view name : kEapMethodNames)
          known += (known.empty() ? "" : ", ") + std::string(name);
        errors_.push_back(
            at(element).error(fmt::format("unknown EAP method '{}' (known: {})", *text, known)));
      } else if (std::find(methods.begin(), methods.end(), *text) != methods.end()) {
        errors_.push_back(at(element).error(fmt::format("EAP method '{}' is listed twice", *text)));
      } else {
        methods.push_back(*text);
      }
    });
    if (value.IsSequence() && value.size() == 0) {
      errors_.push_back(at(value).error("eap.methods needs at least one method"));
    }
    config_.eap.methods = std::move(methods);
  }
  void on_eap_md5(const YAML::Node& value, const SourceLocation& where) {
    if (auto flag = boolean(value, where)) config_.eap.md5 = *flag;
  }
  void on_eap_conversations_max(const YAML::Node& value, const SourceLocation& where) {
    set_integer(config_.eap.conversations_max, value, where, 1, kEapConversationsMax);
  }
  void on_eap_idle_timeout_s(const YAML::Node& value, const SourceLocation& where) {
    if (auto timeout = duration(value, where, DurationUnit::kSeconds, 1, kEapIdleTimeoutSMax)) {
      config_.eap.idle_timeout = *timeout;
    }
  }
  void on_eap_rounds_max(const YAML::Node& value, const SourceLocation& where) {
    set_integer(config_.eap.rounds_max, value, where, kEapRoundsMin, kEapRoundsMax);
  }
  void on_eap_gateway_id(const YAML::Node& value, const SourceLocation& where) {
    if (auto id = integer(value, where, 1, 4'294'967'295))
      config_.eap.gateway_id = static_cast<std::uint32_t>(*id);
  }

  void on_tls(const YAML::Node& value, const SourceLocation& where) {
    config_.tls = tls_section(value, where, "tls.", /*ca_path_allowed=*/true);
  }

  void on_radsec(const YAML::Node& value, const SourceLocation& where) {
    static const Table kRadSec = {
        {"listen", &Parser::on_radsec_listen},
        {"port", &Parser::on_radsec_port},
        {"clients_file", &Parser::on_radsec_clients_file},
        {"handshake_timeout_ms", &Parser::on_radsec_handshake_timeout_ms},
        {"idle_timeout_s", &Parser::on_radsec_idle_timeout_s},
        {"connections_max", &Parser::on_radsec_connections_max},
        {"client_connections_max", &Parser::on_radsec_client_connections_max},
        {"buffered_bytes_max", &Parser::on_radsec_buffered_bytes_max},
        {"require_certificate_name", &Parser::on_radsec_require_certificate_name},
    };
    if (!expect_map(value, where, "with 'clients_file' and bounds")) return;
    config_.radsec.emplace();
    config_.radsec->where = where;
    const std::set<std::string> seen = read_section(value, "radsec.", kRadSec);
    require(seen, "radsec.", "clients_file", at(value));
  }
  void on_radsec_listen(const YAML::Node& value, const SourceLocation& where) {
    std::set<std::string> seen;
    sequence(value, where, "IP addresses", [&](const YAML::Node& element) {
      std::optional<std::string> text = scalar(element, at(element), "an IP address");
      if (!text) return;
      std::optional<ListenAddress> address = parse_address(*text, at(element));
      if (!address) {
        errors_.push_back(at(element).error(fmt::format("'{}' is not an IPv4 or IPv6 address", *text)));
      } else if (!seen.insert(*text).second) {
        errors_.push_back(at(element).error(fmt::format("address '{}' is listed twice", *text)));
      } else {
        config_.radsec->listen.push_back(std::move(*address));
      }
    });
  }
  void on_radsec_port(const YAML::Node& value, const SourceLocation& where) {
    set_integer(config_.radsec->port, value, where, 0, 65535);
  }
  void on_radsec_require_certificate_name(const YAML::Node& value, const SourceLocation& where) {
    if (auto flag = boolean(value, where)) config_.radsec->require_certificate_name = *flag;
  }
  void on_radsec_clients_file(const YAML::Node& value, const SourceLocation& where) {
    if (auto file = path(value, where)) config_.radsec->clients_file = std::move(*file);
  }
  void on_radsec_handshake_timeout_ms(const YAML::Node& value, const SourceLocation& where) {
    if (auto timeout = duration(value, where, DurationUnit::kMilliseconds, kRadSecHandshakeTimeoutMsMin,
                                kRadSecHandshakeTimeoutMsMax)) {
      config_.radsec->handshake_timeout = *timeout;
    }
  }
  void on_radsec_idle_timeout_s(const YAML::Node& value, const SourceLocation& where) {
    if (auto timeout = duration(value, where, DurationUnit::kSeconds, 1, kRadSecIdleTimeoutSMax)) {
      config_.radsec->idle_timeout = *timeout;
    }
  }
  void on_radsec_connections_max(const YAML::Node& value, const SourceLocation& where) {
    set_integer(config_.radsec->connections_max, value, where, 1, kRadSecConnectionsMax);
  }
  void on_radsec_client_connections_max(const YAML::Node& value, const SourceLocation& where) {
    set_integer(config_.radsec->client_connections_max, value, where, 1, kRadSecConnectionsMax);
  }
  void on_radsec_buffered_bytes_max(const YAML::Node& value, const SourceLocation& where) {
    set_integer(config_.radsec->buffered_bytes_max, value, where, kRadSecBufferedBytesMin,
                kRadSecBufferedBytesMax);
  }

  void on_audit(const YAML::Node& value, const SourceLocation& where) {
    config_.audit = audit_section(value, where, "audit.");
  }

  // `tenants:`: a list of maps, each read with the handlers of the
  // top-level keys it repeats. Those handlers write into config_, so the
  // default tenant's values are set aside while a tenant is read and put
  // back after.
  void on_tenants(const YAML::Node& value, const SourceLocation& where) {
    sequence(value, where, "tenants", [&](const YAML::Node& element) {
      if (config_.tenants.size() == kTenantsMax) {
        if (!tenants_overflow_)
          errors_.push_back(at(element).error(
              fmt::format("at most {} tenants besides '{}'", kTenantsMax, kDefaultTenantName)));
        tenants_overflow_ = true;
        return;
      }
      if (!expect_map(element, at(element), "with 'name', 'users_file' and 'clients_file'")) return;
      config_.tenants.push_back(tenant(element));
    });
  }

  TenantConfig tenant(const YAML::Node& element) {
    static const Table kTenant = {
        {"name", &Parser::on_tenant_name},
        {"users_file", &Parser::on_users_file},
        {"clients_file", &Parser::on_clients_file},
        {"users_stores", &Parser::on_users_stores},
        {"sql_users", &Parser::on_sql_users},
        {"eap", &Parser::on_tenant_eap},
        {"policy", &Parser::on_policy},
        {"tls", &Parser::on_tls},
        {"radsec", &Parser::on_tenant_radsec},
        {"audit", &Parser::on_audit},
    };
    const SourceLocation where = at(element);
    GatewayConfig saved = default_gateway_config();
    swap_tenant_keys(saved, config_);
    const std::optional<SourceLocation> saved_methods_where = std::exchange(eap_methods_where_, std::nullopt);
    tenant_name_.clear();
    tenant_radsec_clients_.reset();
    const std::set<std::string> seen = read_section(element, "tenants.", kTenant);
    require(seen, "tenants.", "name", where);
    require(seen, "tenants.", "users_file", where);
    require(seen, "tenants.", "clients_file", where);
    check_sql_stores(where);
    TenantConfig tenant{.name = tenant_name_,
                        .users_file = std::move(config_.users_file),
                        .clients_file = std::move(config_.clients_file),
                        .radsec_clients_file = std::move(tenant_radsec_clients_),
                        .users_stores = std::move(config_.users_stores),
                        .sql_users = std::move(config_.sql_users),
                        .policy_file = std::move(config_.policy_file),
                        .eap = std::move(config_.eap),
                        .tls = std::move(config_.tls),
                        .audit = std::move(config_.audit),
                        .where = where};
    swap_tenant_keys(saved, config_);
    eap_methods_where_ = saved_methods_where;
    return tenant;
  }

  // The top-level keys a tenant repeats.
  static void swap_tenant_keys(GatewayConfig& a, GatewayConfig& b) {
    std::swap(a.users_file, b.users_file);
    std::swap(a.clients_file, b.clients_file);
    std::swap(a.users_stores, b.users_stores);
    std::swap(a.sql_users, b.sql_users);
    std::swap(a.policy_file, b.policy_file);
    std::swap(a.eap, b.eap);
    std::swap(a.tls, b.tls);
    std::swap(a.audit, b.audit);
  }

  void on_tenant_name(const YAML::Node& value, const SourceLocation& where) {
    std::optional<std::string> name = scalar(value, where, "a tenant name");
    if (!name) return;
    const bool well_formed = !name->empty() && name->size() <= kTenantNameBytesMax &&
                             std::all_of(name->begin(), name->end(), [](char c) {
                               return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
                             });
    if (!well_formed) {
      errors_.push_back(
          at(value).error(fmt::format("a tenant name is 1 to {} of a-z, 0-9 and '-'", kTenantNameBytesMax)));
      return;
    }
    tenant_name_ = std::move(*name);
    tenant_name_where_[tenant_name_].push_back(at(value));
  }

  // A tenant's radsec section names only its clients file: the listener is the gateway's.
  void on_tenant_radsec(const YAML::Node& value, const SourceLocation& where) {
    if (!expect_map(value, where, "with 'clients_file'")) return;
    const std::set<std::string> seen =
        each_key(value, "tenants.radsec.",
                 [&](const std::string& key, const YAML::Node& item, const SourceLocation& at_key) {
                   if (key != "clients_file") return false;
                   tenant_radsec_clients_ = path(item, at_key);
                   return true;
                 });
    require(seen, "tenants.radsec.", "clients_file", at(value));
  }

  // What only the whole list can say: names unique and not `default`, one
  // writer per audit file, RadSec clients with a listener and a CA.
  void validate_tenants(const GatewayConfig& config, ConfigErrors& errors) {
    for (const auto& [name, places] : tenant_name_where_) {
      if (name == kDefaultTenantName) {
        for (const SourceLocation& place : places)
          errors.push_back(place.error(fmt::format(
              "tenant name '{}' is the top-level keys' tenant; choose another name", kDefaultTenantName)));
        continue;
      }
      for (std::size_t i = 1; i < places.size(); ++i) {
        errors.push_back(places[i].error(
            fmt::format("tenant '{}' is already named at line {}", name, places.front().line)));
      }
    }
    std::map<std::string, const AuditConfig*> audit_files;
    const auto claim = [&](const std::optional<AuditConfig>& audit, std::string_view tenant) {
      if (!audit) return;
      const std::string canonical = std::filesystem::path(audit->path.path).lexically_normal().string();
      auto [found, inserted] = audit_files.emplace(canonical, &*audit);
      if (!inserted) {
        errors.push_back(audit->path.where.error(fmt::format(
            "tenant '{}': audit file '{}' is already the audit file at line {} (one writer per file)", tenant,
            audit->path.path, found->second->path.where.line)));
      }
    };
    claim(config.audit, kDefaultTenantName);
    for (const TenantConfig& tenant : config.tenants) {
      claim(tenant.audit, tenant.name);
      if (!tenant.radsec_clients_file) continue;
      if (!config.radsec) {
        errors.push_back(tenant.radsec_clients_file->where.error(
            "a tenant's RadSec clients need the gateway's 'radsec' section (the listener)"));
      }
      if (!tenant.tls) {
        errors.push_back(
            tenant.radsec_clients_file->where.error("a tenant's RadSec clients need the tenant's 'tls' "
                                                    "section (the CA their certificates chain to)"));
      }
    }
  }

  // The keys of an audit section, wherever it sits (`prefix` names it in
  // errors): the gateway's today, a tenant's later.
  std::optional<AuditConfig> audit_section(const YAML::Node& value, const SourceLocation& where,
                                           std::string_view prefix) {
    if (!expect_map(value, where, "with 'path'")) return std::nullopt;
    AuditConfig audit{.where = where};
    const std::set<std::string> seen = each_key(
        value, prefix, [&](const std::string& key, const YAML::Node& item, const SourceLocation& at_key) {
          if (key == "path") {
            if (auto file = path(item, at_key)) audit.path = std::move(*file);
          } else if (key == "rotate_bytes") {
            set_integer(audit.rotate_bytes, item, at_key, kAuditRotateBytesMin, kAuditRotateBytesMax);
          } else if (key == "keep") {
            set_integer(audit.keep, item, at_key, 0, kAuditKeepMax);
          } else if (key == "fsync_interval_ms") {
            if (auto interval =
                    duration(item, at_key, DurationUnit::kMilliseconds, 0, kAuditFsyncIntervalMsMax))
              audit.fsync_interval = *interval;
          } else if (key == "key_file") {
            audit.key_file = path(item, at_key);
          } else if (key == "queue_lines_max") {
            set_integer(audit.queue_lines_max, item, at_key, kAuditQueueLinesMin, kAuditQueueLinesMax);
          } else {
            return false;
          }
          return true;
        });
    require(seen, prefix, "path", at(value));
    return audit;
  }

  // Each element: "HOST:PORT", or {id: N, address: "HOST:PORT"} (the id
  // its certificate must name; required with accounting.tls).
  void on_members(const YAML::Node& value, const SourceLocation& where) {
    std::vector<SubmissionAddress>& members = config_.accounting->members;
    sequence(value, where, "member addresses", [&](const YAML::Node& element) {
      std::optional<SubmissionAddress> member = member_entry(element);
      if (!member) return;
      if (listed(members, member->address)) {
        errors_.push_back(
            member->address.where.error(fmt::format("member '{}' is listed twice", member->address.text)));
      } else {
        members.push_back(std::move(*member));
      }
    });
    if (value.IsSequence() && (value.size() == 0 || value.size() > kAccountingMembersMax)) {
      errors_.push_back(
          at(value).error(fmt::format("accounting.members needs 1 to {} addresses", kAccountingMembersMax)));
    }
  }

  std::optional<SubmissionAddress> member_entry(const YAML::Node& element) {
    const SourceLocation where = at(element);
    if (!element.IsMap()) {
      std::optional<HostPort> bare = address(element, where);
      if (!bare) return std::nullopt;
      return SubmissionAddress{.address = std::move(*bare), .where = where};
    }
    std::optional<IdAndAddress> entry =
        id_and_address(element, "accounting.members.", "a member", kMemberIdMax);
    if (!entry) return std::nullopt;
    return SubmissionAddress{.address = std::move(entry->address), .member_id = entry->id, .where = where};
  }

  // An {id, address} mapping (a member, a peer gateway): both keys required,
  // the id in 1..id_max. Nothing when either is missing or wrong (said).
  struct IdAndAddress {
    std::uint64_t id = 0;
    HostPort address{};
  };
  std::optional<IdAndAddress> id_and_address(const YAML::Node& element, std::string_view section,
                                             std::string_view what, std::int64_t id_max) {
    IdAndAddress entry;
    bool valid = true;
    const std::set<std::string> seen = each_key(
        element, section, [&](const std::string& key, const YAML::Node& item, const SourceLocation& at_key) {
          if (key == "id") {
            std::optional<std::int64_t> id = integer(item, at_key, 1, id_max);
            if (id) entry.id = static_cast<std::uint64_t>(*id);
            valid = valid && id.has_value();
          } else if (key == "address") {
            std::optional<HostPort> written = address(item, at_key);
            if (written) entry.address = std::move(*written);
            valid = valid && written.has_value();
          } else {
            return false;
          }
          return true;
        });
    if (!seen.contains("id") || !seen.contains("address")) {
      errors_.push_back(at(element).error(fmt::format("{} entry needs 'id' and 'address'", what)));
      return std::nullopt;
    }
    if (!valid) return std::nullopt;
    return entry;
  }

  void on_pending_records_max(const YAML::Node& value, const SourceLocation& where) {
    set_integer(config_.accounting->pending_records_max, value, where, 1, kPendingRecordsMax);
  }

  void on_batch_records_max(const YAML::Node& value, const SourceLocation& where) {
    set_integer(config_.accounting->batch_records_max, value, where, 1, kBatchRecordsMax);
  }

  void on_batch_delay_us(const YAML::Node& value, const SourceLocation& where) {
    if (auto delay = duration(value, where, DurationUnit::kMicroseconds, 0, kBatchDelayUsMax)) {
      config_.accounting->batch_delay = *delay;
    }
  }

  void on_session_query_timeout_ms(const YAML::Node& value, const SourceLocation& where) {
    if (auto timeout = duration(value, where, DurationUnit::kMilliseconds, kSessionQueryTimeoutMsMin,
                                kSessionQueryTimeoutMsMax)) {
      config_.accounting->session_query_timeout = *timeout;
    }
  }

  void on_key(const YAML::Node& value, const SourceLocation& where) {
    std::optional<std::string> recipe = non_empty(value, where, "a session-key recipe");
    if (!recipe) return;
    config_.accounting->key = std::move(*recipe);
    config_.accounting->key_where = at(value);
  }

  GatewayConfig config_;
  // Where auth_port was written: the key that a port clash points at.
  std::optional<SourceLocation> auth_port_where_{};
  // Where eap.methods was written.
  std::optional<SourceLocation> eap_methods_where_{};
  // The tenant being read: its name and RadSec clients file.
  std::string tenant_name_{};
  std::optional<ConfiguredPath> tenant_radsec_clients_{};
  // Where each tenant name was written, for duplicates.
  std::map<std::string, std::vector<SourceLocation>> tenant_name_where_{};
  bool tenants_overflow_ = false;
  // Where eap.tls_min_version or tls_max_version was written last.
  std::optional<SourceLocation> tls_version_where_{};
};

ConfigError flag_error(std::string_view flag, std::string message) {
  return ConfigError{.file = std::string(flag), .message = std::move(message)};
}

void apply_members(const std::vector<std::string>& members, GatewayConfig& config, ConfigErrors& errors) {
  if (members.empty()) return;
  if (!config.accounting) config.accounting.emplace();
  config.accounting->members.clear();
  for (const std::string& text : members) {
    std::optional<HostPort> member = parse_host_port(text);
    if (!member) {
      errors.push_back(flag_error("--member", fmt::format("expected {}, got '{}'", kHostPortWhat, text)));
    } else if (listed(config.accounting->members, *member)) {
      errors.push_back(flag_error("--member", fmt::format("member '{}' is given twice", text)));
    } else {
      const SourceLocation flag{.file = "--member"};
      member->where = flag;
      config.accounting->members.push_back(SubmissionAddress{.address = std::move(*member), .where = flag});
    }
  }
  if (members.size() > kAccountingMembersMax) {
    errors.push_back(flag_error("--member", fmt::format("at most {} members", kAccountingMembersMax)));
  }
}

// --member gives addresses without ids, so it needs the explicit plaintext
// opt-in (or a config file whose accounting.tls it then fails on).
void apply_accounting_security(const GatewayOverrides& overrides, GatewayConfig& config,
                               ConfigErrors& errors) {
  if (overrides.insecure_plaintext_cluster) {
    if (!config.accounting) {
      errors.push_back(flag_error("--insecure-plaintext-cluster", "needs --member or an accounting section"));
      return;
    }
    config.accounting->insecure_plaintext_cluster = true;
    config.accounting->tls.reset();
  }
  if (!overrides.members.empty() || overrides.insecure_plaintext_cluster) {
    validate_accounting_security(*config.accounting, SourceLocation{.file = "--member"}, errors);
  }
}

void apply_port(const std::optional<int>& value, std::string_view flag, std::uint16_t& port,
                ConfigErrors& errors) {
  if (!value) return;
  if (*value < 0 || *value > 65535) {
    errors.push_back(flag_error(flag, fmt::format("expected a port between 0 and 65535, got {}", *value)));
    return;
  }
  port = static_cast<std::uint16_t>(*value);
}

void apply_path(const std::optional<std::string>& value, std::string_view flag, ConfiguredPath& path,
                ConfigErrors& errors) {
  if (!value) return;
  if (value->empty()) {
    errors.push_back(flag_error(flag, "expected a path, got an empty string"));
    return;
  }
  path = ConfiguredPath{.path = *value, .where = SourceLocation{.file = std::string(flag)}};
}

// --tls-cert, --tls-key, --tls-ca and --tls-crl replace the files of the
// `tls` section; without one in the file the first three go together.
void apply_tls(const GatewayOverrides& overrides, GatewayConfig& config, ConfigErrors& errors) {
  const bool any = overrides.tls_cert || overrides.tls_key || overrides.tls_ca || overrides.tls_crl;
  if (!any) return;
  if (!config.tls) {
    if (!overrides.tls_cert || !overrides.tls_key || !overrides.tls_ca) {
      errors.push_back(flag_error("--tls-cert", "--tls-cert, --tls-key and --tls-ca go together"));
      return;
    }
    config.tls.emplace();
    config.tls->where = SourceLocation{.file = "--tls-cert"};
  }
  apply_path(overrides.tls_cert, "--tls-cert", config.tls->cert, errors);
  apply_path(overrides.tls_key, "--tls-key", config.tls->key, errors);
  apply_path(overrides.tls_ca, "--tls-ca", config.tls->ca, errors);
  if (overrides.tls_crl) {
    ConfiguredPath crl;
    apply_path(overrides.tls_crl, "--tls-crl", crl, errors);
    config.tls->crl = std::move(crl);
  }
}

// --radsec-clients turns RadSec on (a section with its defaults when the
// file has none); --radsec-port sets its port.
void apply_radsec(const GatewayOverrides& overrides, GatewayConfig& config, ConfigErrors& errors) {
  if (!overrides.radsec_clients && !overrides.radsec_port) return;
  if (!config.radsec) {
    if (!overrides.radsec_clients) {
      errors.push_back(flag_error("--radsec-port", "needs --radsec-clients or a radsec section"));
      return;
    }
    config.radsec.emplace();
    config.radsec->where = SourceLocation{.file = "--radsec-clients"};
  }
  apply_path(overrides.radsec_clients, "--radsec-clients", config.radsec->clients_file, errors);
  apply_port(overrides.radsec_port, "--radsec-port", config.radsec->port, errors);
  if (!config.tls) {
    errors.push_back(
        flag_error("--radsec-clients", "needs --tls-cert, --tls-key and --tls-ca (or a tls section)"));
  }
}

void apply_listen(const std::vector<std::string>& listen, GatewayConfig& config, ConfigErrors& errors) {
  if (listen.empty()) return;
  config.listen.clear();
  for (const std::string& text : listen) {
    std::optional<ListenAddress> address = parse_address(text, SourceLocation{.file = "--listen"});
    if (!address) {
      errors.push_back(flag_error("--listen", fmt::format("'{}' is not an IPv4 or IPv6 address", text)));
    } else {
      config.listen.push_back(std::move(*address));
    }
  }
}

// Checks that `path` names a readable regular file.
std::optional<std::string> unreadable_file_reason(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) return "is a folder, not a file";
  std::ifstream stream(path);
  if (!stream) return std::strerror(errno);
  return std::nullopt;
}

void check_file(const ConfiguredPath& file, std::string_view what, ConfigErrors& errors) {
  if (auto reason = unreadable_file_reason(file.path)) {
    errors.push_back(file.where.error(fmt::format("cannot read {} '{}': {}", what, file.path, *reason)));
  }
}

void check_tls_files(const ClusterTlsConfig& tls, ConfigErrors& errors) {
  check_file(tls.cert, "TLS certificate", errors);
  check_file(tls.key, "TLS private key", errors);
  check_file(tls.ca, "TLS CA certificate", errors);
  if (tls.crl) check_file(*tls.crl, "TLS CRL", errors);
  if (tls.ca_path) {
    std::error_code code;
    if (!std::filesystem::is_directory(tls.ca_path->path, code)) {
      errors.push_back(
          tls.ca_path->where.error(fmt::format("TLS CA folder '{}' is not a folder", tls.ca_path->path)));
    }
  }
}

}  // namespace

std::string ConfigError::to_string() const {
  if (line <= 0) return fmt::format("{}: {}", file, message);
  return fmt::format("{}:{}:{}: {}", file, line, column, message);
}

ConfigError SourceLocation::error(std::string message) const {
  return ConfigError{.file = file, .line = line, .column = column, .message = std::move(message)};
}

std::string_view to_string(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace:
      return "trace";
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
    case LogLevel::kOff:
      return "off";
  }
  return "unknown";
}

std::string_view to_string(LogFormat format) {
  switch (format) {
    case LogFormat::kText:
      return "text";
    case LogFormat::kJson:
      return "json";
  }
  return "unknown";
}

std::string_view to_string(MabDefault action) {
  switch (action) {
    case MabDefault::kReject:
      return "reject";
    case MabDefault::kAccept:
      return "accept";
  }
  return "unknown";
}

std::string_view to_string(SimultaneousUseUnavailable policy) {
  switch (policy) {
    case SimultaneousUseUnavailable::kReject:
      return "reject";
    case SimultaneousUseUnavailable::kAccept:
      return "accept";
    case SimultaneousUseUnavailable::kDrop:
      return "drop";
  }
  return "unknown";
}

std::string_view to_string(UsersStore store) {
  switch (store) {
    case UsersStore::kFiles:
      return "files";
    case UsersStore::kSql:
      return "sql";
  }
  return "unknown";
}

std::optional<HostPort> parse_host_port(std::string_view text) {
  HostPort parsed{.text = std::string(text)};
  std::string_view port_text;
  if (text.starts_with('[')) {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return std::nullopt;
    parsed.host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
    if (inet_pton(AF_INET6, parsed.host.c_str(), parsed.bytes.data()) != 1) return std::nullopt;
    parsed.is_v6 = true;
  } else {
    const std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return std::nullopt;
    parsed.host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
    if (inet_pton(AF_INET, parsed.host.c_str(), parsed.bytes.data()) != 1) return std::nullopt;
  }
  std::optional<std::int64_t> port = parse_integer(port_text);
  if (!port || *port < 1 || *port > 65535) return std::nullopt;
  parsed.port = static_cast<std::uint16_t>(*port);
  return parsed;
}

std::optional<LogLevel> parse_log_level(std::string_view text) {
  return parse_named(text, {LogLevel::kTrace, LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn,
                            LogLevel::kError, LogLevel::kOff});
}

Result<GatewayConfig, ConfigErrors> parse_gateway_config(std::string_view text, std::string_view file_name) {
  Parser parser(file_name);
  parser.parse(text);
  if (!parser.errors().empty()) return fail(std::move(parser.errors()));
  return std::move(parser.config());
}

Result<GatewayConfig, ConfigErrors> load_gateway_config(const std::string& path) {
  Result<std::string, ConfigErrors> text = read_config_file(path);
  if (!text) return fail(std::move(text.error()));
  return parse_gateway_config(*text, path);
}

GatewayConfig default_gateway_config() {
  GatewayConfig config;
  config.listen = default_listen();
  config.dictionary_dir = ConfiguredPath{.path = std::string(kDefaultDictionaryDir),
                                         .where = SourceLocation{.file = "default dictionary_dir"}};
  config.dictionary_dir_optional = true;
  return config;
}

bool is_tls_eap_method(std::string_view name) { return name == "tls" || name == "peap" || name == "ttls"; }

GatewayConfig quick_start_gateway_config() {
  GatewayConfig config = default_gateway_config();
  config.eap.md5 = true;
  return config;
}

Result<GatewayConfig, ConfigErrors> apply_overrides(GatewayConfig base, const GatewayOverrides& overrides) {
  ConfigErrors errors;
  apply_path(overrides.users_file, "--users", base.users_file, errors);
  apply_path(overrides.clients_file, "--clients", base.clients_file, errors);
  if (overrides.policy_file) {
    ConfiguredPath policy;
    apply_path(overrides.policy_file, "--policy", policy, errors);
    base.policy_file = std::move(policy);
  }
  if (overrides.dictionary_dir) {
    ConfiguredPath dir;
    apply_path(overrides.dictionary_dir, "--dictionary-dir", dir, errors);
    base.dictionary_dir = std::move(dir);
    base.dictionary_dir_optional = false;
  }
  apply_port(overrides.auth_port, "--auth-port", base.auth_port, errors);
  apply_port(overrides.acct_port, "--acct-port", base.acct_port, errors);
  if (overrides.workers) {
    if (*overrides.workers < 0 || *overrides.workers > kWorkersMax) {
      errors.push_back(flag_error(
          "--workers", fmt::format("expected between 0 and {}, got {}", kWorkersMax, *overrides.workers)));
    } else {
      base.workers = *overrides.workers;
    }
  }
  apply_listen(overrides.listen, base, errors);
  apply_members(overrides.members, base, errors);
  apply_accounting_security(overrides, base, errors);
  if (overrides.admin_socket) {
    ConfiguredPath socket;
    apply_path(overrides.admin_socket, "--admin-socket", socket, errors);
    base.admin_socket = std::move(socket);
  }
  if (overrides.audit_log) {
    if (!base.audit) base.audit.emplace();
    apply_path(overrides.audit_log, "--audit-log", base.audit->path, errors);
  }
  if (overrides.log_level) {
    if (auto level = parse_log_level(*overrides.log_level)) {
      base.logging.level = *level;
    } else {
      errors.push_back(flag_error("--log-level", fmt::format("expected one of trace, debug, info, warn, "
                                                             "error, off, got '{}'",
                                                             *overrides.log_level)));
    }
  }
  apply_tls(overrides, base, errors);
  apply_radsec(overrides, base, errors);
  // Without a config file, the --tls-* flags also serve EAP-TLS, PEAP and
  // EAP-TTLS with the same certificate (docs/operations.md "Trying it out").
  if (base.tls && base.eap.md5 && base.eap.methods == std::vector<std::string>{"md5"} &&
      !base.eap.where.line) {
    base.eap.methods = {"tls", "peap", "ttls", "md5"};
  }
  if (base.users_file.path.empty()) errors.push_back(flag_error("--users", "required without --config"));
  if (base.clients_file.path.empty()) errors.push_back(flag_error("--clients", "required without --config"));
  validate_ports(base, SourceLocation{.file = "--auth-port"}, errors);
  if (!errors.empty()) return fail(std::move(errors));
  return base;
}

void check_admin_tcp(bool has_socket, const std::optional<HostPort>& listen, bool has_token_file,
                     const SourceLocation& at, ConfigErrors& errors) {
  if (has_token_file && !listen) {
    errors.push_back(at.error("admin_token_file is set but admin_listen is not"));
  }
  if (!listen) return;
  if (!has_token_file) {
    errors.push_back(listen->where.error(
        "admin_listen needs admin_token_file: every request over TCP carries its bearer token"));
  }
  if (!has_socket) errors.push_back(listen->where.error("admin_listen needs admin_socket"));
}

ConfigErrors check_referenced_files(const GatewayConfig& config) {
  ConfigErrors errors;
  check_file(config.users_file, "users file", errors);
  check_file(config.clients_file, "clients file", errors);
  if (config.admin_token_file) check_file(*config.admin_token_file, "admin token file", errors);
  if (config.policy_file) check_file(*config.policy_file, "policy file", errors);
  if (config.tls) check_tls_files(*config.tls, errors);
  if (config.radsec) check_file(config.radsec->clients_file, "RadSec clients file", errors);
  if (config.audit && config.audit->key_file) check_file(*config.audit->key_file, "audit key file", errors);
  if (config.sql_users && config.sql_users->sqlite)
    check_file(*config.sql_users->sqlite, "SQLite users database", errors);
  if (config.dictionary_dir) {
    const ConfiguredPath& dir = *config.dictionary_dir;
    std::error_code error;
    const bool exists = std::filesystem::is_directory(dir.path, error);
    if (!exists && !config.dictionary_dir_optional) {
      errors.push_back(dir.where.error(fmt::format("dictionary folder '{}' does not exist", dir.path)));
    } else if (exists) {
      check_file(ConfiguredPath{.path = (std::filesystem::path(dir.path) / "dictionary").string(),
                                .where = dir.where},
                 "dictionary", errors);
    }
  }
  for (const ConfiguredPath& file : config.dictionary_files) check_file(file, "dictionary file", errors);
  for (const TenantConfig& tenant : config.tenants) {
    check_file(tenant.users_file, "users file", errors);
    check_file(tenant.clients_file, "clients file", errors);
    if (tenant.radsec_clients_file) check_file(*tenant.radsec_clients_file, "RadSec clients file", errors);
    if (tenant.policy_file) check_file(*tenant.policy_file, "policy file", errors);
    if (tenant.tls) check_tls_files(*tenant.tls, errors);
    if (tenant.audit && tenant.audit->key_file) check_file(*tenant.audit->key_file, "audit key file", errors);
    if (tenant.sql_users && tenant.sql_users->sqlite)
      check_file(*tenant.sql_users->sqlite, "SQLite users database", errors);
  }
  return errors;
}

}  // namespace rw::config
