// Tests of the FreeRADIUS dictionary file reader: each directive, the
// conflict rules, error positions, $INCLUDE, and Debian's freeradius-common
// dictionaries loaded whole.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "radius/dictionary.h"

namespace rw::radius {
namespace {

std::shared_ptr<const Dictionary> parse_ok(std::string_view text) {
  auto parsed = Dictionary::parse(text, "test.dict");
  EXPECT_TRUE(parsed.has_value()) << (parsed ? "" : parsed.error().to_string());
  return parsed ? *parsed : Dictionary::builtin();
}

// The error as "file:line:col: message".
std::string parse_error(std::string_view text) {
  auto parsed = Dictionary::parse(text, "test.dict");
  EXPECT_FALSE(parsed.has_value()) << text;
  return parsed ? std::string() : parsed.error().to_string();
}

TEST(DictionaryFile, ReadsAttributesOfEveryType) {
  auto dictionary = parse_ok(
      "# A comment line\n"
      "ATTRIBUTE\tTest-String\t3000\tstring\n"
      "ATTRIBUTE Test-Ip 3001 ipaddr   # trailing comment\n"
      "ATTRIBUTE Test-Octets 3002 octets[16]\n"
      "ATTRIBUTE Test-Short 3003 short\r\n"
      "ATTRIBUTE Test-Combo 3004 combo-ip\n"
      "ATTRIBUTE Test-Upper 3005 String\n");
  const AttributeDef* string = dictionary->find("Test-String");
  ASSERT_NE(string, nullptr);
  EXPECT_EQ(string->type, 3000u);
  EXPECT_EQ(string->data_type, DataType::kString);
  EXPECT_TRUE(string->internal);  // Vendor 0 above 255: never on the wire.
  EXPECT_EQ(dictionary->find("Test-Ip")->data_type, DataType::kIpAddr);
  EXPECT_EQ(dictionary->find("Test-Octets")->fixed_length, 16u);
  EXPECT_EQ(dictionary->find("Test-Short")->data_type, DataType::kShort);
  EXPECT_EQ(dictionary->find("Test-Combo")->data_type, DataType::kComboIp);
  EXPECT_EQ(dictionary->find("Test-Upper")->data_type, DataType::kString);
  // The built-in attributes are still there.
  EXPECT_NE(dictionary->find("User-Name"), nullptr);
}

TEST(DictionaryFile, ReadsFlags) {
  auto dictionary = parse_ok(
      "VENDOR Test 99999\n"
      "BEGIN-VENDOR Test\n"
      "ATTRIBUTE Test-Tagged 1 string has_tag,encrypt=2\n"
      "ATTRIBUTE Test-Hidden 2 string encrypt=1\n"
      "ATTRIBUTE Test-Array 3 ipaddr array\n"
      "ATTRIBUTE Test-Concat 4 octets concat\n"
      "ATTRIBUTE Test-Secret 5 string secret\n"
      "ATTRIBUTE Test-Virtual 6 integer virtual\n"
      "ATTRIBUTE Test-Ascend 7 string encrypt=3\n"
      "END-VENDOR Test\n");
  const AttributeDef* tagged = dictionary->find("Test-Tagged");
  EXPECT_TRUE(tagged->has_tag);
  EXPECT_EQ(tagged->encryption, Encryption::kTunnelPassword);
  EXPECT_EQ(tagged->vendor, 99999u);
  EXPECT_EQ(dictionary->find("Test-Hidden")->encryption, Encryption::kUserPassword);
  EXPECT_TRUE(dictionary->find("Test-Array")->array);
  EXPECT_TRUE(dictionary->find("Test-Concat")->concat);
  EXPECT_TRUE(dictionary->find("Test-Secret")->secret);
  EXPECT_TRUE(dictionary->find("Test-Virtual")->internal);
  EXPECT_FALSE(dictionary->find("Test-Secret")->internal);
  EXPECT_EQ(dictionary->find("Test-Ascend")->encryption, Encryption::kAscendSecret);
}

TEST(DictionaryFile, ReadsVendorsAndTheirFormats) {
  auto dictionary = parse_ok(
      "VENDOR Wide 4000 format=2,2\n"
      "VENDOR Continued 4001 format=1,1,c\n"
      "VENDOR OldStyle 4002\n"
      "BEGIN-VENDOR Wide\n"
      "ATTRIBUTE Wide-Big 300 integer\n"
      "END-VENDOR Wide\n"
      "ATTRIBUTE Old-Style-Attr 5 string OldStyle\n");
  const VendorDef* wide = dictionary->find_vendor("wide");
  ASSERT_NE(wide, nullptr);
  EXPECT_EQ(wide->number, 4000u);
  EXPECT_EQ(wide->type_width, 2);
  EXPECT_EQ(wide->length_width, 2);
  EXPECT_TRUE(dictionary->find_vendor(4001)->continuation);
  EXPECT_EQ(dictionary->find(4000, 300)->name, "Wide-Big");
  EXPECT_EQ(dictionary->find(4002, 5)->name, "Old-Style-Attr");
}

TEST(DictionaryFile, ValueMayComeBeforeItsAttribute) {
  auto dictionary = parse_ok(
      "VALUE Test-Mode Fast 1\n"
      "VALUE Test-Mode Slow 0x02\n"
      "ATTRIBUTE Test-Mode 3000 integer\n"
      "VALUE Test-Mode Off 0\n"
      "VALUE Test-Mode Fast 1\n");  // Repeated VALUEs are accepted.
  const AttributeDef* mode = dictionary->find("Test-Mode");
  EXPECT_EQ(mode->value_by_name("fast"), 1u);
  EXPECT_EQ(mode->value_by_name("Slow"), 2u);
  EXPECT_EQ(mode->name_of_value(0), "Off");
}

TEST(DictionaryFile, ValuesAreSharedByAliasesOfANumber) {
  auto dictionary = parse_ok(
      "ATTRIBUTE User-Service-Type 6 integer\n"
      "VALUE User-Service-Type Shell-User 6\n");
  EXPECT_EQ(dictionary->find("Service-Type")->value_by_name("Shell-User"), 6u);
  EXPECT_EQ(dictionary->find("User-Service-Type")->value_by_name("Framed-User"), 2u);
  // The built-in name, defined first, stays the printed one.
  EXPECT_EQ(dictionary->find("Service-Type")->name_of_value(6), "Administrative-User");
  // The latest definition is found by number.
  EXPECT_EQ(dictionary->find(0, 6)->name, "User-Service-Type");
}

TEST(DictionaryFile, RedefiningANameTakesItsNumberBack) {
  auto dictionary = parse_ok(
      "ATTRIBUTE Client-Id 4 ipaddr\n"
      "ATTRIBUTE NAS-IP-Address 4 ipaddr\n");
  EXPECT_EQ(dictionary->find(0, 4)->name, "NAS-IP-Address");
  EXPECT_EQ(dictionary->find("Client-Id")->type, 4u);
}

TEST(DictionaryFile, ReadsTlvBlocksAndDottedNumbers) {
  auto dictionary = parse_ok(
      "VENDOR Tlvs 5000 format=1,1,c\n"
      "BEGIN-VENDOR Tlvs\n"
      "ATTRIBUTE Tlvs-Outer 1 tlv\n"
      "BEGIN-TLV Tlvs-Outer\n"
      "ATTRIBUTE Tlvs-Inner 1 tlv\n"
      "BEGIN-TLV Tlvs-Inner\n"
      "ATTRIBUTE Tlvs-Leaf 7 integer\n"
      "END-TLV Tlvs-Inner\n"
      "ATTRIBUTE Tlvs-Second 2 string\n"
      "END-TLV Tlvs-Outer\n"
      "ATTRIBUTE Tlvs-Dotted 1.1.8 ipaddr\n"
      "END-VENDOR Tlvs\n"
      "ATTRIBUTE Std-Container 173 tlv\n"
      "ATTRIBUTE Std-Child 173.1 integer\n");
  const AttributeDef* outer = dictionary->find(5000, 1);
  ASSERT_NE(outer, nullptr);
  const AttributeDef* inner = dictionary->find_child(*outer, 1);
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->name, "Tlvs-Inner");
  EXPECT_EQ(inner->parent, outer);
  EXPECT_EQ(inner->vendor, 5000u);
  EXPECT_EQ(dictionary->find_child(*inner, 7)->name, "Tlvs-Leaf");
  EXPECT_EQ(dictionary->find_child(*inner, 8)->name, "Tlvs-Dotted");
  EXPECT_EQ(dictionary->find_child(*outer, 2)->name, "Tlvs-Second");
  EXPECT_EQ(dictionary->find(5000, 2), nullptr);  // Tlvs-Second is a child, not top-level.
  const AttributeDef* container = dictionary->find(0, 173);
  EXPECT_EQ(dictionary->find_child(*container, 1)->name, "Std-Child");
}

TEST(DictionaryFile, ReadsExtendedAndExtendedVendorSpecificAttributes) {
  auto dictionary = parse_ok(
      "ATTRIBUTE Frag-Status 241.1 integer\n"
      "VENDOR Evs-Vendor 11344\n"
      "BEGIN-VENDOR Evs-Vendor format=Extended-Vendor-Specific-5\n"
      "ATTRIBUTE Evs-Thing 1 octets\n"
      "END-VENDOR Evs-Vendor\n");
  const AttributeDef* frag = dictionary->find("Frag-Status");
  EXPECT_EQ(frag->parent, dictionary->find(0, 241));
  EXPECT_EQ(dictionary->find_child(*dictionary->find(0, 241), 1), frag);
  const AttributeDef* evs = dictionary->find("Extended-Vendor-Specific-5");
  const AttributeDef* thing = dictionary->find_evs_child(*evs, 11344, 1);
  ASSERT_NE(thing, nullptr);
  EXPECT_EQ(thing->name, "Evs-Thing");
  EXPECT_EQ(thing->vendor, 11344u);
  EXPECT_EQ(dictionary->find(11344, 1), nullptr);  // Not a Vendor-Specific attribute.
}

TEST(DictionaryFile, SkipsOtherProtocolsAndReadsRadiusBlocks) {
  auto dictionary = parse_ok(
      "PROTOCOL DHCPv4 2\n"
      "BEGIN-PROTOCOL DHCPv4\n"
      "ATTRIBUTE Subnet-Mask 1 ipaddr\n"
      "DEFINE Anything-Goes here\n"
      "END-PROTOCOL DHCPv4\n"
      "BEGIN-PROTOCOL RADIUS\n"
      "ATTRIBUTE Proto-Attr 3000 string\n"
      "END-PROTOCOL RADIUS\n");
  EXPECT_EQ(dictionary->find("Subnet-Mask"), nullptr);
  EXPECT_NE(dictionary->find("Proto-Attr"), nullptr);
}

TEST(DictionaryFile, FlagsInternalAppliesToTheRestOfTheFile) {
  auto dictionary = parse_ok(
      "FLAGS internal\n"
      "VENDOR Flagged 6000\n"
      "BEGIN-VENDOR Flagged\n"
      "ATTRIBUTE Flagged-A 1 string\n"
      "END-VENDOR Flagged\n"
      "FLAGS !internal\n"
      "BEGIN-VENDOR Flagged\n"
      "ATTRIBUTE Flagged-B 2 string\n"
      "END-VENDOR Flagged\n");
  EXPECT_TRUE(dictionary->find("Flagged-A")->internal);
  EXPECT_FALSE(dictionary->find("Flagged-B")->internal);
}

TEST(DictionaryFile, AliasNamesAnExistingAttribute) {
  auto dictionary = parse_ok("ALIAS Password User-Password\n");
  EXPECT_EQ(dictionary->find("password"), dictionary->find("User-Password"));
  EXPECT_NE(parse_error("ALIAS Foo No-Such-Attribute\n").find("unknown attribute"), std::string::npos);
  EXPECT_NE(parse_error("ALIAS User-Name User-Password\n").find("another attribute"), std::string::npos);
}

TEST(DictionaryFile, AgreeingRedefinitionsAreAccepted) {
  auto dictionary = parse_ok(
      "ATTRIBUTE User-Name 1 string\n"
      "ATTRIBUTE Tunnel-Password 69 string has_tag,encrypt=2\n"
      "VENDOR Microsoft 311\n"
      "BEGIN-VENDOR Microsoft\n"
      "ATTRIBUTE MS-MPPE-Send-Key 16 octets encrypt=2\n"
      "END-VENDOR Microsoft\n"
      "VALUE Service-Type Framed-User 2\n");
  EXPECT_EQ(dictionary->find("User-Name"), dictionary->find(0, 1));
}

TEST(DictionaryFile, ConflictingRedefinitionsAreErrors) {
  EXPECT_EQ(parse_error("ATTRIBUTE User-Name 1 octets\n"),
            "test.dict:1:11: attribute 'User-Name' is already defined as type 1 string, not type 1 octets");
  EXPECT_NE(parse_error("ATTRIBUTE User-Name 2 string\n").find("already defined"), std::string::npos);
  EXPECT_NE(parse_error("ATTRIBUTE Tunnel-Password 69 string has_tag\n").find("already defined"),
            std::string::npos);
  EXPECT_NE(parse_error("VENDOR Microsoft 312\n").find("already defined"), std::string::npos);
  EXPECT_NE(parse_error("VENDOR Other 311 format=2,2\n").find("already defined"), std::string::npos);
  EXPECT_EQ(parse_error("VALUE Service-Type Framed-User 3\n"),
            "test.dict:1:20: VALUE 'Framed-User' of attribute 'Service-Type' is already defined as 2");
}

TEST(DictionaryFile, ErrorsNameFileLineAndColumn) {
  EXPECT_EQ(parse_error("\n\nATTRIBUTE Foo 3000 nosuchtype\n"),
            "test.dict:3:20: unknown data type 'nosuchtype'");
  EXPECT_EQ(parse_error("ATTRIBUTE Foo abc string\n"), "test.dict:1:15: 'abc' is not an attribute number");
  EXPECT_EQ(parse_error("ATTRIBUTE Foo 3000 string has_tag,bogus\n"),
            "test.dict:1:35: unknown attribute flag 'bogus'");
  EXPECT_EQ(parse_error("ATTRIBUTE Foo 3000\n"),
            "test.dict:1:1: expected: ATTRIBUTE <name> <number> <type> [<flags>]");
  EXPECT_EQ(parse_error("  FOOBAR x\n"), "test.dict:1:3: unknown directive 'FOOBAR'");
  EXPECT_EQ(parse_error("VALUE Nope Yes 1\nATTRIBUTE X 3000 string\n"),
            "test.dict:1:7: VALUE for unknown attribute 'Nope'");
  EXPECT_EQ(parse_error("VALUE Service-Type Big 0x1ffffffff\n"),
            "test.dict:1:24: '0x1ffffffff' is not a number");
  EXPECT_EQ(parse_error("BEGIN-VENDOR Nobody\n"), "test.dict:1:14: unknown vendor 'Nobody'");
  EXPECT_EQ(parse_error("VENDOR V 7000\nBEGIN-VENDOR V\nATTRIBUTE V-A 1 string\n"),
            "test.dict:4:1: BEGIN-VENDOR V (line 2) has no END-VENDOR");
  EXPECT_EQ(parse_error("VENDOR V 7000\nBEGIN-VENDOR V\nATTRIBUTE V-A 256 string\nEND-VENDOR V\n"),
            "test.dict:3:15: attribute number 256 is out of range");
  EXPECT_EQ(parse_error("END-TLV Foo\n"), "test.dict:1:9: END-TLV Foo without BEGIN-TLV");
  EXPECT_EQ(parse_error("BEGIN-TLV User-Name\n"), "test.dict:1:11: 'User-Name' is not a tlv attribute");
  EXPECT_EQ(parse_error("ATTRIBUTE Foo 1.2 string\n"),
            "test.dict:1:15: '1.2': 1 is not a tlv or extended attribute");
  EXPECT_EQ(parse_error("VENDOR V 7000 format=3,1\n"),
            "test.dict:1:15: 'format=3,1': expected format=1|2|4,0|1|2[,c]");
  EXPECT_EQ(parse_error("ATTRIBUTE Bad!Name 3000 string\n"),
            "test.dict:1:11: 'Bad!Name' is not a valid attribute name");
  EXPECT_EQ(parse_error("ATTRIBUTE Foo 3000 octets[0]\n"), "test.dict:1:20: 'octets[0]' is not a valid type");
  EXPECT_EQ(parse_error("ATTRIBUTE Foo 3000 string encrypt=9\n"),
            "test.dict:1:27: 'encrypt=9': encrypt= takes 0, 1, 2 or 3");
  EXPECT_EQ(parse_error("ATTRIBUTE Foo 3000 string concat\n"),
            "test.dict:1:27: concat is only allowed on octets attributes");
  EXPECT_EQ(parse_error("VALUE Framed-MTU Huge 1\nVALUE Framed-MTU Huge 2\n"),
            "test.dict:2:18: VALUE 'Huge' of attribute 'Framed-MTU' is already defined as 1");
}

TEST(DictionaryFile, IncludeIsRefusedInText) {
  EXPECT_EQ(parse_error("$INCLUDE other\n"),
            "test.dict:1:1: $INCLUDE is not allowed in a dictionary given as text");
  parse_ok("$INCLUDE- optional.file\n");
}

// A scratch folder of dictionary files for the $INCLUDE tests.
class DictionaryIncludeTest : public testing::Test {
 protected:
  void SetUp() override {
    folder_ =
        std::filesystem::path(testing::TempDir()) /
        ("dictionary_include_" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(folder_);
    std::filesystem::create_directories(folder_ / "sub");
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }

  std::string write(const std::string& name, std::string_view text) {
    const std::filesystem::path path = folder_ / name;
    std::ofstream(path) << text;
    return path.string();
  }

  std::filesystem::path folder_;
};

TEST_F(DictionaryIncludeTest, IncludesRelativeToTheIncludingFile) {
  const std::string top = write("dictionary", "$INCLUDE sub/dictionary.vendor\n$INCLUDE- missing.file\n");
  write("sub/dictionary.vendor", "VENDOR Inc 8000\n$INCLUDE dictionary.attrs\n");
  write("sub/dictionary.attrs", "BEGIN-VENDOR Inc\nATTRIBUTE Inc-Attr 1 string\nEND-VENDOR Inc\n");
  auto loaded = Dictionary::load(top);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().to_string();
  EXPECT_EQ((*loaded)->find(8000, 1)->name, "Inc-Attr");
}

TEST_F(DictionaryIncludeTest, IncludeLoopsAreRefused) {
  const std::string top = write("a", "$INCLUDE b\n");
  write("b", "\n$INCLUDE ../" + folder_.filename().string() + "/a\n");
  auto loaded = Dictionary::load(top);
  ASSERT_FALSE(loaded.has_value());
  EXPECT_EQ(loaded.error().file, (folder_ / "b").string());
  EXPECT_EQ(loaded.error().line, 2);
  EXPECT_EQ(loaded.error().column, 10);
  EXPECT_NE(loaded.error().message.find("$INCLUDE loop"), std::string::npos);

  const std::string self = write("self", "$INCLUDE self\n");
  EXPECT_FALSE(Dictionary::load(self).has_value());
}

TEST_F(DictionaryIncludeTest, IncludeDepthIsBounded) {
  // A chain of distinct files deeper than the bound.
  for (int i = 0; i < 40; ++i)
    write("chain" + std::to_string(i), "$INCLUDE chain" + std::to_string(i + 1) + "\n");
  write("chain40", "ATTRIBUTE Deep 3000 string\n");
  auto loaded = Dictionary::load((folder_ / "chain0").string());
  ASSERT_FALSE(loaded.has_value());
  EXPECT_NE(loaded.error().message.find("more than 32"), std::string::npos) << loaded.error().to_string();
}

TEST_F(DictionaryIncludeTest, MissingFilesAreErrors) {
  const std::string top = write("top", "\n$INCLUDE nothing.here\n");
  auto loaded = Dictionary::load(top);
  ASSERT_FALSE(loaded.has_value());
  EXPECT_EQ(loaded.error().line, 2);
  EXPECT_NE(loaded.error().message.find("cannot read"), std::string::npos);
  EXPECT_FALSE(Dictionary::load((folder_ / "absent").string()).has_value());
  EXPECT_FALSE(Dictionary::load(folder_.string()).has_value());  // A folder.
}

// The acceptance test: Debian 12's freeradius-common dictionaries, every
// vendor file included, agree with the built-in table and load whole.
constexpr const char* kDebianDictionary = "/usr/share/freeradius/dictionary";

class DebianDictionary : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(kDebianDictionary)) return;
    auto loaded = Dictionary::load(kDebianDictionary);
    ASSERT_TRUE(loaded.has_value()) << loaded.error().to_string();
    dictionary_ = *loaded;
  }
  void SetUp() override {
    if (dictionary_ == nullptr) GTEST_SKIP() << kDebianDictionary << " is not installed (freeradius-common)";
  }
  static void expect(std::string_view name, std::uint32_t vendor, std::uint32_t type, DataType data_type) {
    const AttributeDef* def = dictionary_->find(name);
    ASSERT_NE(def, nullptr) << name;
    EXPECT_EQ(def->vendor, vendor) << name;
    EXPECT_EQ(def->type, type) << name;
    EXPECT_EQ(def->data_type, data_type) << name;
  }
  static inline std::shared_ptr<const Dictionary> dictionary_;
};

