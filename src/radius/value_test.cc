// Tests of parse_value and format_value: each data type's text form, wire
// form, round trip and errors.
#include <gtest/gtest.h>

#include "radius/dictionary.h"

namespace rw::radius {
namespace {

using Wire = std::vector<std::uint8_t>;

AttributeDef make(DataType type) {
  AttributeDef def;
  def.name = "Test-Attribute";
  def.type = 1;
  def.data_type = type;
  return def;
}

Wire parse_ok(const AttributeDef& def, std::string_view text) {
  auto parsed = parse_value(def, text);
  EXPECT_TRUE(parsed.has_value()) << text << ": " << (parsed ? "" : parsed.error());
  return parsed ? *parsed : Wire{};
}

std::string parse_error(const AttributeDef& def, std::string_view text) {
  auto parsed = parse_value(def, text);
  EXPECT_FALSE(parsed.has_value()) << text;
  return parsed ? std::string() : parsed.error();
}

// Text -> wire -> the same text.
void expect_round_trip(const AttributeDef& def, std::string_view text, const Wire& wire) {
  EXPECT_EQ(parse_ok(def, text), wire) << text;
  EXPECT_EQ(format_value(def, wire), text);
}

TEST(ValueIpAddr, ParsesDottedQuads) {
  const AttributeDef def = make(DataType::kIpAddr);
  expect_round_trip(def, "10.0.0.1", {10, 0, 0, 1});
  expect_round_trip(def, "255.255.255.255", {255, 255, 255, 255});
  EXPECT_NE(parse_error(def, "10.0.0.256").find("not an IPv4 address"), std::string::npos);
  parse_error(def, "10.0.0");
  parse_error(def, "");
  parse_error(def, "10.0.0.1 ");
  parse_error(def, "host.example.com");
}

TEST(ValueIpv6Addr, ParsesTextForms) {
  const AttributeDef def = make(DataType::kIpv6Addr);
  Wire loopback(16, 0);
  loopback[15] = 1;
  expect_round_trip(def, "::1", loopback);
  Wire doc{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x42};
  expect_round_trip(def, "2001:db8::42", doc);
  EXPECT_EQ(parse_ok(def, "2001:0DB8:0:0:0:0:0:42"), doc);
  parse_error(def, "2001:db8::42::1");
  parse_error(def, "10.0.0.1");
}

TEST(ValueIpv6Prefix, CarriesOnlyThePrefixOctets) {
  const AttributeDef def = make(DataType::kIpv6Prefix);
  expect_round_trip(def, "2001:db8::/32", {0, 32, 0x20, 0x01, 0x0d, 0xb8});
  expect_round_trip(def, "::/0", {0, 0});
  expect_round_trip(def, "2001:db8:0:1::/64", {0, 64, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1});
  // Host bits are cleared, as FreeRADIUS does.
  EXPECT_EQ(parse_ok(def, "2001:db8::1/32"), (Wire{0, 32, 0x20, 0x01, 0x0d, 0xb8}));
  // No length means a /128.
  EXPECT_EQ(parse_ok(def, "::1").size(), 18u);
  parse_error(def, "2001:db8::/129");
  parse_error(def, "2001:db8::/");
  parse_error(def, "2001:db8::/x");
  // A full 16-byte prefix field from the wire is formatted too.
  Wire wide{0, 48, 0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(format_value(def, wide), "2001:db8:1::/48");
  // Malformed wire bytes fall back to hex.
  EXPECT_EQ(format_value(def, Wire{0, 64, 0x20}), "0x004020");
}

TEST(ValueIpv4Prefix, IsSixBytes) {
  const AttributeDef def = make(DataType::kIpv4Prefix);
  expect_round_trip(def, "192.0.2.0/24", {0, 24, 192, 0, 2, 0});
  EXPECT_EQ(parse_ok(def, "192.0.2.7/24"), (Wire{0, 24, 192, 0, 2, 0}));
  EXPECT_EQ(parse_ok(def, "192.0.2.7"), (Wire{0, 32, 192, 0, 2, 7}));
  parse_error(def, "192.0.2.0/33");
  EXPECT_EQ(format_value(def, Wire{0, 40, 1, 2, 3, 4}), "0x002801020304");
}

TEST(ValueInteger, AcceptsDecimalHexAndValueNames) {
  AttributeDef def = make(DataType::kInteger);
  def.values = {{"Framed-User", 2}, {"Login-User", 1}};
  expect_round_trip(def, "Framed-User", {0, 0, 0, 2});
  EXPECT_EQ(parse_ok(def, "2"), (Wire{0, 0, 0, 2}));
  EXPECT_EQ(parse_ok(def, "0x10"), (Wire{0, 0, 0, 16}));
  EXPECT_EQ(parse_ok(def, "framed-user"), (Wire{0, 0, 0, 2}));
  expect_round_trip(def, "4294967295", {255, 255, 255, 255});
  EXPECT_NE(parse_error(def, "4294967296").find("out of range"), std::string::npos);
  EXPECT_NE(parse_error(def, "Outbound").find("VALUE name"), std::string::npos);
  parse_error(def, "12abc");
  parse_error(def, "");
  parse_error(def, "-1");
  parse_error(def, "0x");
  // Wrong wire length: hex.
  EXPECT_EQ(format_value(def, Wire{1, 2}), "0x0102");
}

TEST(ValueInteger, NumbersWinOverValueNamesThatLookLikeNumbers) {
  AttributeDef def = make(DataType::kInteger);
  def.values = {{"56", 1}, {"3Com-Wireless", 24}};
  // As in FreeRADIUS, "56" is the number 56; so 1 is printed as a number.
  EXPECT_EQ(parse_ok(def, "56"), (Wire{0, 0, 0, 56}));
  EXPECT_EQ(format_value(def, Wire{0, 0, 0, 1}), "1");
  // A name may still start with a digit.
  expect_round_trip(def, "3Com-Wireless", {0, 0, 0, 24});
}

TEST(ValueByteAndShort, AreRangeChecked) {
  const AttributeDef byte = make(DataType::kByte);
  expect_round_trip(byte, "255", {255});
  parse_error(byte, "256");
  const AttributeDef shortint = make(DataType::kShort);
  expect_round_trip(shortint, "65535", {255, 255});
  expect_round_trip(shortint, "258", {1, 2});
  parse_error(shortint, "65536");
}

TEST(ValueSigned, AcceptsNegativeNumbers) {
  const AttributeDef def = make(DataType::kSigned);
  expect_round_trip(def, "-1", {255, 255, 255, 255});
  expect_round_trip(def, "-2147483648", {0x80, 0, 0, 0});
  expect_round_trip(def, "2147483647", {0x7F, 255, 255, 255});
  parse_error(def, "2147483648");
  parse_error(def, "-2147483649");
  parse_error(def, "-");
  AttributeDef named = make(DataType::kSigned);
  named.values = {{"Minus-One", 0xFFFFFFFF}, {"Plus-Two", 2}};
  expect_round_trip(named, "Minus-One", {255, 255, 255, 255});
  expect_round_trip(named, "Plus-Two", {0, 0, 0, 2});
  parse_error(named, "Minus-Two");
}

TEST(ValueInteger64, HoldsSixtyFourBits) {
  const AttributeDef def = make(DataType::kInteger64);
  expect_round_trip(def, "18446744073709551615", Wire(8, 255));
  expect_round_trip(def, "4294967296", {0, 0, 0, 1, 0, 0, 0, 0});
  parse_error(def, "18446744073709551616");
}

TEST(ValueDate, ParsesSecondsAndDateStrings) {
  const AttributeDef def = make(DataType::kDate);
  // 2024-01-01T00:00:00Z is 1704067200 = 0x65920080.
  expect_round_trip(def, "Jan  1 2024 00:00:00 UTC", {0x65, 0x92, 0x00, 0x80});
  EXPECT_EQ(parse_ok(def, "1704067200"), (Wire{0x65, 0x92, 0x00, 0x80}));
  EXPECT_EQ(parse_ok(def, "Jan 1 2024"), (Wire{0x65, 0x92, 0x00, 0x80}));
  EXPECT_EQ(parse_ok(def, "1 January 2024 00:00"), (Wire{0x65, 0x92, 0x00, 0x80}));
  EXPECT_EQ(format_value(def, Wire{0, 0, 0, 0}), "Jan  1 1970 00:00:00 UTC");
  // 2000-02-29T12:34:56Z is 951827696, across a leap day in a century year.
  expect_round_trip(def, "Feb 29 2000 12:34:56 UTC", {0x38, 0xBB, 0xBC, 0xF0});
  expect_round_trip(def, "Dec 31 2105 23:59:59 UTC", {0xFF, 0xCE, 0xDD, 0x7F});
  expect_round_trip(def, "Feb  7 2106 06:28:15 UTC", {255, 255, 255, 255});
  parse_error(def, "Feb 30 2024");
  parse_error(def, "Jan 1 1969");
  parse_error(def, "Jan 1 2024 25:00");
  parse_error(def, "Jan 1 2024 00:00 CET");
  parse_error(def, "yesterday");
  parse_error(def, "4294967296");
}

TEST(ValueEther, ParsesColonOrDashSeparated) {
  const AttributeDef def = make(DataType::kEther);
  expect_round_trip(def, "00:11:22:aa:bb:cc", {0x00, 0x11, 0x22, 0xaa, 0xbb, 0xcc});
  EXPECT_EQ(parse_ok(def, "00-11-22-AA-BB-CC"), (Wire{0x00, 0x11, 0x22, 0xaa, 0xbb, 0xcc}));
  parse_error(def, "00:11:22:aa:bb");
  parse_error(def, "00:11:22:aa:bb:cg");
  parse_error(def, "00:11:22:aa:bb:cc:dd");
}

TEST(ValueIfid, ParsesFourGroups) {
  const AttributeDef def = make(DataType::kIfid);
  expect_round_trip(def, "0011:2233:4455:6677", {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77});
  EXPECT_EQ(parse_ok(def, "11:2233:4455:6677"), (Wire{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77}));
  parse_error(def, "0011:2233:4455");
  parse_error(def, "0011:2233:4455:66777");
  parse_error(def, "0011:2233:4455:6677:8899");
  parse_error(def, "0011::4455:6677");
}

TEST(ValueString, IsTakenAsIs) {
  const AttributeDef def = make(DataType::kString);
  expect_round_trip(def, "bob", {'b', 'o', 'b'});
  expect_round_trip(def, "0x41", {'0', 'x', '4', '1'});
  expect_round_trip(def, "", {});
}

TEST(ValueOctets, AreHexOrRawText) {
  const AttributeDef def = make(DataType::kOctets);
  expect_round_trip(def, "0x0102ff", {0x01, 0x02, 0xff});
  expect_round_trip(def, "0x", {});
  EXPECT_EQ(parse_ok(def, "0X0A"), (Wire{0x0a}));
  EXPECT_EQ(parse_ok(def, "abc"), (Wire{'a', 'b', 'c'}));
  EXPECT_EQ(format_value(def, Wire{'a', 'b', 'c'}), "0x616263");
  EXPECT_NE(parse_error(def, "0x123").find("odd"), std::string::npos);
  EXPECT_NE(parse_error(def, "0x1g").find("hex digit"), std::string::npos);
}

TEST(ValueOctets, FixedLengthIsEnforced) {
  AttributeDef def = make(DataType::kOctets);
  def.fixed_length = 2;
  EXPECT_EQ(parse_ok(def, "0x0102"), (Wire{1, 2}));
  EXPECT_NE(parse_error(def, "0x010203").find("exactly 2"), std::string::npos);
}

TEST(ValueAbinary, IsKeptAsOctets) {
  const AttributeDef def = make(DataType::kAbinary);
  expect_round_trip(def, "0x0101", {1, 1});
}

TEST(ValueComboIp, ChoosesTheFamilyFromTheText) {
  const AttributeDef def = make(DataType::kComboIp);
  expect_round_trip(def, "192.0.2.1", {192, 0, 2, 1});
  EXPECT_EQ(parse_ok(def, "2001:db8::1").size(), 16u);
  EXPECT_EQ(format_value(def, parse_ok(def, "2001:db8::1")), "2001:db8::1");
  EXPECT_EQ(format_value(def, Wire{1, 2, 3}), "0x010203");
}

TEST(ValueBuiltin, UsesTheBuiltinValueNames) {
  auto dictionary = Dictionary::builtin();
  const AttributeDef& status = *dictionary->find("Acct-Status-Type");
  EXPECT_EQ(parse_ok(status, "Interim-Update"), (Wire{0, 0, 0, 3}));
  EXPECT_EQ(parse_ok(status, "Alive"), (Wire{0, 0, 0, 3}));
  EXPECT_EQ(format_value(status, Wire{0, 0, 0, 3}), "Interim-Update");
  EXPECT_EQ(format_value(status, Wire{0, 0, 0, 99}), "99");
  const AttributeDef& tunnel_type = *dictionary->find("Tunnel-Type");
  EXPECT_EQ(parse_ok(tunnel_type, "VLAN"), (Wire{0, 0, 0, 13}));
}

}  // namespace
}  // namespace rw::radius
