// Tests of the users-file reader: realistic files, every error with its
// position, $INCLUDE and the name index.
#include "config/users_file.h"

#include <gtest/gtest.h>

#include "config/temp_dir_for_test.h"

namespace rw::config {
namespace {

constexpr std::string_view kRealistic = R"(# mods-config/files/authorize -- campus network users
#
# Check items on the first line, reply items on the indented lines below.

# Alice: PAP, staff VLAN (RFC 3580 §3.31 tunnel attributes, tag 1).
alice	Cleartext-Password := "wonderland"
	Reply-Message = "Hello, Alice",
	Tunnel-Type:1 = VLAN,
	Tunnel-Medium-Type:1 = IEEE-802,
	Tunnel-Private-Group-Id:1 = "100"

bob	NT-Password := 8846F7EAEE8FB117AD06BDD830B7586C
	Session-Timeout = 3600

"john smith"	Crypt-Password := "$6$saltsalt$hash", Simultaneous-Use := 1
	Framed-IP-Address = 10.10.0.5,
	MS-Primary-DNS-Server = 10.0.0.53

# MAB: the switch sends the MAC address as User-Name.
00-11-22-33-44-55	Cleartext-Password := "00-11-22-33-44-55", NAS-Port-Type == Ethernet
	Tunnel-Type = VLAN, Tunnel-Medium-Type = IEEE-802,
	Tunnel-Private-Group-Id = 30

blocked	Auth-Type := Reject
	Reply-Message = 'Account disabled'

# Guests get short sessions, whatever else applies.
DEFAULT	Called-Station-Id =~ ":guest$"
	Session-Timeout := 1800,
	Fall-Through = Yes

DEFAULT	Service-Type == Framed-User, Framed-Protocol == PPP
	Framed-MTU = 1500,
	Fall-Through = yes

DEFAULT	NAS-Port-Type == Ethernet, Calling-Station-Id !* ANY
	Reply-Message := "no MAC"

DEFAULT
	Idle-Timeout = 600
)";

std::shared_ptr<const radius::Dictionary> dictionary() { return radius::Dictionary::builtin(); }

UsersFile parse_ok(std::string_view text) {
  auto parsed = UsersFile::parse(text, "users", dictionary());
  EXPECT_TRUE(parsed.has_value()) << parsed.error().to_string();
  if (!parsed) std::abort();
  return std::move(*parsed);
}

std::string error_of(std::string_view text, const UsersLimits& limits = {}) {
  auto parsed = UsersFile::parse(text, "users", dictionary(), limits);
  EXPECT_FALSE(parsed.has_value()) << text;
  return parsed ? std::string() : parsed.error().to_string();
}

std::vector<std::uint8_t> bytes(std::initializer_list<int> values) {
  std::vector<std::uint8_t> out;
  for (int v : values) out.push_back(static_cast<std::uint8_t>(v));
  return out;
}

std::vector<std::uint8_t> text_bytes(std::string_view text) { return {text.begin(), text.end()}; }

TEST(UsersFile, ParsesARealisticFile) {
  UsersFile users = parse_ok(kRealistic);
  ASSERT_EQ(users.entries().size(), 9u);
  EXPECT_TRUE(users.warnings().empty());

  const UserEntry& alice = users.entries()[0];
  EXPECT_EQ(alice.name, "alice");
  EXPECT_FALSE(alice.is_default);
  EXPECT_EQ(alice.line, 6);
  EXPECT_EQ(users.file_of(alice), "users");
  ASSERT_EQ(alice.check.size(), 1u);
  EXPECT_EQ(alice.check[0].def->name, "Cleartext-Password");
  EXPECT_EQ(alice.check[0].op, UsersOperator::kSet);
  EXPECT_EQ(alice.check[0].value, text_bytes("wonderland"));
  ASSERT_EQ(alice.reply.size(), 4u);
  EXPECT_EQ(alice.reply[1].def->name, "Tunnel-Type");
  EXPECT_EQ(alice.reply[1].tag, 1);
  EXPECT_EQ(alice.reply[1].value, bytes({0, 0, 0, 13}));
  EXPECT_EQ(alice.reply[3].def->name, "Tunnel-Private-Group-Id");
  EXPECT_EQ(alice.reply[3].value, text_bytes("100"));
  EXPECT_EQ(alice.reply[3].line, 10);
  EXPECT_EQ(alice.reply[3].column, 2);
  EXPECT_FALSE(alice.fall_through);

  const UserEntry& bob = users.entries()[1];
  ASSERT_EQ(bob.check.size(), 1u);
  EXPECT_EQ(bob.check[0].value, bytes({0x88, 0x46, 0xF7, 0xEA, 0xEE, 0x8F, 0xB1, 0x17, 0xAD, 0x06, 0xBD, 0xD8,
                                       0x30, 0xB7, 0x58, 0x6C}));

  const UserEntry& john = users.entries()[2];
  EXPECT_EQ(john.name, "john smith");
  ASSERT_EQ(john.check.size(), 2u);
  EXPECT_EQ(john.check[0].value, text_bytes("$6$saltsalt$hash"));
  EXPECT_EQ(john.check[1].value, bytes({0, 0, 0, 1}));
  ASSERT_EQ(john.reply.size(), 2u);
  EXPECT_EQ(john.reply[0].value, bytes({10, 10, 0, 5}));
  EXPECT_EQ(john.reply[1].def->vendor, 311u);  // Microsoft, RFC 2548.

  const UserEntry& mab = users.entries()[3];
  EXPECT_EQ(mab.name, "00-11-22-33-44-55");
  EXPECT_EQ(mab.check[1].op, UsersOperator::kEqual);
  EXPECT_EQ(mab.reply.size(), 3u);

  EXPECT_EQ(users.entries()[4].check[0].value, bytes({0, 0, 0, 4}));  // Auth-Type Reject.
  EXPECT_EQ(users.entries()[4].reply[0].value, text_bytes("Account disabled"));

  const UserEntry& guests = users.entries()[5];
  EXPECT_TRUE(guests.is_default);
  EXPECT_TRUE(guests.fall_through);
  ASSERT_EQ(guests.reply.size(), 1u);  // Fall-Through is not a reply item.
  ASSERT_NE(guests.check[0].regex, nullptr);
  EXPECT_TRUE(guests.check[0].regex->matches(as_bytes("00-aa-bb-cc-dd-ee:guest")));
  EXPECT_FALSE(guests.check[0].regex->matches(as_bytes("00-aa-bb-cc-dd-ee:staff")));

  EXPECT_TRUE(users.entries()[6].fall_through);
  EXPECT_EQ(users.entries()[7].check[1].op, UsersOperator::kAbsent);
  EXPECT_TRUE(users.entries()[8].check.empty());
  EXPECT_EQ(users.entries()[8].reply.size(), 1u);
}

TEST(UsersFile, ResolvesVendorAttributesFromALoadedDictionary) {
  auto cisco = radius::Dictionary::parse(
      "VENDOR Cisco 9\nBEGIN-VENDOR Cisco\nATTRIBUTE Cisco-AVPair 1 string\nEND-VENDOR Cisco\n",
      "dictionary.cisco");
  ASSERT_TRUE(cisco) << cisco.error().to_string();
  auto parsed =
      UsersFile::parse("DEFAULT Huntgroup-Name !* ANY\n", "users", *cisco);  // Placement errors still apply.
  ASSERT_FALSE(parsed);
  parsed = UsersFile::parse(
      "netadmin Cleartext-Password := \"x\"\n\tCisco-AVPair = \"shell:priv-lvl=15\",\n"
      "\tcisco-avpair += 'ip:inacl#1=permit ip any any'\n",
      "users", *cisco);
  ASSERT_TRUE(parsed) << parsed.error().to_string();
  const UserEntry& entry = parsed->entries()[0];
  ASSERT_EQ(entry.reply.size(), 2u);
  EXPECT_EQ(entry.reply[0].def->vendor, 9u);
  EXPECT_EQ(entry.reply[0].def->name, "Cisco-AVPair");
  EXPECT_EQ(entry.reply[0].value, text_bytes("shell:priv-lvl=15"));
  EXPECT_EQ(entry.reply[1].value, text_bytes("ip:inacl#1=permit ip any any"));
  EXPECT_EQ(error_of("netadmin\n\tCisco-AVPair = \"x\"\n"), "users:2:2: unknown attribute 'Cisco-AVPair'");
}

TEST(UsersFile, IndexesEntriesByExactName) {
  UsersFile users = parse_ok(
      "alice Cleartext-Password := \"a\"\nDEFAULT\n\tIdle-Timeout = 1\n"
      "alice Auth-Type := Reject\nAlice Cleartext-Password := \"b\"\nDEFAULT\n");
  auto alice = users.entries_named("alice");
  ASSERT_EQ(alice.size(), 2u);
  EXPECT_EQ(alice[0], 0u);
  EXPECT_EQ(alice[1], 2u);
  ASSERT_EQ(users.entries_named("Alice").size(), 1u);
  EXPECT_TRUE(users.entries_named("ALICE").empty());
  EXPECT_TRUE(users.entries_named("DEFAULT").empty());
  ASSERT_EQ(users.default_entries().size(), 2u);
  EXPECT_EQ(users.default_entries()[0], 1u);
  EXPECT_EQ(users.default_entries()[1], 4u);
}

TEST(UsersFile, ReadsCheckLineAssignAsComparisonWithAWarning) {
  UsersFile users = parse_ok("DEFAULT NAS-IP-Address = 10.0.0.1\n\tIdle-Timeout = 1\n");
  EXPECT_EQ(users.entries()[0].check[0].op, UsersOperator::kEqual);
  ASSERT_EQ(users.warnings().size(), 1u);
  EXPECT_EQ(users.warnings()[0].to_string(),
            "users:1:9: 'NAS-IP-Address =' on the check line compares the request attribute; read as "
            "'NAS-IP-Address =='");
}

TEST(UsersFile, AcceptsEveryOperatorWhereItBelongs) {
  UsersFile users = parse_ok(
      "DEFAULT NAS-Port == 1, NAS-Port != 2, NAS-Port < 3, NAS-Port <= 4, NAS-Port > 5, NAS-Port >= 6, "
      "User-Name =~ \"^a\", User-Name !~ 'b$', Class =* ANY, State !* ANY, Auth-Type := Accept, "
      "Simultaneous-Use = 1, Cleartext-Password += \"x\"\n"
      "\tReply-Message := \"a\", Reply-Message = \"b\", Reply-Message += \"c\"\n");
  const UserEntry& entry = users.entries()[0];
  ASSERT_EQ(entry.check.size(), 13u);
  std::vector<UsersOperator> ops;
  for (const UsersItem& item : entry.check) ops.push_back(item.op);
  EXPECT_EQ(ops,
            (std::vector<UsersOperator>{
                UsersOperator::kEqual, UsersOperator::kNotEqual, UsersOperator::kLess,
                UsersOperator::kLessEqual, UsersOperator::kGreater, UsersOperator::kGreaterEqual,
                UsersOperator::kRegexMatch, UsersOperator::kRegexNoMatch, UsersOperator::kPresent,
                UsersOperator::kAbsent, UsersOperator::kSet, UsersOperator::kAssign, UsersOperator::kAdd}));
  EXPECT_TRUE(entry.check[8].value.empty());
  EXPECT_EQ(entry.reply[0].op, UsersOperator::kSet);
  EXPECT_EQ(entry.reply[1].op, UsersOperator::kAssign);
  EXPECT_EQ(entry.reply[2].op, UsersOperator::kAdd);
}

TEST(UsersFile, KeepsRegexEscapesForTheRegexCompiler) {
  UsersFile users = parse_ok("DEFAULT User-Name =~ \"^[a-z]+\\.[a-z]+@example\\.com$\"\n");
  const UsersItem& item = users.entries()[0].check[0];
  EXPECT_EQ(item.value, text_bytes(R"(^[a-z]+\.[a-z]+@example\.com$)"));
  EXPECT_TRUE(item.regex->matches(as_bytes("jane.doe@example.com")));
  EXPECT_FALSE(item.regex->matches(as_bytes("jane.doe@exampleXcom")));
}

TEST(UsersFile, ReportsEveryErrorWithItsPosition) {
  EXPECT_EQ(error_of("alice Cleartext-Pasword := \"x\"\n"),
            "users:1:7: unknown attribute 'Cleartext-Pasword'");
  EXPECT_EQ(error_of("alice Cleartext-Password -= \"x\"\n"),
            "users:1:26: operator -= is not supported in users files");
  EXPECT_EQ(error_of("alice Cleartext-Password \"x\"\n"),
            "users:1:26: expected an operator after Cleartext-Password, found quoted string 'x'");
  EXPECT_EQ(error_of("alice\n\tFramed-IP-Address = 10.0.0.300\n"),
            "users:2:22: bad value for Framed-IP-Address (ipaddr): " +
                std::string(radius::parse_value(*radius::Dictionary::builtin()->find("Framed-IP-Address"),
                                                "10.0.0.300")
                                .error()));
  EXPECT_EQ(error_of("alice\n\tService-Type = Framed-Usr\n").substr(0, 47),
            "users:2:17: bad value for Service-Type (integer");
  EXPECT_EQ(error_of("alice Cleartext-Password := \"wonderland\n"), "users:1:29: unterminated quoted string");
  EXPECT_EQ(
      error_of("alice Cleartext-Password := \"x\", Reply-Message := \"hi\"\n"),
      "users:1:34: Reply-Message := on the check line would set a RADIUS attribute in the control list; put "
      "it on an indented reply line, or compare with ==");
  EXPECT_EQ(
      error_of("alice\n\tCleartext-Password := \"x\"\n"),
      "users:2:2: Cleartext-Password is a check item, not a reply attribute; it must go on the first line "
      "with the other check items");
  EXPECT_EQ(error_of("alice\n\tNAS-Port == 1\n"),
            "users:2:2: comparison NAS-Port == in the reply items; comparisons belong on the first line");
  EXPECT_EQ(error_of("alice Fall-Through = Yes\n"), "users:1:7: Fall-Through belongs in the reply items");
  EXPECT_EQ(error_of("alice\n\tFall-Through == Yes\n"), "users:2:2: Fall-Through takes = Yes or = No");
  EXPECT_EQ(
      error_of("alice Cleartext-Password := \"x\"\n\tReply-Message = \"a\"\n\tSession-Timeout = 1\n"),
      "users:3:2: indented line outside an entry: reply items follow the check line, and every reply line "
      "but the last ends with ','");
  EXPECT_EQ(error_of("alice\n\tReply-Message = \"a\",\nbob\n"),
            "users:3:1: entry alice ends its reply items with ',' but no indented reply item follows");
  EXPECT_EQ(error_of("alice\n\tReply-Message = \"a\","),
            "users:2:22: entry alice ends its reply items with ',' but no indented reply item follows");
  EXPECT_EQ(error_of("alice Cleartext-Password := \"x\",\n\tReply-Message = \"a\"\n"),
            "users:1:1: the check items of alice end with ','; check items must all be on the first line");
  EXPECT_EQ(error_of("alice Cleartext-Password := \"x\" Auth-Type := Accept\n"),
            "users:1:33: expected ',' between items, found word 'Auth-Type'");
  EXPECT_EQ(error_of("alice\n\tReply-Message:1 = \"a\"\n"), "users:2:2: Reply-Message does not take a tag");
  EXPECT_EQ(error_of("alice\n\tTunnel-Type:32 = VLAN\n"),
            "users:2:2: bad tag in 'Tunnel-Type:32' (expected 0 to 31)");
  EXPECT_EQ(error_of("DEFAULT User-Name =~ \"(unclosed\"\n").substr(0, 44),
            "users:1:22: bad regular expression: Unmatche");
  EXPECT_EQ(error_of("DEFAULT User-Name =~ \"(a)\\1\"\n"),
            "users:1:22: bad regular expression: back-references are not supported");
  EXPECT_EQ(error_of("DEFAULT User-Name =~ \"((a{200}){200}){200}\"\n"),
            "users:1:22: bad regular expression: the expression is too large once expanded");
  EXPECT_EQ(error_of("DEFAULT User-Name =~ \"x" + std::string(40, '+') + "\"\n"),
            "users:1:22: bad regular expression: stacked quantifiers (such as a++ or a*+) are not supported");
  EXPECT_EQ(error_of("DEFAULT User-Name =~ \"a{1000}\"\n"),
            "users:1:22: bad regular expression: repetition counts above 255 are not supported");
  EXPECT_EQ(
      error_of("alice User-Password == \"x\"\n"),
      "users:1:7: User-Password on the check line: write the password as Cleartext-Password := \"...\"");
  EXPECT_EQ(error_of("DEFAULT Group == \"staff\"\n"),
            "users:1:9: Group is computed by FreeRADIUS modules that radiusward does not have; it cannot be "
            "compared");
  EXPECT_EQ(error_of("alice\n\tReply-Message = \"Hello, %{User-Name}\"\n"),
            "users:2:18: %{...} expansions are not supported; write the value in single quotes to send it "
            "literally");
  EXPECT_EQ(error_of("alice\n\tReply-Message = \"" + std::string(254, 'x') + "\"\n"),
            "users:2:18: value of Reply-Message is 254 bytes; at most 253 fit in one attribute");
  EXPECT_EQ(error_of("alice\n\tMS-Primary-DNS-Server = 10.0.0.1\n\tIdle-Timeout = 1\n").substr(0, 10),
            "users:3:2:");
  EXPECT_EQ(error_of("$INCLUDE users.d/\n"), "users:1:1: $INCLUDE is not allowed in text parsed from memory");
  EXPECT_EQ(error_of("\tReply-Message = \"a\"\n").substr(0, 43),
            "users:1:2: indented line outside an entry: ");
  EXPECT_EQ(error_of("alice ,\n"), "users:1:7: expected an attribute name, found ','");
  EXPECT_EQ(error_of(", alice\n"), "users:1:1: expected a user name or DEFAULT, found ','");
  EXPECT_EQ(error_of("alice\n\tReply-Message =\n"), "users:2:17: expected a value after Reply-Message =");
}

TEST(UsersFile, EnforcesItsLimits) {
  UsersLimits few;
  few.entries_max = 2;
  few.items_per_entry_max = 2;
  EXPECT_EQ(error_of("a\nb\nc\n", few), "users:3:1: more than 2 entries");
  EXPECT_EQ(error_of("a\n\tIdle-Timeout = 1, Session-Timeout = 2, Reply-Message = \"x\"\n", few),
            "users:2:41: more than 2 items in one list of entry a");
  UsersLimits short_regex;
  short_regex.regex_bytes_max = 4;
  EXPECT_EQ(error_of("DEFAULT User-Name =~ \"abcde\"\n", short_regex),
            "users:1:22: regular expression longer than 4 bytes");
}

TEST(UsersRegex, MatchesWithoutATerminatingNul) {
  auto regex = UsersRegex::compile("^ab+c$");
  ASSERT_TRUE(regex);
  std::string buffer = "abbbcXYZ";
  EXPECT_TRUE((*regex)->matches(as_bytes(std::string_view(buffer).substr(0, 5))));
  EXPECT_FALSE((*regex)->matches(as_bytes(std::string_view(buffer))));
  EXPECT_FALSE((*regex)->matches({}));
  std::string with_nul("ab\0cd", 5);
  auto tail = UsersRegex::compile("cd$");
  ASSERT_TRUE(tail);
  EXPECT_TRUE((*tail)->matches(as_bytes(with_nul)));
  auto empty = UsersRegex::compile("^$");
  ASSERT_TRUE(empty);
  EXPECT_TRUE((*empty)->matches({}));
}

class UsersFileIncludes : public TempDirTest {};

TEST_F(UsersFileIncludes, ExpandsIncludesInPlace) {
  std::string main = write("users",
                           "alice Cleartext-Password := \"a\"\n$INCLUDE users.d/\nDEFAULT\n"
                           "$INCLUDE ${confdir}/x\n");
  write("users.d/b", "bob Cleartext-Password := \"b\"\n\tFall-Through = Yes\n");
  write("users.d/a", "carol Cleartext-Password := \"c\"\n");
  auto loaded = UsersFile::load(main, dictionary());
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().to_string(),
            main + ":4:1: variables such as ${confdir} are not expanded in $INCLUDE; write the path");