TEST_F(DebianDictionary, FindsVendorAttributes) {
  expect("Cisco-AVPair", 9, 1, DataType::kString);
  EXPECT_EQ(dictionary_->find(9, 1)->name, "Cisco-AVPair");
  expect("WISPr-Bandwidth-Max-Down", 14122, 8, DataType::kInteger);
  expect("Aruba-User-Role", 14823, 1, DataType::kString);
  expect("MS-CHAP2-Success", 311, 26, DataType::kOctets);
  expect("Tunnel-Private-Group-Id", 0, 81, DataType::kString);
  EXPECT_TRUE(dictionary_->find("Tunnel-Private-Group-Id")->has_tag);
  EXPECT_EQ(dictionary_->find_vendor("Cisco")->number, 9u);
  EXPECT_EQ(dictionary_->find_vendor(14823)->name, "Aruba");
  EXPECT_GT(dictionary_->attribute_count(), 5000u);
}

TEST_F(DebianDictionary, KeepsStandardNamesForStandardNumbers) {
  EXPECT_EQ(dictionary_->find(0, 4)->name, "NAS-IP-Address");  // Not dictionary.compat's Client-Id.
  EXPECT_EQ(dictionary_->find(0, 6)->name, "Service-Type");
  EXPECT_EQ(dictionary_->find(0, 173)->name, "IPv6-6rd-Configuration");  // Not X-Ascend-*.
  EXPECT_EQ(dictionary_->find("Service-Type")->name_of_value(2), "Framed-User");
  EXPECT_EQ(dictionary_->find("Service-Type")->value_by_name("Framed"), 2u);  // dictionary.compat
  EXPECT_EQ(dictionary_->find("Acct-Status-Type")->name_of_value(3), "Interim-Update");
  EXPECT_EQ(dictionary_->find("Auth-Type")->value_by_name("PAP"), 1024u);
}

TEST_F(DebianDictionary, ReadsTlvsAndExtendedVendorSpecific) {
  const AttributeDef* capability = dictionary_->find("WiMAX-Capability");
  ASSERT_NE(capability, nullptr);
  EXPECT_EQ(capability->data_type, DataType::kTlv);
  EXPECT_TRUE(dictionary_->find_vendor("WiMAX")->continuation);
  const AttributeDef* release = dictionary_->find_child(*capability, 1);
  ASSERT_NE(release, nullptr);
  EXPECT_EQ(release->name, "WiMAX-Release");
  const AttributeDef* evs = dictionary_->find("Extended-Vendor-Specific-5");
  const AttributeDef* anonce = dictionary_->find_evs_child(*evs, 11344, 1);
  ASSERT_NE(anonce, nullptr);
  EXPECT_EQ(anonce->name, "FreeRADIUS-802.1X-Anonce");
}

}  // namespace
}  // namespace rw::radius
