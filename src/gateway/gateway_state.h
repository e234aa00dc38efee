// The immutable state every worker's request handler reads: the dictionary,
// the clients with their precomputed secrets, the users file and the access
// options. Built once at start (and on reload), then shared read-only by all
// workers through a shared_ptr<const GatewayState>.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "auth/password.h"
#include "auth/user_credentials.h"
#include "base/result.h"
#include "base/time.h"
#include "config/client_table.h"
#include "config/gateway_config.h"
#include "config/users_file.h"
#include "eap/method.h"
#include "gateway/datagram.h"
#include "gateway/duplicate_cache.h"
#include "gateway/eap_method_set.h"
#include "policy/policy.h"
#include "radius/authenticator.h"
#include "radius/dictionary.h"

namespace rw::gateway {

// What a MAC Authentication Bypass request gets when no users entry matches
// its MAC.
enum class MabDefault : std::uint8_t { kReject, kAccept };

// What an Access-Request of a user with a Simultaneous-Use limit gets when
// the cluster cannot count the user's sessions: the config's policy.
using config::SimultaneousUseUnavailable;

// EAP as the gateway serves it (the eap: section, docs/authentication.md "EAP").
struct EapOptions {
  // The methods offered, in the server's order of preference, which
  // Legacy-Nak picks in too (RFC 3748 §5.3.1); EAP-MD5 only when eap.md5 is
  // on. Empty: EAP is not served and Access-Requests with EAP-Message are
  // rejected (eap_not_enabled).
  std::vector<eap::Type> methods{};
  // EAP-Requests per conversation, the Identity request included (docs/limits.md "EAP").
  std::size_t rounds_max = 50;
};

struct AccessOptions {
  MabDefault mab_default = MabDefault::kReject;
  // RFC 2548 §2.4.4/§2.4.5 values sent with MS-CHAP keys: 1 = encryption
  // allowed, 6 = 40- or 128-bit (FreeRADIUS's defaults, which NAS vendors expect).
  std::uint32_t mppe_encryption_policy = 1;
  std::uint32_t mppe_encryption_types = 6;
  // Where users are looked up, in order; the first store that knows the user
  // decides (docs/authentication.md). SQL needs a UserStore from the shell.
  std::vector<config::UsersStore> users_stores{config::UsersStore::kFiles};
  // Simultaneous-Use (docs/authentication.md): how long an Access-Request
  // waits for the cluster's count of the user's open sessions, and what it
  // gets when the count does not come.
  Duration session_query_timeout = Duration::seconds(1);
  SimultaneousUseUnavailable simultaneous_use_unavailable = SimultaneousUseUnavailable::kReject;
  // Access-Requests waiting for a count, per worker (each holds its built
  // Access-Accept, up to 4096 bytes). At the bound new ones are dropped
  // (session_check_table_full) and the NAS retries. Requires: 1..65536.
  std::size_t session_checks_max = 256;
  EapOptions eap{};
};

struct GatewayOptions {
  AccessOptions access;
  DuplicateCache::Options duplicates;
};

// Attribute definitions the handler looks up once, not per request.
struct KnownAttributes {
  const radius::AttributeDef* auth_type = nullptr;
  const radius::AttributeDef* cleartext_password = nullptr;
  const radius::AttributeDef* nt_password = nullptr;
  const radius::AttributeDef* crypt_password = nullptr;
  const radius::AttributeDef* password_with_header = nullptr;
  const radius::AttributeDef* simultaneous_use = nullptr;
  std::uint32_t auth_type_accept = 254;
  std::uint32_t auth_type_reject = 4;
};

// The limits and indexing a gateway loads its users file with: MAB entries
// are also indexed under the canonical MAC form, whatever notation the
// operator wrote them in.
[[nodiscard]] config::UsersLimits gateway_users_limits();

// The label of a client's series in /metrics (docs/admin_api.md
// "/metrics"): its shortname, or its name when the shortname is empty, with
// bytes outside well-formed UTF-8 replaced by U+FFFD (Prometheus reads
// label values as UTF-8). Clients with the same label share its counts.
[[nodiscard]] std::string client_label(const config::ClientDef& client);

// What one tenant owns in the state (docs/design.md "Tenants"): its users
// file and their parsed passwords, its user stores, EAP methods and
// authorization policy. A request reads the tenant of its client entry
// (GatewayState::tenant_of), never another.
class TenantState {
 public:
  // What a tenant is built from. Its clients go into the gateway's client
  // tables (one lookup finds the client and so the tenant).
  struct Inputs {
    std::string name;
    config::UsersFile users;
    std::vector<config::UsersStore> users_stores{config::UsersStore::kFiles};
    EapOptions eap{};
    std::shared_ptr<const policy::Policy> policy{};
    std::vector<config::ClientDef> clients{};
    std::vector<config::ClientDef> radsec_clients{};
    // EAP-TLS, PEAP and EAP-TTLS with the tenant's certificates; null: none served.
    std::shared_ptr<const EapMethodSet> eap_methods{};
  };

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const config::UsersFile& users() const { return users_; }
  [[nodiscard]] const auth::Credential* credential_of(const config::UsersItem& item) const {
    return credentials_.find(item);
  }
  [[nodiscard]] const auth::UserCredentials& credentials() const { return credentials_; }
  [[nodiscard]] std::span<const config::UsersStore> users_stores() const { return users_stores_; }
  [[nodiscard]] const EapOptions& eap() const { return eap_; }
  // The authorization policy, or null when the tenant has none.
  [[nodiscard]] const policy::Policy* policy() const { return policy_.get(); }
  // The tenant's TLS-based EAP methods, or null when none is served.
  [[nodiscard]] const EapMethodSet* eap_methods() const { return eap_methods_.get(); }