  write("users", "alice Cleartext-Password := \"a\"\n$INCLUDE users.d/\nDEFAULT\n");
  loaded = UsersFile::load(main, dictionary());
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  ASSERT_EQ(loaded->entries().size(), 4u);
  EXPECT_EQ(loaded->entries()[0].name, "alice");
  EXPECT_EQ(loaded->entries()[1].name, "carol");
  EXPECT_EQ(loaded->entries()[2].name, "bob");
  EXPECT_EQ(loaded->entries()[3].name, "DEFAULT");
  EXPECT_EQ(loaded->file_of(loaded->entries()[1]), (dir_ / "users.d/a").string());
  EXPECT_EQ(loaded->file_of(loaded->entries()[3]), main);
  EXPECT_EQ(loaded->entries()[3].line, 3);
  EXPECT_EQ(loaded->entries_named("bob")[0], 2u);
}

TEST_F(UsersFileIncludes, ReportsErrorsInIncludedFiles) {
  std::string main = write("users", "$INCLUDE more\n");
  std::string more = write("more", "# comment\nbob Cleartext-Password := \"b\", Bogus == 1\n");
  auto loaded = UsersFile::load(main, dictionary());
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().to_string(), more + ":2:32: unknown attribute 'Bogus'");
}

TEST_F(UsersFileIncludes, RefusesSelfInclusion) {
  std::string main = write("users", "$INCLUDE users\n");
  auto loaded = UsersFile::load(main, dictionary());
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().to_string(), main + ":1:1: $INCLUDE of " + main + " includes itself");
}

