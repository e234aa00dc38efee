// Which NAS each session's Disconnect- or CoA-Request goes to, and what it
// names the session by, from a /sessions answer and a clients file.
#include "admin/dynamic_targets.h"

#include <gtest/gtest.h>

namespace rw::admin {
namespace {

const config::ClientsFile& clients() {
  static const config::ClientsFile file = *config::parse_clients(
      "client nas1 {\n ipaddr = 192.0.2.10\n secret = s1\n}\n"
      "client site {\n ipaddr = 10.1.0.0/16\n secret = s2\n shortname = wlc\n}\n"
      "client site-b {\n ipaddr = 10.2.0.0/16\n secret = s3\n shortname = wlc\n coa_server = 10.2.0.1\n"
      " coa_port = 1700\n}\n"
      "client v6 {\n ipv6addr = 2001:db8::7\n secret = s4\n}\n",
      "clients.conf");
  return file;
}

constexpr std::string_view kSessions = R"({"sessions": [
  {"Acct-Unique-Session-Id": "aa", "client": "nas1", "User-Name": "alice", "Acct-Session-Id": "A1",
   "NAS-IP-Address": "192.0.2.10", "Calling-Station-Id": "AA-BB-CC-DD-EE-01", "Framed-IP-Address": "10.9.0.5",
   "Framed-IPv6-Prefix": "2001:db8:0:1::/64"},
  {"Acct-Unique-Session-Id": "bb", "client": "wlc", "User-Name": "bob", "Acct-Session-Id": "B1",
   "NAS-IP-Address": "10.1.4.4", "NAS-Identifier": "ap-4"},
  {"Acct-Unique-Session-Id": "cc", "client": "wlc", "User-Name": "carol", "Acct-Session-Id": "C1",
   "NAS-IP-Address": "10.2.9.9"},
  {"Acct-Unique-Session-Id": "dd", "client": "wlc", "User-Name": "dave", "Acct-Session-Id": "D1"},
  {"Acct-Unique-Session-Id": "ee", "client": "gone", "User-Name": "erin", "Acct-Session-Id": "E1"},
  {"Acct-Unique-Session-Id": "ff", "client": "v6", "User-Name": "frank", "Acct-Session-Id": "F1",
   "NAS-IPv6-Address": "2001:db8::7"}
]})";

std::vector<DynamicTarget> targets_for(SessionFilter filter) {
  auto checked = make_session_filter(std::move(filter));
  EXPECT_TRUE(checked.has_value());
  auto targets = dynamic_targets(kSessions, *checked, clients().clients);
  EXPECT_TRUE(targets.has_value()) << targets.error();
  return targets ? *targets : std::vector<DynamicTarget>{};
}

TEST(DynamicTargets, AHostClientIsSentToAtItsAddressOnPort3799) {
  const auto targets = targets_for({.mac = "aabb.ccdd.ee01"});
  ASSERT_EQ(targets.size(), 1u);
  const DynamicTarget& alice = targets[0];
  ASSERT_NE(alice.client, nullptr);
  EXPECT_EQ(alice.client->secret, "s1");
  EXPECT_EQ(alice.to, "192.0.2.10:3799");
  EXPECT_EQ(outcome_prefix(alice), "session A1 user alice nas 192.0.2.10:3799");
  const radius::SessionIdentity& id = alice.identity;
  EXPECT_EQ(id.nas_address, (std::vector<std::uint8_t>{192, 0, 2, 10}));
  EXPECT_EQ(id.user_name, "alice");
  EXPECT_EQ(id.acct_session_id, "A1");
  EXPECT_EQ(id.calling_station_id, "AA-BB-CC-DD-EE-01");
  EXPECT_EQ(id.framed_ip_address, (std::vector<std::uint8_t>{10, 9, 0, 5}));
  EXPECT_EQ(id.framed_ipv6_prefix, (std::vector<std::uint8_t>{0, 64, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1}));
}

TEST(DynamicTargets, ANetworkClientIsSentToAtTheNasAddressOrItsCoaServer) {
  const auto targets = targets_for({.nas = "wlc"});
  ASSERT_EQ(targets.size(), 3u);
  // Two entries are named wlc: the one holding the NAS-IP-Address.
  EXPECT_EQ(targets[0].to, "10.1.4.4:3799");
  EXPECT_EQ(targets[0].client->secret, "s2");
  EXPECT_EQ(targets[0].identity.nas_identifier, "ap-4");
  EXPECT_EQ(targets[1].to, "10.2.0.1:1700");
  EXPECT_EQ(targets[1].client->secret, "s3");
  // No NAS-IP-Address: which of the two is ambiguous.
  EXPECT_EQ(targets[2].client, nullptr);
  EXPECT_EQ(targets[2].to, "-");
  EXPECT_NE(targets[2].problem.find("several clients are named 'wlc'"), std::string::npos);
}

TEST(DynamicTargets, ASessionWhoseClientIsGoneHasAProblemInstead) {
  const auto targets = targets_for({.user = "erin"});
  ASSERT_EQ(targets.size(), 1u);
  EXPECT_EQ(targets[0].client, nullptr);
  EXPECT_EQ(targets[0].problem, "no client 'gone' in the clients file");
  EXPECT_EQ(outcome_prefix(targets[0]), "session E1 user erin nas -");
}

TEST(DynamicTargets, IPv6NasAndNoMatch) {
  const auto v6 = targets_for({.user = "frank"});
  ASSERT_EQ(v6.size(), 1u);
  EXPECT_EQ(v6[0].to, "[2001:db8::7]:3799");
  EXPECT_TRUE(v6[0].is_v6);
  EXPECT_EQ(v6[0].identity.nas_address.size(), 16u);
  EXPECT_TRUE(targets_for({.ip = "10.9.0.6"}).empty());
  EXPECT_FALSE(dynamic_targets("[]", SessionFilter{}, clients().clients).has_value());
}

}  // namespace
}  // namespace rw::admin
