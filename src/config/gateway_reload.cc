// The restart-only keys of the gateway config, compared value by value with
// the positions cleared.
#include "config/gateway_reload.h"

#include <fmt/format.h>

#include <algorithm>

#include <string>
#include <string_view>
#include <vector>

namespace rw::config {
namespace {

SourceLocation where_of(const GatewayConfig& next, std::string_view key) {
  if (auto found = next.key_where.find(key); found != next.key_where.end()) return found->second;
  return SourceLocation{.file = next.source_file};
}

std::string listen_text(const std::vector<ListenAddress>& listen) {
  std::string text;
  for (const ListenAddress& address : listen) text += (text.empty() ? "" : ", ") + address.text;
  return "[" + text + "]";
}

bool same_listen(const std::vector<ListenAddress>& a, const std::vector<ListenAddress>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].bytes != b[i].bytes || a[i].is_v6 != b[i].is_v6) return false;
  }
  return true;
}

void clear(ConfiguredPath& path) { path.where = {}; }

std::optional<AccountingConfig> without_positions(std::optional<AccountingConfig> section) {
  if (!section) return section;
  section->where = {};
  section->key_where = {};
  for (SubmissionAddress& member : section->members) {
    member.where = {};
    member.address.where = {};
  }
  if (section->tls) {
    section->tls->where = {};
    clear(section->tls->ca);
    clear(section->tls->cert);
    clear(section->tls->key);
    if (section->tls->crl) clear(*section->tls->crl);
  }
  return section;
}

std::optional<ClusterTlsConfig> without_positions(std::optional<ClusterTlsConfig> section) {
  if (!section) return section;
  section->where = {};
  clear(section->ca);
  clear(section->cert);
  clear(section->key);
  if (section->crl) clear(*section->crl);
  return section;
}

// The RadSec listener's settings; not its clients file, which a reload
// takes up like clients_file.
std::optional<RadSecConfig> without_positions(std::optional<RadSecConfig> section) {
  if (!section) return section;
  section->where = {};
  section->clients_file = {};
  for (ListenAddress& address : section->listen) address.where = {};
  return section;
}

std::optional<AuditConfig> without_positions(std::optional<AuditConfig> section) {
  if (!section) return section;
  section->where = {};
  clear(section->path);
  if (section->key_file) clear(*section->key_file);
  return section;
}

std::optional<SqlUsersConfig> without_positions(std::optional<SqlUsersConfig> section) {
  if (!section) return section;
  section->where = {};
  if (section->sqlite) clear(*section->sqlite);
  return section;
}

}  // namespace

