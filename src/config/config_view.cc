// The /config view of a configuration (config_view.h). Secrets are redacted
// here, once, for both processes: a key added to a config struct is shown
// only once it is written below, so nothing new leaks by default.
#include "config/config_view.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <cctype>
#include <ctime>

#include <fmt/format.h>

namespace rw::config {
namespace {

using nlohmann::ordered_json;

ordered_json path_or_null(const std::optional<ConfiguredPath>& path) {
  return path ? ordered_json(path->path) : ordered_json(nullptr);
}

ordered_json host_port_or_null(const std::optional<HostPort>& address) {
  return address ? ordered_json(address->text) : ordered_json(nullptr);
}

std::int64_t milliseconds(Duration d) { return d.ns / 1'000'000; }

ordered_json tls_json(const std::optional<ClusterTlsConfig>& tls) {
  if (!tls) return nullptr;
  // The key is named by its path; its contents are never read for /config.
  ordered_json view{{"ca", tls->ca.path},
                    {"cert", tls->cert.path},
                    {"key", tls->key.path},
                    {"crl", path_or_null(tls->crl)}};
  if (tls->ca_path) view["ca_path"] = tls->ca_path->path;
  return view;
}

ordered_json logging_json(const GatewayConfig::Logging& logging) {
  return ordered_json{{"level", std::string(to_string(logging.level))},
                      {"format", std::string(to_string(logging.format))}};
}

std::string address_text(const ClientDef& client) {
  char text[INET6_ADDRSTRLEN] = {};
  if (::inet_ntop(client.is_v6 ? AF_INET6 : AF_INET, client.address.data(), text, sizeof(text)) == nullptr) {
    return {};
  }
  return std::string(text) + "/" + std::to_string(client.prefix_length);
}

bool lower_equals(std::string_view text, std::string_view lower) {
  if (text.size() != lower.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != lower[i]) return false;
  }
  return true;
}

bool is_password_key(std::string_view key) {
  return lower_equals(key, "password") || lower_equals(key, "sslpassword");
}

// Keyword/value form (libpq "Connection Strings"): key = value pairs
// separated by whitespace, values bare or in single quotes with backslash
// escapes. Nothing on a malformed string.
std::optional<std::string> redact_keyword_value(std::string_view text) {
  std::string out;
  std::size_t i = 0;
  const auto space = [&](std::size_t at) {
    return at < text.size() && std::isspace(static_cast<unsigned char>(text[at]));
  };
  while (i < text.size()) {
    while (space(i)) out += text[i++];
    if (i >= text.size()) break;
    const std::size_t key_start = i;
    while (i < text.size() && text[i] != '=' && !space(i)) ++i;
    const std::string_view key = text.substr(key_start, i - key_start);
    if (key.empty()) return std::nullopt;
    out += key;
    while (space(i)) out += text[i++];
    if (i >= text.size() || text[i] != '=') return std::nullopt;
    out += text[i++];
    while (space(i)) out += text[i++];
    const std::size_t value_start = i;
    if (i < text.size() && text[i] == '\'') {
      ++i;
      for (;;) {
        if (i >= text.size()) return std::nullopt;  // Unterminated quote.
        if (text[i] == '\\') {
          i += 2;
          continue;
        }
        if (text[i++] == '\'') break;
      }
      if (i > text.size()) return std::nullopt;
    } else {
      while (i < text.size() && !space(i)) {
        if (text[i] == '\\') ++i;
        ++i;
      }
      if (i > text.size()) return std::nullopt;
    }
    out += is_password_key(key) ? std::string(kRedacted)
                                : std::string(text.substr(value_start, i - value_start));
  }
  return out;
}

// URI form: postgresql://[user[:password]@]host...[?key=value&...].
std::optional<std::string> redact_uri(std::string_view text) {
  // Keyword/value options after a URI (the member appends its TLS keys so)
  // are not parsed here: such a string is redacted whole.
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) return std::nullopt;
  }
  const std::size_t scheme_end = text.find("://");
  if (scheme_end == std::string_view::npos) return std::nullopt;
  std::string out(text.substr(0, scheme_end + 3));
  std::string_view rest = text.substr(scheme_end + 3);
  const std::size_t query_start = rest.find('?');
  std::string_view authority_path = rest.substr(0, query_start);
  // The userinfo ends at the last '@' before the path.
  const std::size_t path_start = authority_path.find('/');
  const std::string_view authority = authority_path.substr(0, path_start);
  const std::size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    const std::string_view userinfo = authority.substr(0, at);
    const std::size_t colon = userinfo.find(':');
    out += userinfo.substr(0, colon);
    if (colon != std::string_view::npos) out += ":" + std::string(kRedacted);
    out += authority_path.substr(at);
  } else {
    out += authority_path;
  }
  if (query_start == std::string_view::npos) return out;
  out += '?';
  std::string_view query = rest.substr(query_start + 1);
  bool first = true;
  while (true) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const std::size_t equals = pair.find('=');
    if (!first) out += '&';
    first = false;
    const std::string_view key = pair.substr(0, equals);
    // A percent-encoded key may spell "password": its value is redacted too.
    const bool encoded = key.find('%') != std::string_view::npos;
    if (equals != std::string_view::npos && (encoded || is_password_key(key))) {
      out += std::string(key) + "=" + std::string(kRedacted);
    } else if (equals == std::string_view::npos && is_password_key(key)) {
      out += std::string(kRedacted);
    } else {
      out += pair;
    }
    if (amp == std::string_view::npos) break;
    query = query.substr(amp + 1);
  }
  return out;
}