 private:
  friend class GatewayState;
  std::string name_;
  config::UsersFile users_;
  auth::UserCredentials credentials_;
  std::vector<config::UsersStore> users_stores_;
  EapOptions eap_;
  std::shared_ptr<const policy::Policy> policy_;
  std::shared_ptr<const EapMethodSet> eap_methods_;
};

// Shares itself (shared_from_this) with work handed to other threads: the
// EAP pool steps a conversation against the state its request arrived with.
class GatewayState : public std::enable_shared_from_this<GatewayState> {
 public:
  struct Inputs {
    std::shared_ptr<const radius::Dictionary> dictionary;
    std::vector<config::ClientDef> clients;
    config::UsersFile users;
    GatewayOptions options;
    // The authorization policy (docs/policy.md); null: none, authentication decides alone.
    std::shared_ptr<const policy::Policy> policy{};
    // The RadSec clients (RFC 6614; config::ClientsLimits::radsec), looked
    // up for packets of Listener::kRadSec only. Empty without RadSec.
    std::vector<config::ClientDef> radsec_clients{};
    // The tenants besides `default`, whose clients, users, options.access
    // (users_stores, eap) and policy are the members above.
    std::vector<TenantState::Inputs> tenants{};
    // The default tenant's EAP-TLS, PEAP and EAP-TTLS; null: none served.
    std::shared_ptr<const EapMethodSet> eap_methods{};
  };

  // Validates and indexes the inputs. Errors are for the operator (two
  // clients with the same prefix, a secret over 256 octets, ...).
  [[nodiscard]] static Result<std::shared_ptr<const GatewayState>, std::string> build(Inputs inputs);

  // The client whose prefix is the longest match for `from`, or nullptr.
  [[nodiscard]] const config::ClientDef* find_client(const Endpoint& from) const {
    return clients_.find(from.address, from.is_v6);
  }
  // The same among the clients of `listener`: the RadSec clients for
  // Listener::kRadSec, the UDP clients otherwise.
  [[nodiscard]] const config::ClientDef* find_client(const Endpoint& from, Listener listener) const {
    return listener == Listener::kRadSec ? radsec_clients_.find(from.address, from.is_v6) : find_client(from);
  }
  // The precomputed secret of a client returned by find_client. Clients
  // with the same secret share one (552 bytes each: the secret and its
  // three MD5 states), as many NAS of a site do.
  [[nodiscard]] const radius::SharedSecret& secret_of(const config::ClientDef& client) const;
  // Distinct secrets among the clients (each precomputed once).
  [[nodiscard]] std::size_t secret_count() const { return secrets_.size(); }
  // The position of a client returned by find_client, in [0, client_count()):
  // the UDP clients first, then the RadSec clients.
  [[nodiscard]] std::size_t index_of(const config::ClientDef& client) const;

