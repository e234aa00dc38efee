// GatewayState's tenants (docs/design.md "Tenants"): a client's tenant is
// the one whose file listed it, a prefix has one tenant, and a request is
// decided with its client's tenant's users and policy only.
#include "gateway/gateway_state.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <string_view>

#include "config/clients_file.h"
#include "gateway/access.h"
#include "policy/policy_file.h"
#include "radius/authenticator.h"

namespace rw::gateway {
namespace {

namespace attr = radius::attr;

constexpr std::string_view kDefaultClients = "client nas {\n  ipaddr = 10.0.0.1\n  secret = s1\n}\n";
constexpr std::string_view kAcmeClients =
    "client nas {\n  ipaddr = 10.0.0.2\n  secret = s2\n}\nclient lab {\n  ipaddr = 10.9.0.0/16\n  secret = "
    "s3\n}\n";

std::vector<config::ClientDef> clients(std::string_view text) {
  auto parsed = config::parse_clients(text, "clients.conf");
  EXPECT_TRUE(parsed);
  return parsed->clients;
}

Endpoint v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  Endpoint from;
  from.address = {a, b, c, d};
  from.port = 1000;
  return from;
}

Result<std::shared_ptr<const GatewayState>, std::string> two_tenants(std::string_view acme_clients) {
  auto dictionary = radius::Dictionary::builtin();
  auto default_users = config::UsersFile::parse("alice Cleartext-Password := \"default-pass\"\n", "users",
                                                dictionary, gateway_users_limits());
  auto acme_users =
      config::UsersFile::parse("alice Cleartext-Password := \"acme-pass\"\nbob Cleartext-Password := \"b\"\n",
                               "acme-users", dictionary, gateway_users_limits());
  auto policy = policy::parse_policy(
      "default: accept\nrules:\n  - name: no-bob\n    match: {user: bob}\n"
      "    decision: reject\n",
      "acme-policy.yaml");
  if (!default_users || !acme_users || !policy) return fail(std::string("a test input does not parse"));
  GatewayState::Inputs inputs{.dictionary = dictionary,
                              .clients = clients(kDefaultClients),
                              .users = std::move(*default_users),
                              .options = {}};
  inputs.tenants.push_back({.name = "acme",
                            .users = std::move(*acme_users),
                            .policy = std::make_shared<const policy::Policy>(std::move(*policy)),
                            .clients = clients(acme_clients)});
  return GatewayState::build(std::move(inputs));
}

// PAP for `user` from `client`, decided with the plaintext given.
AccessOutcome pap(const GatewayState& state, const config::ClientDef& client, std::string_view user,
                  std::string_view password) {
  std::array<std::uint8_t, 4096> buffer{};
  radius::PacketBuilder builder(buffer);
  std::array<std::uint8_t, 16> authenticator{};
  builder.begin(radius::Code::kAccessRequest, 1, authenticator);
  builder.add(attr::kUserName, as_bytes(user));
  std::array<std::uint8_t, 16> hidden{};
  builder.add(attr::kUserPassword, hidden);
  auto wire = builder.finish();
  EXPECT_TRUE(wire);
  auto packet = radius::Packet::parse(*wire);
  EXPECT_TRUE(packet);
  SeededRandom random(1);
  AccessOutcome outcome;
  decide_access(state, *packet, AccessInputs{.password = password, .client = &client}, random, outcome);
  return outcome;
}

TEST(GatewayStateTenants, AClientsTenantIsTheOneWhoseFileListedIt) {
  auto state = two_tenants(kAcmeClients);
  ASSERT_TRUE(state) << state.error();
  ASSERT_EQ((*state)->tenants().size(), 2u);
  EXPECT_EQ((*state)->tenants()[0].name(), "default");
  const config::ClientDef* first = (*state)->find_client(v4(10, 0, 0, 1));
  const config::ClientDef* second = (*state)->find_client(v4(10, 0, 0, 2));
  const config::ClientDef* lab = (*state)->find_client(v4(10, 9, 3, 4));
  ASSERT_TRUE(first && second && lab);
  EXPECT_EQ((*state)->tenant_of(*first).name(), "default");
  EXPECT_EQ((*state)->tenant_of(*second).name(), "acme");
  EXPECT_EQ((*state)->tenant_of(*lab).name(), "acme");
  EXPECT_EQ((*state)->find_tenant("acme"), &(*state)->tenant_of(*second));
  EXPECT_EQ((*state)->find_tenant("globex"), nullptr);
  // Both clients are named `nas`: their EAP conversations are not each other's.
  EXPECT_EQ((*state)->conversation_owner(*first), "nas");
  EXPECT_NE((*state)->conversation_owner(*second), (*state)->conversation_owner(*first));
  EXPECT_EQ((*state)->tenant_names().size(), 2u);
}

TEST(GatewayStateTenants, APrefixInTwoTenantsIsRefused) {
  auto state = two_tenants("client again {\n  ipaddr = 10.0.0.1\n  secret = s9\n}\n");
  ASSERT_FALSE(state);
  EXPECT_NE(state.error().find("clients nas and again have the same address and prefix"), std::string::npos)
      << state.error();
}

TEST(GatewayStateTenants, TheSameUserIsTwoUsersAndEachTenantHasItsPolicy) {
  auto built = two_tenants(kAcmeClients);
  ASSERT_TRUE(built) << built.error();
  const GatewayState& state = **built;
  const config::ClientDef& nas_default = *state.find_client(v4(10, 0, 0, 1));
  const config::ClientDef& nas_acme = *state.find_client(v4(10, 0, 0, 2));
  EXPECT_TRUE(pap(state, nas_default, "alice", "default-pass").accepted);
  EXPECT_FALSE(pap(state, nas_default, "alice", "acme-pass").accepted);
  EXPECT_TRUE(pap(state, nas_acme, "alice", "acme-pass").accepted);
  const AccessOutcome wrong = pap(state, nas_acme, "alice", "default-pass");
  EXPECT_FALSE(wrong.accepted);
  EXPECT_EQ(wrong.reject, RejectReason::kWrongPassword);
  // bob is acme's user only, and acme's policy refuses him.
  EXPECT_EQ(pap(state, nas_default, "bob", "b").reject, RejectReason::kUnknownUser);
  const AccessOutcome bob = pap(state, nas_acme, "bob", "b");
  EXPECT_FALSE(bob.accepted);
  EXPECT_EQ(bob.rule, "no-bob");
}

// A secret is precomputed once however many clients share it, across
// tenants too (docs/benchmarking.md "Gateway memory by client"), and each
// client still answers with its own.
TEST(GatewayStateSecrets, ClientsWithTheSameSecretShareItsPrecomputation) {
  auto built = two_tenants(
      "client twin {\n  ipaddr = 10.0.0.2\n  secret = s1\n}\nclient other {\n  ipaddr = 10.0.0.3\n  secret = "
      "s3\n}\n");
  ASSERT_TRUE(built) << built.error();
  const GatewayState& state = **built;
  EXPECT_EQ(state.secret_count(), 2u) << "s1 twice and s3";
  const config::ClientDef& nas = *state.find_client(v4(10, 0, 0, 1));
  const config::ClientDef& twin = *state.find_client(v4(10, 0, 0, 2));
  const config::ClientDef& other = *state.find_client(v4(10, 0, 0, 3));
  EXPECT_EQ(&state.secret_of(nas), &state.secret_of(twin));
  EXPECT_NE(&state.secret_of(nas), &state.secret_of(other));
  const std::string_view s3 = "s3";
  const Bytes other_secret = state.secret_of(other).bytes();
  EXPECT_EQ(std::string_view(reinterpret_cast<const char*>(other_secret.data()), other_secret.size()), s3);
  EXPECT_EQ(state.secret_of(twin).bytes().size(), 2u);
}

}  // namespace
}  // namespace rw::gateway