ConfigErrors gateway_restart_changes(const GatewayConfig& running, const GatewayConfig& next) {
  ConfigErrors errors;
  const auto changed = [&](std::string_view key, const std::string& from, const std::string& to) {
    errors.push_back(where_of(next, key).error(
        fmt::format("{} changed from {} to {}: needs a restart (nothing was reloaded)", key, from, to)));
  };
  const auto section_changed = [&](std::string_view key) {
    errors.push_back(where_of(next, key).error(
        fmt::format("the {} section changed: needs a restart (nothing was reloaded)", key)));
  };
  if (!same_listen(running.listen, next.listen))
    changed("listen", listen_text(running.listen), listen_text(next.listen));
  if (running.auth_port != next.auth_port)
    changed("auth_port", std::to_string(running.auth_port), std::to_string(next.auth_port));
  if (running.acct_port != next.acct_port)
    changed("acct_port", std::to_string(running.acct_port), std::to_string(next.acct_port));
  if (running.workers != next.workers)
    changed("workers", std::to_string(running.workers), std::to_string(next.workers));
  if (running.share_ports != next.share_ports)
    changed("share_ports", running.share_ports ? "true" : "false", next.share_ports ? "true" : "false");
  const auto socket_text = [](const std::optional<ConfiguredPath>& path) {
    return path ? "'" + path->path + "'" : std::string("none");
  };
  if (socket_text(running.admin_socket) != socket_text(next.admin_socket))
    changed("admin_socket", socket_text(running.admin_socket), socket_text(next.admin_socket));
  // The admin server binds its TCP port and reads its token at start.
  const auto listen_or_none = [](const std::optional<HostPort>& address) {
    return address ? address->text : std::string("none");
  };
  if (listen_or_none(running.admin_listen) != listen_or_none(next.admin_listen))
    changed("admin_listen", listen_or_none(running.admin_listen), listen_or_none(next.admin_listen));
  if (socket_text(running.admin_token_file) != socket_text(next.admin_token_file))
    changed("admin_token_file", socket_text(running.admin_token_file), socket_text(next.admin_token_file));
  const auto logging_text = [](const GatewayConfig::Logging& logging) {
    return fmt::format("{}/{}", to_string(logging.level), to_string(logging.format));
  };
  if (running.logging != next.logging)
    changed("logging", logging_text(running.logging), logging_text(next.logging));
  if (running.duplicate_window != next.duplicate_window) {
    changed("duplicate_window_ms", std::to_string(running.duplicate_window.to_ms()),
            std::to_string(next.duplicate_window.to_ms()));
  }
  if (without_positions(running.accounting) != without_positions(next.accounting))
    section_changed("accounting");
  if (without_positions(running.sql_users) != without_positions(next.sql_users)) section_changed("sql_users");
  // The conversation table and its State key are built once, at start.
  EapConfig running_eap = running.eap;
  EapConfig next_eap = next.eap;
  running_eap.where = next_eap.where = {};
  // Where eap.forward's keys were written is no change of it.
  for (EapConfig* eap : {&running_eap, &next_eap}) {
    if (!eap->forward) continue;
    eap->forward->where = eap->forward->listen.where = eap->forward->key_file.where = {};
    for (EapForwardPeer& peer : eap->forward->peers) peer.where = peer.address.where = {};
  }
  if (running_eap != next_eap) section_changed("eap");
  // The RadSec listener binds its port and loads its certificates at start.
  if (without_positions(running.tls) != without_positions(next.tls)) section_changed("tls");
  if (without_positions(running.radsec) != without_positions(next.radsec)) section_changed("radsec");
  // The audit writer holds its file and chain from start to stop.
  if (without_positions(running.audit) != without_positions(next.audit)) section_changed("audit");
  // A tenant's audit writer and TLS contexts are made at start too; its
  // clients, users, policy and EAP methods reload.
  for (const TenantConfig& tenant : next.tenants) {
    const auto same_name = [&](const TenantConfig& other) { return other.name == tenant.name; };
    const auto found = std::find_if(running.tenants.begin(), running.tenants.end(), same_name);
    const TenantConfig none{};
    const TenantConfig& before = found != running.tenants.end() ? *found : none;
    for (const auto& [name, differs] :
         {std::pair{"audit", without_positions(before.audit) != without_positions(tenant.audit)},
          std::pair{"tls", without_positions(before.tls) != without_positions(tenant.tls)},
          std::pair{"sql_users",
                    without_positions(before.sql_users) != without_positions(tenant.sql_users)}}) {
      if (!differs) continue;
      errors.push_back(tenant.where.error(
          fmt::format("the {} section of tenant '{}' changed: needs a restart (nothing was reloaded)", name,
                      tenant.name)));
    }
  }
  for (const TenantConfig& tenant : running.tenants) {
    const auto same_name = [&](const TenantConfig& other) { return other.name == tenant.name; };
    if ((tenant.audit || tenant.tls || tenant.sql_users) &&
        std::none_of(next.tenants.begin(), next.tenants.end(), same_name)) {
      errors.push_back(
          where_of(next, "tenants")
              .error(fmt::format("tenant '{}' with an audit, tls or sql_users section was removed: "
                                 "needs a restart (nothing was reloaded)",
                                 tenant.name)));
    }
  }
  return errors;
}

}  // namespace rw::config