  // The tenant of a client returned by find_client: the one whose users,
  // policy and EAP methods its requests are decided with.
  [[nodiscard]] const TenantState& tenant_of(const config::ClientDef& client) const {
    return tenants_[client.tenant];
  }
  // The owner of the EAP conversations a client begins (eap::Conversation):
  // its name, within its tenant for tenants other than `default`, so that
  // a conversation cannot move to a client of the same name in another tenant.
  [[nodiscard]] std::string_view conversation_owner(const config::ClientDef& client) const {
    return owners_[index_of(client)];
  }
  // Every tenant's name, by index (the counters' rows, counters.h).
  [[nodiscard]] std::span<const std::string> tenant_names() const { return tenant_names_; }
  // Every tenant, `default` first (index 0), then those of `tenants:` in order.
  [[nodiscard]] std::span<const TenantState> tenants() const { return tenants_; }
  // The tenant named `name`, or null.
  [[nodiscard]] const TenantState* find_tenant(std::string_view name) const;

  // The default tenant's users file (tools, tests and requests without a
  // client; the packet path reads tenant_of(client)).
  [[nodiscard]] const config::UsersFile& users() const { return tenants_.front().users(); }
  // The known good password of a users-file control item (Cleartext-Password,
  // NT-Password, Crypt-Password, Password-With-Header) of the default tenant,
  // parsed once at load so that the packet path allocates nothing; nullptr
  // for other items.
  [[nodiscard]] const auth::Credential* credential_of(const config::UsersItem& item) const {
    return tenants_.front().credential_of(item);
  }
  // Every password of the default tenant's users file, parsed.
  [[nodiscard]] const auth::UserCredentials& credentials() const { return tenants_.front().credentials(); }
  [[nodiscard]] const radius::Dictionary& dictionary() const { return *dictionary_; }
  // The same, for holders that outlive this state (the SQL user cache): a
  // reload frees the state, not the dictionary they hold.
  [[nodiscard]] const std::shared_ptr<const radius::Dictionary>& shared_dictionary() const {
    return dictionary_;
  }
  [[nodiscard]] const KnownAttributes& known() const { return known_; }
  [[nodiscard]] const GatewayOptions& options() const { return options_; }
  // The default tenant's authorization policy, or null when none is configured.
  [[nodiscard]] const policy::Policy* policy() const { return tenants_.front().policy(); }
  // UDP and RadSec clients together.
  [[nodiscard]] std::size_t client_count() const { return labels_.size(); }
  // Every UDP client, in the order of the clients file (the admin API's /config).
  [[nodiscard]] std::span<const config::ClientDef> clients() const { return clients_.clients(); }
  // Every RadSec client, in the order of the RadSec clients file.
  [[nodiscard]] std::span<const config::ClientDef> radsec_clients() const {
    return radsec_clients_.clients();
  }
  // The label each client is counted under in /metrics, by index_of:
  // client_label() of each.
  [[nodiscard]] std::span<const std::string> client_labels() const { return labels_; }

 private:
  GatewayState(std::shared_ptr<const radius::Dictionary> dictionary, config::ClientTable clients,
               config::ClientTable radsec_clients, std::vector<radius::SharedSecret> secrets,
               std::vector<std::uint32_t> secret_index, std::vector<std::string> labels,
               GatewayOptions options);

  std::shared_ptr<const radius::Dictionary> dictionary_;
  config::ClientTable clients_;
  config::ClientTable radsec_clients_;
  std::vector<radius::SharedSecret> secrets_;  // Each distinct secret once.
  std::vector<std::uint32_t> secret_index_;    // By index_of: the client's in secrets_.
  std::vector<std::string> labels_;            // By index_of.
  std::vector<std::string> owners_;            // By index_of: conversation_owner.
  GatewayOptions options_;
  KnownAttributes known_;
  std::vector<TenantState> tenants_;  // Never empty: `default` first.
  std::vector<std::string> tenant_names_;
};

}  // namespace rw::gateway