TEST_F(UsersFileIncludes, RefusesOversizedFiles) {
  std::string main = write("users", "alice Cleartext-Password := \"a\"\n");
  UsersLimits limits;
  limits.include.file_bytes_max = 10;
  auto loaded = UsersFile::load(main, dictionary(), limits);
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().to_string().find("is larger than 10 bytes"), std::string::npos);
}

TEST(UsersFile, LoadsTheDemoFile) {
  std::string path = std::string(RW_SOURCE_ROOT) + "/etc/demo/users";
  auto loaded = UsersFile::load(path, dictionary());
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_EQ(loaded->entries_named("alice").size(), 1u);
  EXPECT_EQ(loaded->entries_named("bob").size(), 1u);
  EXPECT_EQ(loaded->entries_named("carol").size(), 1u);
  EXPECT_FALSE(loaded->default_entries().empty());
}

}  // namespace
}  // namespace rw::config

namespace rw::config {
namespace {

TEST(UsersRegexCompile, RefusesStackedQuantifiers) {
  for (std::string_view pattern : {"a++", "x*+", "[a-]+@ex++!*+++++++++++-P+++++]", "a{2}*", "a?+"}) {
    auto compiled = UsersRegex::compile(pattern);
    EXPECT_FALSE(compiled.has_value()) << pattern;
  }
  EXPECT_TRUE(UsersRegex::compile("^[a-z]+@example\\.com$").has_value());
  EXPECT_TRUE(UsersRegex::compile("(ab)+c*d?e{2,3}").has_value());
}

}  // namespace
}  // namespace rw::config
