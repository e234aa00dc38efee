// The policy file reader: what it compiles, and every error with its
// position, all at once.
#include "policy/policy_file.h"

#include <gtest/gtest.h>

#include <fstream>

namespace rw::policy {
namespace {

std::vector<std::string> errors_of(std::string_view text, const Limits& limits = {}) {
  auto policy = parse_policy(text, "p.yaml", limits);
  EXPECT_FALSE(policy.has_value());
  std::vector<std::string> out;
  if (!policy) {
    for (const config::ConfigError& error : policy.error()) out.push_back(error.to_string());
  }
  return out;
}

TEST(PolicyFile, CompilesTheExampleOfTheDocs) {
  auto policy = parse_policy(R"(
utc_offset: "+01:00"
default: reject
groups:
  staff: [alice, bob]
mab:
  allow: ["00:11:22"]
  deny: ["de:ad:be:ef:00:01"]
rules:
  - name: staff-corp
    match:
      ssid: corp
      group: staff
      method: [PAP, EAP-TLS]
      time: "Mon-Fri 07:00-20:00"
    decision: accept
    reply: {vlan: 100, session_timeout: 28800, filter_id: staff}
  - name: printers
    match: {method: MAB, mac: "00:11:22", client: "sw-*"}
    decision: accept
    reply: {vlan: 30}
  - name: no-corp-for-others
    match: {ssid: corp}
    decision: reject
    reply: {reply_message: "corp is for staff"}
)",
                             "p.yaml");
  ASSERT_TRUE(policy.has_value()) << policy.error().front().to_string();
  EXPECT_EQ(policy->rules().size(), 3u);
  EXPECT_EQ(policy->utc_offset_minutes(), 60);
  EXPECT_FALSE(policy->default_accept());
  EXPECT_EQ(policy->rules()[0].where.line, 10);
  EXPECT_EQ(policy->rules()[0].times.size(), 1u);
  EXPECT_EQ(policy->groups().at(0).members, (std::vector<std::string>{"alice", "bob"}));
  EXPECT_EQ(policy->mab_entries(), 2u);
}

TEST(PolicyFile, ReportsEveryErrorWithItsPosition) {
  const auto errors = errors_of(R"(default: maybe
colour: blue
rules:
  - name: a
    decision: accept
    match: {ssid: corp, vlan: 7, group: nobody, time: "Mon 25:00-26:00"}
  - name: a
    decision: reject
    reply: {vlan: 7}
  - match: {mac: "zz:zz:zz", method: kerberos, client_address: 10.0.0.0/33}
    decision: accept
)");
  const std::vector<std::string> expected{
      "p.yaml:1:10: expected accept or reject, got 'maybe'",
      "p.yaml:2:1: unknown key 'colour'",
      "p.yaml:6:25: unknown key 'match.vlan'",
      "p.yaml:6:41: no group 'nobody' in 'groups'",
      "p.yaml:6:55: expected a time window such as 'Mon-Fri 08:00-18:00', 'Sat,Sun' or '22:00-06:00', got "
      "'Mon 25:00-26:00'",
      "p.yaml:7:11: rule 'a' is already defined at line 4",
      "p.yaml:9:5: a reject rule's reply may carry only reply_message",
      "p.yaml:10:18: expected a MAC address (aa:bb:cc:dd:ee:ff) or an OUI (aa:bb:cc), got 'zz:zz:zz'",
      "p.yaml:10:38: expected PAP, CHAP, MS-CHAP, MS-CHAPv1, MS-CHAPv2, MAB, EAP, EAP-TLS, PEAP, EAP-TTLS or "
      "EAP-MD5, got 'kerberos'",
      "p.yaml:10:64: expected an IPv4 or IPv6 address with an optional /prefix, got '10.0.0.0/33'",
      "p.yaml:10:5: missing required key 'rules[].name'",
  };
  EXPECT_EQ(errors, expected);
}

TEST(PolicyFile, SyntaxErrorsHaveAPosition) {
  const auto errors = errors_of("rules:\n  - name: [a\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rfind("p.yaml:3:1: ", 0), 0u) << errors[0];
}

TEST(PolicyFile, RefusesReservedAndMalformedNames) {
  EXPECT_EQ(errors_of("rules: [{name: default, decision: accept}]\n"),
            std::vector<std::string>{"p.yaml:1:16: 'default' is a reserved name"});
  EXPECT_EQ(errors_of("rules: [{name: 'a b', decision: accept}]\n").size(), 1u);
  EXPECT_EQ(errors_of("rules: [{name: '', decision: accept}]\n").size(), 1u);
}

TEST(PolicyFile, RefusesBadOffsetsAndEmptyRoots) {
  EXPECT_EQ(errors_of("utc_offset: '+15:00'\n").size(), 1u);
  EXPECT_EQ(errors_of("utc_offset: CET\n").size(), 1u);
  EXPECT_EQ(errors_of("").size(), 1u);
  EXPECT_EQ(errors_of("- a\n").size(), 1u);
}

TEST(PolicyFile, EnforcesItsBounds) {
  Limits limits;
  limits.rules_max = 2;
  limits.list_max = 2;
  limits.groups_max = 1;
  limits.group_members_max = 2;
  limits.mab_entries_max = 1;
  limits.text_bytes_max = 4;
  const auto errors = errors_of(R"(groups: {a: [x, y, z], b: [w]}
mab: {deny: ["00:11:22", "00:11:23"]}
rules:
  - {name: r1, decision: accept, match: {ssid: [a, b, c]}}
  - {name: r2, decision: accept, match: {ssid: toolong}}
  - {name: r3, decision: accept}
  - {name: r4, decision: accept}
)",
                                limits);
  const std::vector<std::string> expected{
      "p.yaml:1:20: more than 2 group members in all",
      "p.yaml:1:24: more than 1 groups",
      "p.yaml:2:26: more than 1 MAB list entries",
      "p.yaml:4:48: more than 2 values",
      "p.yaml:5:48: longer than 4 bytes",
      "p.yaml:6:5: more than 2 rules",
  };
  EXPECT_EQ(errors, expected);
  Limits small;
  small.file_bytes_max = 8;
  EXPECT_EQ(errors_of("default: accept\n", small),
            std::vector<std::string>{"p.yaml: the file is larger than 8 bytes"});
}

TEST(PolicyFile, AnUnreadableFileIsOneError) {
  auto policy = load_policy("/nonexistent/policy.yaml");
  ASSERT_FALSE(policy.has_value());
  ASSERT_EQ(policy.error().size(), 1u);
  EXPECT_EQ(policy.error()[0].line, 0);
}

}  // namespace
}  // namespace rw::policy
