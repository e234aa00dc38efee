// Tests of the longest-prefix client lookup.
#include "config/client_table.h"

#include <arpa/inet.h>

#include <gtest/gtest.h>

namespace rw::config {
namespace {

ClientDef client(std::string name, std::string_view prefix) {
  auto parsed = parse_address_prefix(prefix, AddressFamily::kAny);
  EXPECT_TRUE(parsed) << prefix;
  ClientDef def;
  def.name = std::move(name);
  def.address = parsed->address;
  def.is_v6 = parsed->is_v6;
  def.prefix_length = parsed->prefix_length;
  def.secret = "s";
  return def;
}

std::array<std::uint8_t, 16> v4(const char* text) {
  std::array<std::uint8_t, 16> out{};
  EXPECT_EQ(inet_pton(AF_INET, text, out.data()), 1);
  return out;
}

std::array<std::uint8_t, 16> v6(const char* text) {
  std::array<std::uint8_t, 16> out{};
  EXPECT_EQ(inet_pton(AF_INET6, text, out.data()), 1);
  return out;
}

std::string name_of(const ClientDef* def) { return def ? def->name : "(none)"; }

class ClientTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto built = ClientTable::build({
        client("net8", "10.0.0.0/8"),
        client("net16", "10.1.0.0/16"),
        client("host", "10.1.2.3"),
        client("net24", "10.1.2.0/24"),
        client("other16", "10.2.0.0/16"),
        client("loopback", "127.0.0.1"),
        client("v6-site", "2001:db8::/32"),
        client("v6-lan", "2001:db8:1::/48"),
        client("v6-host", "2001:db8:1::5"),
        client("mapped-net", "::ffff:0:0/96"),
    });
    ASSERT_TRUE(built) << built.error();
    table_ = std::move(*built);
  }
  ClientTable table_;
};

TEST_F(ClientTableTest, PicksTheLongestIpv4Prefix) {
  EXPECT_EQ(name_of(table_.find(v4("10.1.2.3"), false)), "host");
  EXPECT_EQ(name_of(table_.find(v4("10.1.2.4"), false)), "net24");
  EXPECT_EQ(name_of(table_.find(v4("10.1.3.4"), false)), "net16");
  EXPECT_EQ(name_of(table_.find(v4("10.2.3.4"), false)), "other16");
  EXPECT_EQ(name_of(table_.find(v4("10.200.3.4"), false)), "net8");
  EXPECT_EQ(name_of(table_.find(v4("11.0.0.1"), false)), "(none)");
  EXPECT_EQ(name_of(table_.find(v4("127.0.0.1"), false)), "loopback");
}

TEST_F(ClientTableTest, IgnoresBytesPastTheIpv4Address) {
  auto address = v4("127.0.0.1");
  address[8] = 0xAB;
  EXPECT_EQ(name_of(table_.find(address, false)), "loopback");
}

TEST_F(ClientTableTest, PicksTheLongestIpv6Prefix) {
  EXPECT_EQ(name_of(table_.find(v6("2001:db8:1::5"), true)), "v6-host");
  EXPECT_EQ(name_of(table_.find(v6("2001:db8:1::6"), true)), "v6-lan");
  EXPECT_EQ(name_of(table_.find(v6("2001:db8:2::6"), true)), "v6-site");
  EXPECT_EQ(name_of(table_.find(v6("2001:db9::1"), true)), "(none)");
  EXPECT_EQ(name_of(table_.find(v6("::1"), true)), "(none)");
}

TEST_F(ClientTableTest, MatchesMappedIpv4AgainstIpv4ClientsFirst) {
  EXPECT_EQ(name_of(table_.find(v6("::ffff:10.1.2.3"), true)), "host");
  EXPECT_EQ(name_of(table_.find(v6("::ffff:127.0.0.1"), true)), "loopback");
  // No IPv4 client: the IPv6 clients still get their chance.
  EXPECT_EQ(name_of(table_.find(v6("::ffff:192.0.2.1"), true)), "mapped-net");
}

TEST(ClientTable, MatchesAnyAddressWithAZeroPrefix) {
  auto built = ClientTable::build({client("any", "0.0.0.0/0"), client("one", "192.0.2.1")});
  ASSERT_TRUE(built);
  EXPECT_EQ(name_of(built->find(v4("192.0.2.1"), false)), "one");
  EXPECT_EQ(name_of(built->find(v4("198.51.100.7"), false)), "any");
  EXPECT_EQ(name_of(built->find(v6("2001:db8::1"), true)), "(none)");
}

TEST(ClientTable, EmptyTableFindsNothing) {
  ClientTable table;
  EXPECT_EQ(table.find(v4("10.0.0.1"), false), nullptr);
}

TEST(ClientTable, RefusesDuplicates) {
  auto built = ClientTable::build({client("a", "10.0.0.0/8"), client("b", "10.0.0.0/8")});
  ASSERT_FALSE(built);
  EXPECT_EQ(built.error(), "clients a and b have the same address and prefix");
}

}  // namespace
}  // namespace rw::config
