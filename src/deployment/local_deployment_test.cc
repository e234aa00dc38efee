// The generated configs of `radiusward dev`: their exact text, reading them
// back, and the edits made on later runs.
#include "deployment/local_deployment.h"

#include <gtest/gtest.h>

namespace rw::deployment {
namespace {

const MemberTable kMembers = member_table({7201, 7202, 7203, 7301, 7302, 7303});

TEST(MemberTable, RaftPortsFirstThenSubmissionPorts) {
  EXPECT_EQ(kMembers[0], (MemberPorts{.id = 1, .raft_port = 7201, .submission_port = 7301}));
  EXPECT_EQ(kMembers[2], (MemberPorts{.id = 3, .raft_port = 7203, .submission_port = 7303}));
}

TEST(MemberConfigText, HasTheWiringFormat) {
  const std::string text = member_config_text(kMembers, 2);
  EXPECT_NE(text.find("\nid: 2\n"), std::string::npos);
  EXPECT_NE(text.find("\ndata_dir: member-2\n"), std::string::npos);
  EXPECT_NE(text.find("\nraft_address: 127.0.0.1:7202\n"), std::string::npos);
  EXPECT_NE(text.find("\nsubmission_listen: 127.0.0.1:7302\n"), std::string::npos);
  EXPECT_NE(text.find("\nadmin_socket: admin/member-2.sock\n"), std::string::npos);
  EXPECT_NE(text.find("\nbootstrap: true\n"), std::string::npos);
  // `make run` leaves accounting in DIR/radacct.sqlite (issue 4).
  EXPECT_NE(text.find("\nexport:\n  sqlite: radacct.sqlite\n"), std::string::npos);
  EXPECT_NE(text.find("\nmembers:\n"
                      "  - {id: 1, raft: 127.0.0.1:7201, submission: 127.0.0.1:7301}\n"
                      "  - {id: 2, raft: 127.0.0.1:7202, submission: 127.0.0.1:7302}\n"
                      "  - {id: 3, raft: 127.0.0.1:7203, submission: 127.0.0.1:7303}\n"),
            std::string::npos);
  // Its own certificate, made by `radiusward dev` (docs/security.md).
  EXPECT_NE(text.find("\ncluster_tls:\n  ca: certs/ca.pem\n  cert: certs/member-2.pem\n  key: "
                      "certs/member-2.key\n  crl: certs/crl.pem\n"),
            std::string::npos);
}

TEST(MemberConfigText, ReadsBack) {
  auto summary = read_member_summary(member_config_text(kMembers, 3), "member-3.yaml");
  ASSERT_TRUE(summary) << summary.error().to_string();
  EXPECT_EQ(summary->id, 3);
  EXPECT_EQ(summary->raft_port, 7203);
  EXPECT_EQ(summary->submission_port, 7303);
  EXPECT_TRUE(summary->bootstrap);
}

TEST(WithoutBootstrap, ChangesOnlyThatLine) {
  const std::string before = member_config_text(kMembers, 1);
  const std::string after = without_bootstrap(before);
  auto summary = read_member_summary(after, "member-1.yaml");
  ASSERT_TRUE(summary) << summary.error().to_string();
  EXPECT_FALSE(summary->bootstrap);
  std::string expected = before;
  expected.replace(expected.find("bootstrap: true"), 15, "bootstrap: false");
  EXPECT_EQ(after, expected);
  EXPECT_EQ(without_bootstrap(after), after);
}

TEST(ReadMemberSummary, RefusesAnAddressOffLoopback) {
  auto summary = read_member_summary(
      "id: 1\nraft_address: 10.0.0.1:7201\nsubmission_listen: 127.0.0.1:7301\n", "m.yaml");
  ASSERT_FALSE(summary);
  EXPECT_EQ(summary.error().line, 2);
  EXPECT_NE(summary.error().message.find("raft_address"), std::string::npos);
}

TEST(ReadMemberSummary, ReportsYamlSyntaxErrorsWithTheirPosition) {
  auto summary = read_member_summary("id: 1\nmembers: [\n", "m.yaml");
  ASSERT_FALSE(summary);
  EXPECT_EQ(summary.error().file, "m.yaml");
  EXPECT_GT(summary.error().line, 0);
}

TEST(ReadMemberSummary, RefusesAnIdOutsideTheDeployment) {
  EXPECT_FALSE(
      read_member_summary("id: 4\nraft_address: 127.0.0.1:1\nsubmission_listen: 127.0.0.1:2\n", "m"));
}

const GatewaySettings kGateway{.users_file = "/src/etc/demo/users",
                               .clients_file = "/src/etc/demo/clients.conf",
                               .auth_port = 11812,
                               .acct_port = 11813};

TEST(GatewayConfigText, ListensOnLoopbackWithTheAdminSocketAndTheMembers) {
  const std::string text = gateway_config_text(kGateway, kMembers, true);
  EXPECT_NE(text.find("listen:\n  - 127.0.0.1\n  - \"::1\"\n"), std::string::npos);
  EXPECT_NE(text.find("\nadmin_socket: admin/gateway.sock\n"), std::string::npos);
  // EAP-MD5 for wired NASes, as the flag-only quick start serves it.
  EXPECT_NE(text.find("\neap:\n  md5: true\n"), std::string::npos);
  EXPECT_NE(text.find("\naccounting:\n  members:\n    - {id: 1, address: 127.0.0.1:7301}\n"
                      "    - {id: 2, address: 127.0.0.1:7302}\n    - {id: 3, address: 127.0.0.1:7303}\n"),
            std::string::npos);
  // The members must present their certificates (docs/security.md).
  EXPECT_NE(text.find("\n  tls:\n    ca: certs/ca.pem\n    cert: certs/gateway-dev.pem\n    key: "
                      "certs/gateway-dev.key\n    crl: certs/crl.pem\n"),
            std::string::npos)
      << text;
  auto settings = read_gateway_settings(text, "gateway.yaml");
  ASSERT_TRUE(settings) << settings.error().to_string();
  EXPECT_EQ(*settings, kGateway);
}

TEST(GatewayConfigText, ServesTheTlsMethodsWithTheGivenCertificates) {
  GatewaySettings settings = kGateway;
  settings.tls_cert = "eap-certs/gateway-eap-server.pem";
  settings.tls_key = "eap-certs/gateway-eap-server.key";
  settings.tls_ca = "eap-certs/ca.pem";
  settings.tls_crl = "eap-certs/crl.pem";
  const std::string text = gateway_config_text(settings, kMembers, true);
  EXPECT_NE(text.find("\neap:\n  md5: true\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  methods: [tls, peap, ttls, md5]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\ntls:\n  cert: \"eap-certs/gateway-eap-server.pem\"\n  key: "
                      "\"eap-certs/gateway-eap-server.key\"\n"
                      "  ca: \"eap-certs/ca.pem\"\n  crl: \"eap-certs/crl.pem\"\n"),
            std::string::npos)
      << text;
  // Without certificates, EAP-MD5 alone.
  EXPECT_EQ(gateway_config_text(kGateway, kMembers, true).find("methods:"), std::string::npos);
}

TEST(GatewayConfigText, LeavesAccountingOutWhenAsked) {
  EXPECT_EQ(gateway_config_text(kGateway, kMembers, false).find("accounting"), std::string::npos);
}

TEST(ApplyGatewayOverrides, AddsThePolicyWhenAsked) {
  const std::string text = gateway_config_text(kGateway, kMembers, true);
  EXPECT_EQ(text.find("policy:"), std::string::npos);
  const std::string after = apply_gateway_overrides(text, GatewayOverrides{.policy_file = "/p/policy.yaml"});
  EXPECT_NE(after.find("\npolicy: \"/p/policy.yaml\"\n"), std::string::npos) << after;
  EXPECT_EQ(apply_gateway_overrides(after, GatewayOverrides{.policy_file = "/q.yaml"}).find("/p/policy.yaml"),
            std::string::npos);
}

TEST(ApplyGatewayOverrides, RewritesOnlyTheGivenKeys) {
  const std::string text = gateway_config_text(kGateway, kMembers, true);
  const std::string after =
      apply_gateway_overrides(text, GatewayOverrides{.users_file = "/other/users", .acct_port = 1813});
  auto settings = read_gateway_settings(after, "gateway.yaml");
  ASSERT_TRUE(settings);
  EXPECT_EQ(settings->users_file, "/other/users");
  EXPECT_EQ(settings->clients_file, kGateway.clients_file);
  EXPECT_EQ(settings->auth_port, 11812);
  EXPECT_EQ(settings->acct_port, 1813);
  EXPECT_NE(after.find("accounting:\n  members:\n    - {id: 1, address: 127.0.0.1:7301}"), std::string::npos);
  EXPECT_EQ(apply_gateway_overrides(text, {}), text);
}

TEST(ReadGatewaySettings, DefaultsThePorts) {
  auto settings = read_gateway_settings("users_file: u\nclients_file: c\n", "g.yaml");
  ASSERT_TRUE(settings);
  EXPECT_EQ(settings->auth_port, 1812);
  EXPECT_EQ(settings->acct_port, 1813);
}

TEST(SetTopLevelValue, KeepsCommentsAndIndentedKeysAndAppendsWhenAbsent) {
  const std::string text = "# bootstrap: true\nraft:\n  bootstrap: true\nbootstrap_x: 1\nlast: 2";
  EXPECT_EQ(set_top_level_value(text, "bootstrap", "false"),
            "# bootstrap: true\nraft:\n  bootstrap: true\nbootstrap_x: 1\nlast: 2\nbootstrap: false\n");
  EXPECT_EQ(set_top_level_value("last: 2\n", "last", "3"), "last: 3\n");
}

TEST(StatusNamesLeader, OnlyAKnownLeaderCounts) {
  EXPECT_TRUE(status_names_leader(R"({"role":"member","leader":{"id":1,"address":"127.0.0.1:7301"}})"));
  EXPECT_FALSE(status_names_leader(R"({"role":"member","leader":null})"));
  EXPECT_FALSE(status_names_leader(R"({"role":"member"})"));
  EXPECT_FALSE(status_names_leader("not json"));
  EXPECT_FALSE(status_names_leader("[1]"));
}

TEST(YamlQuoted, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(yaml_quoted("/a b/\"c\"\\d\n"), "\"/a b/\\\"c\\\"\\\\d\\x0a\"");
  auto settings =
      read_gateway_settings("users_file: " + yaml_quoted("/a \"b\"\\c\n") + "\nclients_file: c\n", "g");
  ASSERT_TRUE(settings);
  EXPECT_EQ(settings->users_file, "/a \"b\"\\c\n");
}

config::ClientDef client(std::array<std::uint8_t, 4> address, std::uint8_t prefix, std::string secret) {
  config::ClientDef def;
  std::copy(address.begin(), address.end(), def.address.begin());
  def.prefix_length = prefix;
  def.secret = std::move(secret);
  return def;
}

TEST(LoopbackSecret, TakesTheFirstClientCoveringLoopback) {
  config::ClientDef v6 = client({0, 0, 0, 0}, 0, "v6");
  v6.is_v6 = true;
  const std::vector<config::ClientDef> clients = {
      v6, client({10, 0, 0, 0}, 8, "ten"), client({127, 0, 0, 0}, 8, "loop"), client({0, 0, 0, 0}, 0, "any")};
  EXPECT_EQ(loopback_secret(clients), "loop");
  EXPECT_EQ(loopback_secret({client({10, 0, 0, 0}, 8, "ten")}), std::nullopt);
}

TEST(BannerText, PrintsReadyToPasteLines) {
  const std::string text = banner_text(Banner{.dir = "/tmp/d",
                                              .binary = "/b/radiusward",
                                              .members = kMembers,
                                              .gateway = kGateway,
                                              .secret = "testing123",
                                              .with_accounting = true});
  EXPECT_NE(text.find("radtest alice wonderland 127.0.0.1:11812 0 testing123\n"), std::string::npos);
  EXPECT_NE(text.find("radacct.sqlite 'select "), std::string::npos);
  EXPECT_NE(text.find("| radclient -x 127.0.0.1:11813 acct testing123\n"), std::string::npos);
  EXPECT_NE(text.find("/b/radiusward ctl --dir /tmp/d --member 1 records\n"), std::string::npos);
  EXPECT_NE(text.find("member-2  raft 127.0.0.1:7202  submission 127.0.0.1:7302\n"), std::string::npos);
}

}  // namespace
}  // namespace rw::deployment