ordered_json conninfo_or_null(const std::optional<std::string>& conninfo) {
  return conninfo ? ordered_json(redact_conninfo(*conninfo)) : ordered_json(nullptr);
}

LoadedFile named(std::string path, std::string what) {
  return LoadedFile{.path = std::move(path), .what = std::move(what)};
}

void add_tls_files(std::vector<LoadedFile>& files, const std::optional<ClusterTlsConfig>& tls) {
  if (!tls) return;
  files.push_back(named(tls->ca.path, "cluster CA"));
  files.push_back(named(tls->cert.path, "certificate"));
  files.push_back(named(tls->key.path, "private key"));
  if (tls->crl) files.push_back(named(tls->crl->path, "CRL"));
}

}  // namespace

std::string redact_conninfo(std::string_view conninfo) {
  const bool uri = conninfo.starts_with("postgresql://") || conninfo.starts_with("postgres://");
  const std::optional<std::string> redacted = uri ? redact_uri(conninfo) : redact_keyword_value(conninfo);
  return redacted ? *redacted : std::string(kRedacted);
}

ordered_json gateway_config_json(const GatewayConfig& config, std::span<const ClientDef> clients) {
  ordered_json listen = ordered_json::array();
  for (const ListenAddress& address : config.listen) listen.push_back(address.text);
  ordered_json dictionary_files = ordered_json::array();
  for (const ConfiguredPath& file : config.dictionary_files) dictionary_files.push_back(file.path);
  const auto stores_json = [](const std::vector<UsersStore>& list) {
    ordered_json stores = ordered_json::array();
    for (UsersStore store : list) stores.push_back(std::string(to_string(store)));
    return stores;
  };
  ordered_json stores = stores_json(config.users_stores);
  const auto sql_json = [](const std::optional<SqlUsersConfig>& section) {
    if (!section) return ordered_json(nullptr);
    const SqlUsersConfig& s = *section;
    return ordered_json{{"sqlite", path_or_null(s.sqlite)},
                        {"postgresql", conninfo_or_null(s.postgresql)},
                        {"read_replica", conninfo_or_null(s.read_replica)},
                        {"connections", s.connections},
                        {"cache_ttl_s", s.cache_ttl.ns / 1'000'000'000},
                        {"negative_ttl_s", s.negative_ttl.ns / 1'000'000'000},
                        {"cache_entries_max", s.cache_entries_max},
                        {"miss_wait_ms", milliseconds(s.miss_wait)}};
  };
  ordered_json sql = sql_json(config.sql_users);
  ordered_json accounting = nullptr;
  if (config.accounting) {
    const AccountingConfig& a = *config.accounting;
    ordered_json members = ordered_json::array();
    for (const SubmissionAddress& member : a.members) {
      members.push_back(ordered_json{{"id", member.member_id}, {"address", member.address.text}});
    }
    accounting = ordered_json{{"members", std::move(members)},
                              {"tls", tls_json(a.tls)},
                              {"insecure_plaintext_cluster", a.insecure_plaintext_cluster},
                              {"pending_records_max", a.pending_records_max},
                              {"batch_records_max", a.batch_records_max},
                              {"batch_delay_us", a.batch_delay.ns / 1000},
                              {"session_query_timeout_ms", milliseconds(a.session_query_timeout)},
                              {"key", a.key ? ordered_json(*a.key) : ordered_json(nullptr)}};
  }
  const EapConfig& e = config.eap;
  ordered_json forward = nullptr;
  if (e.forward) {
    // The key file's path, never its octets (as audit.key_file).
    ordered_json peers = ordered_json::array();
    for (const EapForwardPeer& peer : e.forward->peers)
      peers.push_back(ordered_json{{"id", peer.gateway_id}, {"address", peer.address.text}});
    forward = ordered_json{{"listen", e.forward->listen.text},
                           {"key_file", e.forward->key_file.path},
                           {"peers", std::move(peers)},
                           {"timeout_ms", milliseconds(e.forward->timeout)},
                           {"in_flight_max", e.forward->in_flight_max}};
  }
  const ordered_json eap{{"methods", e.methods},
                         {"md5", e.md5},
                         {"conversations_max", e.conversations_max},
                         {"idle_timeout_s", e.idle_timeout.ns / 1'000'000'000},
                         {"rounds_max", e.rounds_max},
                         {"gateway_id", e.gateway_id ? ordered_json(*e.gateway_id) : ordered_json(nullptr)},
                         {"forward", std::move(forward)}};
  ordered_json radsec = nullptr;
  if (config.radsec) {
    const RadSecConfig& r = *config.radsec;
    ordered_json radsec_listen = ordered_json::array();
    for (const ListenAddress& address : r.listen) radsec_listen.push_back(address.text);
    radsec = ordered_json{{"listen", std::move(radsec_listen)},
                          {"port", r.port},
                          {"clients_file", r.clients_file.path},
                          {"handshake_timeout_ms", milliseconds(r.handshake_timeout)},
                          {"idle_timeout_s", r.idle_timeout.ns / 1'000'000'000},
                          {"connections_max", r.connections_max},
                          {"client_connections_max", r.client_connections_max},
                          {"buffered_bytes_max", r.buffered_bytes_max},
                          {"require_certificate_name", r.require_certificate_name}};
  }
  const auto audit_json = [](const std::optional<AuditConfig>& section) {
    if (!section) return ordered_json(nullptr);
    const AuditConfig& a = *section;
    return ordered_json{{"path", a.path.path},
                        {"rotate_bytes", a.rotate_bytes},
                        {"keep", a.keep},
                        {"fsync_interval_ms", milliseconds(a.fsync_interval)},
                        {"key_file", path_or_null(a.key_file)},
                        {"queue_lines_max", a.queue_lines_max}};
  };
  ordered_json audit = audit_json(config.audit);
  ordered_json tenants = ordered_json::array();
  for (const TenantConfig& t : config.tenants) {
    tenants.push_back(ordered_json{
        {"name", t.name},
        {"users_file", t.users_file.path},
        {"clients_file", t.clients_file.path},
        {"users_stores", stores_json(t.users_stores)},
        {"sql_users", sql_json(t.sql_users)},
        {"radsec_clients_file", path_or_null(t.radsec_clients_file)},
        {"policy", path_or_null(t.policy_file)},
        {"eap",
         ordered_json{{"methods", t.eap.methods}, {"md5", t.eap.md5}, {"rounds_max", t.eap.rounds_max}}},
        {"tls", tls_json(t.tls)},
        {"audit", audit_json(t.audit)}});
  }
  ordered_json client_list = ordered_json::array();
  for (const ClientDef& client : clients) {
    const std::string tenant = client.tenant == 0 || client.tenant > config.tenants.size()
                                   ? std::string(kDefaultTenantName)
                                   : config.tenants[client.tenant - 1].name;
    client_list.push_back(ordered_json{
        {"name", client.name},
        {"tenant", tenant},
        {"shortname", client.shortname},
        {"ipaddr", address_text(client)},
        {"secret", std::string(kRedacted)},
        {"nas_type", client.nas_type},
        {"require_message_authenticator", std::string(to_string(client.require_message_authenticator))},
        {"limit_proxy_state", std::string(to_string(client.limit_proxy_state))},
        {"proto", std::string(to_string(client.proto))},
        {"file", client.file},
        {"line", client.line}});
  }
  return ordered_json{
      {"source_file", config.source_file},
      {"listen", std::move(listen)},
      {"auth_port", config.auth_port},
      {"acct_port", config.acct_port},
      {"workers", config.workers},
      {"users_file", config.users_file.path},
      {"clients_file", config.clients_file.path},
      {"dictionary_dir", path_or_null(config.dictionary_dir)},
      {"dictionary_files", std::move(dictionary_files)},
      {"logging", logging_json(config.logging)},
      {"duplicate_window_ms", milliseconds(config.duplicate_window)},
      {"mab_default", std::string(to_string(config.mab_default))},
      {"simultaneous_use_unavailable", std::string(to_string(config.simultaneous_use_unavailable))},
      {"admin_socket", path_or_null(config.admin_socket)},
      {"admin_listen", host_port_or_null(config.admin_listen)},
      {"admin_token_file", path_or_null(config.admin_token_file)},
      {"users_stores", std::move(stores)},
      {"sql_users", std::move(sql)},
      {"policy", path_or_null(config.policy_file)},
      {"accounting", std::move(accounting)},
      {"audit", std::move(audit)},
      {"eap", eap},
      {"require_message_authenticator", config.require_message_authenticator},
      {"share_ports", config.share_ports},
      {"tls", tls_json(config.tls)},
      {"radsec", std::move(radsec)},
      {"tenants", std::move(tenants)},
      {"clients", std::move(client_list)},
  };
}

ordered_json member_config_json(const MemberConfig& config) {
  ordered_json members = ordered_json::array();
  for (const MemberAddress& member : config.members) {
    members.push_back(
        ordered_json{{"id", member.id}, {"raft", member.raft.text}, {"submission", member.submission.text}});
  }
  ordered_json exporter = nullptr;
  if (config.exporter) {
    const MemberConfig::Export& e = *config.exporter;
    const MemberConfig::PostgresTimeouts& t = e.postgresql_timeouts;
    ordered_json postgresql = nullptr;
    if (!e.postgresql_conninfo.empty()) {
      postgresql =
          ordered_json{{"conninfo", redact_conninfo(e.postgresql_conninfo)},
                       {"connect_timeout_s", t.connect_timeout_s},
                       {"lock_timeout_ms", t.lock_timeout_ms},
                       {"statement_timeout_ms", t.statement_timeout_ms},
                       {"idle_in_transaction_session_timeout_ms", t.idle_in_transaction_session_timeout_ms},
                       {"keepalives_idle_s", t.keepalives_idle_s},
                       {"keepalives_interval_s", t.keepalives_interval_s},
                       {"keepalives_count", t.keepalives_count},
                       {"tcp_user_timeout_ms", t.tcp_user_timeout_ms}};
    }
    exporter = ordered_json{{"sqlite", path_or_null(e.sqlite)},
                            {"postgresql", std::move(postgresql)},
                            {"batch_records_max", e.batch_records_max},
                            {"poll_interval_ms", e.poll_interval_ms},
                            {"batch_delay_ms", e.batch_delay_ms},
                            {"retry_initial_ms", e.retry_initial_ms},
                            {"retry_max_ms", e.retry_max_ms}};
    exporter["log_retention_days"] = e.log_retention_days;
  }
  const MemberConfig::Raft& r = config.raft;
  const MemberConfig::Ledger& l = config.ledger;
  return ordered_json{
      {"source_file", config.source_file},
      {"id", config.id},
      {"data_dir", config.data_dir.path},
      {"raft_address", config.raft_address.text},
      {"raft_listen", host_port_or_null(config.raft_listen)},
      {"submission_listen", config.submission_listen.text},
      {"admin_socket", path_or_null(config.admin_socket)},
      {"admin_listen", host_port_or_null(config.admin_listen)},
      {"admin_token_file", path_or_null(config.admin_token_file)},
      {"bootstrap", config.bootstrap},
      {"members", std::move(members)},
      {"cluster_tls", tls_json(config.cluster_tls)},
      {"insecure_plaintext_cluster", config.insecure_plaintext_cluster},
      {"submission_connections_max", config.submission_connections_max},
      {"memory_budget_mib", config.memory_budget_mib},
      {"raft",
       {{"election_timeout_ms", r.election_timeout_ms},
        {"heartbeat_timeout_ms", r.heartbeat_timeout_ms},
        {"snapshot_threshold", r.snapshot_threshold},
        {"snapshot_trailing", r.snapshot_trailing},
        {"log_bytes_max", r.log_bytes_max},
        {"segment_bytes", r.segment_bytes}}},
      {"ledger",
       {{"held_records_max", l.held_records_max},
        {"held_bytes_max", l.held_bytes_max},
        {"sessions_max", l.sessions_max},
        {"sessions_bytes_max", l.sessions_bytes_max},
        {"session_expiry_multiple", l.session_expiry_multiple},
        {"session_default_interim_s", l.session_default_interim_s}}},
      {"export", std::move(exporter)},
      {"dictionary_dir", path_or_null(config.dictionary_dir)},
      {"logging", logging_json(config.logging)},
  };
}

std::string iso8601_utc(std::int64_t unix_ms) {
  // Floor division, so that times before 1970 keep a milliseconds part in
  // 0..999.
  std::int64_t ms = unix_ms % 1000;
  std::int64_t seconds = unix_ms / 1000;
  if (ms < 0) {
    ms += 1000;
    --seconds;
  }
  const auto when = static_cast<std::time_t>(seconds);
  std::tm parts{};
  if (::gmtime_r(&when, &parts) == nullptr) return "-";
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", parts.tm_year + 1900, parts.tm_mon + 1,
                     parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec, ms);
}

std::string config_body(std::string_view role, const ordered_json& config,
                        std::span<const LoadedFile> files) {
  ordered_json list = ordered_json::array();
  for (const LoadedFile& file : files) {
    list.push_back(ordered_json{{"path", file.path},
                                {"what", file.what},
                                {"sha256", file.sha256},
                                {"size", file.size},
                                {"loaded", iso8601_utc(file.loaded_unix_ms)}});
  }
  const ordered_json body{{"role", std::string(role)}, {"config", config}, {"files", std::move(list)}};
  return body.dump(-1, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

std::vector<LoadedFile> named_files(const GatewayConfig& config) {
  std::vector<LoadedFile> files;
  if (!config.source_file.empty()) files.push_back(named(config.source_file, "config file"));
  files.push_back(named(config.users_file.path, "users file"));
  files.push_back(named(config.clients_file.path, "clients file"));
  if (config.dictionary_dir)
    files.push_back(named(config.dictionary_dir->path + "/dictionary", "dictionary"));
  for (const ConfiguredPath& file : config.dictionary_files) files.push_back(named(file.path, "dictionary"));
  if (config.sql_users && config.sql_users->sqlite) {
    files.push_back(named(config.sql_users->sqlite->path, "SQLite users database"));
  }
  if (config.accounting) add_tls_files(files, config.accounting->tls);
  if (config.admin_token_file) files.push_back(named(config.admin_token_file->path, "admin token file"));
  if (config.policy_file) files.push_back(named(config.policy_file->path, "policy file"));
  if (config.tls) {
    files.push_back(named(config.tls->ca.path, "TLS CA"));
    files.push_back(named(config.tls->cert.path, "TLS certificate"));
    files.push_back(named(config.tls->key.path, "TLS private key"));
    if (config.tls->crl) files.push_back(named(config.tls->crl->path, "TLS CRL"));
  }
  if (config.radsec) files.push_back(named(config.radsec->clients_file.path, "RadSec clients file"));
  for (const TenantConfig& tenant : config.tenants) {
    files.push_back(named(tenant.users_file.path, "users file"));
    files.push_back(named(tenant.clients_file.path, "clients file"));
    if (tenant.radsec_clients_file)
      files.push_back(named(tenant.radsec_clients_file->path, "RadSec clients file"));
    if (tenant.policy_file) files.push_back(named(tenant.policy_file->path, "policy file"));
    if (tenant.sql_users && tenant.sql_users->sqlite)
      files.push_back(named(tenant.sql_users->sqlite->path, "SQLite users database"));
    add_tls_files(files, tenant.tls);
  }
  return files;
}

std::vector<LoadedFile> named_files(const MemberConfig& config) {
  std::vector<LoadedFile> files;
  if (!config.source_file.empty()) files.push_back(named(config.source_file, "config file"));
  if (config.dictionary_dir)
    files.push_back(named(config.dictionary_dir->path + "/dictionary", "dictionary"));
  add_tls_files(files, config.cluster_tls);
  if (config.admin_token_file) files.push_back(named(config.admin_token_file->path, "admin token file"));
  return files;
}

}  // namespace rw::config
