// GatewayState: indexing and validation of the gateway's immutable inputs.
#include "gateway/gateway_state.h"

#include <algorithm>
#include <functional>
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
  auto table = config::ClientTable::build(std::move(inputs.clients));
  if (!table) return fail(table.error());
  auto radsec_table = config::ClientTable::build(std::move(inputs.radsec_clients));
  if (!radsec_table) return fail(radsec_table.error());
  std::vector<radius::SharedSecret> secrets;
  std::vector<std::string> labels;
  secrets.reserve(table->clients().size() + radsec_table->clients().size());
  labels.reserve(secrets.capacity());
  for (const config::ClientTable* clients : {&*table, &*radsec_table}) {
    for (const config::ClientDef& client : clients->clients()) {
      auto secret = radius::SharedSecret::create(client.secret_bytes());
      if (!secret) {
        return fail(client.file + ":" + std::to_string(client.line) + ": client " + client.name +
                    ": secret: " + std::string(radius::to_string(secret.error())));
      }
      secrets.push_back(*secret);
      labels.push_back(client_label(client));
    }
  }
  std::shared_ptr<GatewayState> state(
      new GatewayState(std::move(inputs.dictionary), std::move(*table), std::move(*radsec_table),
                       std::move(secrets), std::move(labels), std::move(inputs.users), inputs.options));
  if (auto parsed = state->parse_credentials(); !parsed) return fail(parsed.error());
  state->policy_ = std::move(inputs.policy);
  state->eap_methods_ = std::move(inputs.eap_methods);
  return std::shared_ptr<const GatewayState>(std::move(state));
}

// Parses every password the users file stores, so that a malformed one is a
// load error with its position instead of a reject at 3 a.m.
Result<void, std::string> GatewayState::parse_credentials() {
  auto parsed = auth::UserCredentials::parse(users_, known_.nt_password);
  if (!parsed) return fail(parsed.error());
  credentials_ = std::move(*parsed);
  return {};
}

GatewayState::GatewayState(std::shared_ptr<const radius::Dictionary> dictionary, config::ClientTable clients,
                           config::ClientTable radsec_clients, std::vector<radius::SharedSecret> secrets,
                           std::vector<std::string> labels, config::UsersFile users, GatewayOptions options)
    : dictionary_(std::move(dictionary)),
      clients_(std::move(clients)),
      radsec_clients_(std::move(radsec_clients)),
      secrets_(std::move(secrets)),
      labels_(std::move(labels)),
      users_(std::move(users)),
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
  return secrets_[index_of(client)];
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
