// GatewayState: indexing and validation of the gateway's immutable inputs.
#include "gateway/gateway_state.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "auth/mab.h"
#include "base/assert.h"
#include "base/utf8.h"

namespace rw::gateway {

std::string client_label(const config::ClientDef& client) {
  return well_formed_utf8(client.shortname.empty() ? client.name : client.shortname);
}

config::UsersLimits gateway_users_limits() {
  config::UsersLimits limits;
  limits.alias_of = &auth::mab_entry_alias;
  return limits;
}

Result<std::shared_ptr<const GatewayState>, std::string> GatewayState::build(Inputs inputs) {
  RW_ASSERT(inputs.dictionary != nullptr);
  RW_ASSERT(inputs.tenants.size() < std::numeric_limits<std::uint16_t>::max());
  // The default tenant from the top-level inputs, then the others; every
  // client is marked with its tenant and goes into the one table of its
  // listener, so that a prefix in two tenants is refused like a prefix
  // listed twice (a NAS has exactly one tenant).
  std::vector<TenantState::Inputs> tenants;
  tenants.reserve(inputs.tenants.size() + 1);
  tenants.push_back(TenantState::Inputs{.name = std::string(config::kDefaultTenantName),
                                        .users = std::move(inputs.users),
                                        .users_stores = inputs.options.access.users_stores,
                                        .eap = inputs.options.access.eap,
                                        .policy = std::move(inputs.policy),
                                        .clients = std::move(inputs.clients),
                                        .radsec_clients = std::move(inputs.radsec_clients),
                                        .eap_methods = std::move(inputs.eap_methods)});
  for (TenantState::Inputs& tenant : inputs.tenants) tenants.push_back(std::move(tenant));
  std::vector<config::ClientDef> all_clients;
  std::vector<config::ClientDef> all_radsec_clients;
  for (std::size_t i = 0; i < tenants.size(); ++i) {
    for (auto [from, to] : {std::pair{&tenants[i].clients, &all_clients},
                            std::pair{&tenants[i].radsec_clients, &all_radsec_clients}}) {
      for (config::ClientDef& client : *from) {
        client.tenant = static_cast<std::uint16_t>(i);
        to->push_back(std::move(client));
      }
      from->clear();
    }
  }
  auto table = config::ClientTable::build(std::move(all_clients));
  if (!table) return fail(table.error());
  auto radsec_table = config::ClientTable::build(std::move(all_radsec_clients));
  if (!radsec_table) return fail(radsec_table.error());
  const std::size_t count = table->clients().size() + radsec_table->clients().size();
  std::vector<radius::SharedSecret> secrets;
  std::vector<std::uint32_t> secret_index;
  std::vector<std::string> labels;
  secret_index.reserve(count);
  labels.reserve(count);
  // Each distinct secret is precomputed once; the views are into the
  // tables' clients, which outlive this loop.
  std::unordered_map<std::string_view, std::uint32_t> known_secrets;
  for (const config::ClientTable* clients : {&*table, &*radsec_table}) {
    for (const config::ClientDef& client : clients->clients()) {
      auto [known, added] =
          known_secrets.try_emplace(client.secret, static_cast<std::uint32_t>(secrets.size()));
      if (added) {
        auto secret = radius::SharedSecret::create(client.secret_bytes());
        if (!secret) {
          return fail(client.file + ":" + std::to_string(client.line) + ": client " + client.name +
                      ": secret: " + std::string(radius::to_string(secret.error())));
        }
        secrets.push_back(*secret);
      }
      secret_index.push_back(known->second);
      labels.push_back(client_label(client));
    }
  }
  secrets.shrink_to_fit();
  std::shared_ptr<GatewayState> state(
      new GatewayState(std::move(inputs.dictionary), std::move(*table), std::move(*radsec_table),
                       std::move(secrets), std::move(secret_index), std::move(labels), inputs.options));
  // A NUL never occurs in a clients file's names, so a tenant's owners
  // never equal a default client's name.
  for (const config::ClientTable* clients : {&state->clients_, &state->radsec_clients_}) {
    for (const config::ClientDef& client : clients->clients()) {
      state->owners_.push_back(client.tenant == 0 ? client.name
                                                  : tenants[client.tenant].name + '\0' + client.name);
    }
  }
  state->tenants_.reserve(tenants.size());
  for (TenantState::Inputs& inputs_of : tenants) {
    TenantState tenant;
    tenant.name_ = std::move(inputs_of.name);
    tenant.users_ = std::move(inputs_of.users);
    tenant.users_stores_ = std::move(inputs_of.users_stores);
    tenant.eap_ = std::move(inputs_of.eap);
    tenant.policy_ = std::move(inputs_of.policy);
    tenant.eap_methods_ = std::move(inputs_of.eap_methods);
    // Every password the users file stores, parsed in place (credentials
    // are keyed by the items' addresses), so that a malformed one is a load
    // error with its position instead of a reject at 3 a.m.
    state->tenant_names_.push_back(tenant.name_);
    TenantState& placed = state->tenants_.emplace_back(std::move(tenant));
    if (auto parsed = placed.credentials_.load(placed.users_, state->known_.nt_password); !parsed)
      return fail(parsed.error());
  }
  return std::shared_ptr<const GatewayState>(std::move(state));
}

const TenantState* GatewayState::find_tenant(std::string_view name) const {
  for (const TenantState& tenant : tenants_) {
    if (tenant.name() == name) return &tenant;
  }
  return nullptr;
}

GatewayState::GatewayState(std::shared_ptr<const radius::Dictionary> dictionary, config::ClientTable clients,
                           config::ClientTable radsec_clients, std::vector<radius::SharedSecret> secrets,
                           std::vector<std::uint32_t> secret_index, std::vector<std::string> labels,
                           GatewayOptions options)
    : dictionary_(std::move(dictionary)),
      clients_(std::move(clients)),
      radsec_clients_(std::move(radsec_clients)),
      secrets_(std::move(secrets)),
      secret_index_(std::move(secret_index)),
      labels_(std::move(labels)),
      options_(options) {
  const radius::Dictionary& d = *dictionary_;
  known_.auth_type = d.find("Auth-Type");
  known_.cleartext_password = d.find("Cleartext-Password");
  known_.nt_password = d.find("NT-Password");
  known_.crypt_password = d.find("Crypt-Password");
  known_.password_with_header = d.find("Password-With-Header");
  known_.simultaneous_use = d.find("Simultaneous-Use");
  if (known_.auth_type != nullptr) {
    known_.auth_type_accept = known_.auth_type->value_by_name("Accept").value_or(254);
    known_.auth_type_reject = known_.auth_type->value_by_name("Reject").value_or(4);
  }
}

const radius::SharedSecret& GatewayState::secret_of(const config::ClientDef& client) const {
  return secrets_[secret_index_[index_of(client)]];
}

std::size_t GatewayState::index_of(const config::ClientDef& client) const {
  const std::span<const config::ClientDef> udp = clients_.clients();
  // std::less: a total order even for pointers into different arrays.
  const std::less<const config::ClientDef*> before;
  if (!before(&client, udp.data()) && before(&client, udp.data() + udp.size())) {
    return static_cast<std::size_t>(&client - udp.data());
  }
  const std::span<const config::ClientDef> radsec = radsec_clients_.clients();
  RW_ASSERT(!before(&client, radsec.data()) && before(&client, radsec.data() + radsec.size()));
  return udp.size() + static_cast<std::size_t>(&client - radsec.data());
}

}  // namespace rw::gateway
