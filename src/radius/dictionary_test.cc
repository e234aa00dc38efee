// Tests of the built-in dictionary and its lookups.
#include "radius/dictionary.h"

#include <gtest/gtest.h>

namespace rw::radius {
namespace {

const Dictionary& builtin() { return *Dictionary::builtin(); }

TEST(BuiltinDictionary, FindsStandardAttributesByNameAndNumber) {
  const AttributeDef* user_name = builtin().find("User-Name");
  ASSERT_NE(user_name, nullptr);
  EXPECT_EQ(user_name->vendor, 0u);
  EXPECT_EQ(user_name->type, 1u);
  EXPECT_EQ(user_name->data_type, DataType::kString);
  EXPECT_FALSE(user_name->internal);
  EXPECT_EQ(builtin().find(0, 1), user_name);
  EXPECT_EQ(builtin().find(0, 79)->name, "EAP-Message");
  EXPECT_EQ(builtin().find(0, 80)->name, "Message-Authenticator");
}

TEST(BuiltinDictionary, NameLookupIgnoresCase) {
  EXPECT_EQ(builtin().find("user-name"), builtin().find("User-Name"));
  EXPECT_EQ(builtin().find("CLEARTEXT-PASSWORD"), builtin().find("Cleartext-Password"));
  EXPECT_EQ(builtin().find_vendor("microsoft"), builtin().find_vendor(311));
}

TEST(BuiltinDictionary, UnknownNamesAndNumbersAreNotFound) {
  EXPECT_EQ(builtin().find("No-Such-Attribute-Here"), nullptr);
  EXPECT_EQ(builtin().find(""), nullptr);
  EXPECT_EQ(builtin().find(0, 17), nullptr);  // Unassigned in RFC 2865.
  EXPECT_EQ(builtin().find(311, 250), nullptr);
  EXPECT_EQ(builtin().find(9, 1), nullptr);  // Cisco is not built in.
  EXPECT_EQ(builtin().find_vendor("Cisco"), nullptr);
}

TEST(BuiltinDictionary, PasswordAttributesCarryTheirEncryption) {
  EXPECT_EQ(builtin().find("User-Password")->encryption, Encryption::kUserPassword);
  const AttributeDef* tunnel_password = builtin().find("Tunnel-Password");
  EXPECT_EQ(tunnel_password->encryption, Encryption::kTunnelPassword);
  EXPECT_TRUE(tunnel_password->has_tag);
  EXPECT_EQ(builtin().find("MS-MPPE-Send-Key")->encryption, Encryption::kTunnelPassword);
  EXPECT_EQ(builtin().find("MS-MPPE-Recv-Key")->encryption, Encryption::kTunnelPassword);
  EXPECT_EQ(builtin().find("MS-CHAP-MPPE-Keys")->encryption, Encryption::kUserPassword);
}

TEST(BuiltinDictionary, TunnelAttributesAreTagged) {
  for (const char* name : {"Tunnel-Type", "Tunnel-Medium-Type", "Tunnel-Private-Group-Id",
                           "Tunnel-Client-Endpoint", "Tunnel-Server-Endpoint", "Tunnel-Preference"}) {
    EXPECT_TRUE(builtin().find(name)->has_tag) << name;
  }
  EXPECT_FALSE(builtin().find("User-Name")->has_tag);
}

TEST(BuiltinDictionary, EapMessageIsConcatenated) {
  EXPECT_TRUE(builtin().find("EAP-Message")->concat);
  EXPECT_FALSE(builtin().find("Message-Authenticator")->concat);
}

TEST(BuiltinDictionary, MicrosoftAttributesUseVendor311) {
  const AttributeDef* success = builtin().find("MS-CHAP2-Success");
  ASSERT_NE(success, nullptr);
  EXPECT_EQ(success->vendor, 311u);
  EXPECT_EQ(success->type, 26u);
  EXPECT_EQ(builtin().find(311, 25)->name, "MS-CHAP2-Response");
  EXPECT_EQ(builtin().find(311, 25)->fixed_length, 50u);
  EXPECT_EQ(builtin().find(311, 11)->name, "MS-CHAP-Challenge");
  const VendorDef* microsoft = builtin().find_vendor("Microsoft");
  ASSERT_NE(microsoft, nullptr);
  EXPECT_EQ(microsoft->number, 311u);
  EXPECT_EQ(microsoft->type_width, 1);
  EXPECT_EQ(microsoft->length_width, 1);
}

TEST(BuiltinDictionary, ServerSideAttributesAreInternal) {
  struct Expected {
    const char* name;
    std::uint32_t type;
    DataType data_type;
  };
  for (const Expected& expected :
       {Expected{"Auth-Type", 1000, DataType::kInteger}, Expected{"Fall-Through", 500, DataType::kInteger},
        Expected{"Simultaneous-Use", 1034, DataType::kInteger},
        Expected{"Cleartext-Password", 1100, DataType::kString},
        Expected{"Crypt-Password", 1006, DataType::kString}, Expected{"NT-Password", 1058, DataType::kOctets},
        Expected{"LM-Password", 1057, DataType::kOctets}, Expected{"SHA-Password", 1093, DataType::kOctets},
        Expected{"MD5-Password", 1095, DataType::kOctets},
        Expected{"Password-With-Header", 1101, DataType::kString},
        Expected{"Expiration", 1010, DataType::kDate}}) {
    const AttributeDef* def = builtin().find(expected.name);
    ASSERT_NE(def, nullptr) << expected.name;
    EXPECT_EQ(def->vendor, 0u) << expected.name;
    EXPECT_EQ(def->type, expected.type) << expected.name;
    EXPECT_EQ(def->data_type, expected.data_type) << expected.name;
    EXPECT_TRUE(def->internal) << expected.name;
  }
  EXPECT_TRUE(builtin().find("Packet-Type")->internal);
}

TEST(BuiltinDictionary, AliasesShareANumberAndTheLatestNameWins) {
  const AttributeDef* sha = builtin().find("SHA-Password");
  ASSERT_NE(sha, nullptr);
  EXPECT_EQ(sha->type, 1093u);
  EXPECT_EQ(builtin().find(0, 1093)->name, "SHA1-Password");
  EXPECT_EQ(builtin().find(311, 8)->name, "MS-MPPE-Encryption-Types");
  EXPECT_EQ(builtin().find("MS-MPPE-Encryption-Type")->value_by_name("RC4-128bit-Allowed"), 2u);
}

TEST(BuiltinDictionary, ValueNamesResolveBothWays) {
  const AttributeDef* service_type = builtin().find("Service-Type");
  EXPECT_EQ(service_type->value_by_name("Framed-User"), 2u);
  EXPECT_EQ(service_type->value_by_name("framed-user"), 2u);
  EXPECT_EQ(service_type->name_of_value(8), "Authenticate-Only");
  EXPECT_EQ(service_type->value_by_name("Framed"), std::nullopt);
  EXPECT_EQ(service_type->name_of_value(999), std::nullopt);

  const AttributeDef* status = builtin().find("Acct-Status-Type");
  EXPECT_EQ(status->value_by_name("Start"), 1u);
  EXPECT_EQ(status->value_by_name("Stop"), 2u);
  EXPECT_EQ(status->value_by_name("Alive"), 3u);
  EXPECT_EQ(status->name_of_value(3), "Interim-Update");
  EXPECT_EQ(status->value_by_name("Accounting-On"), 7u);
  EXPECT_EQ(status->value_by_name("Accounting-Off"), 8u);

  EXPECT_EQ(builtin().find("Tunnel-Type")->value_by_name("VLAN"), 13u);
  EXPECT_EQ(builtin().find("Tunnel-Medium-Type")->value_by_name("IEEE-802"), 6u);
  EXPECT_EQ(builtin().find("NAS-Port-Type")->value_by_name("Wireless-802.11"), 19u);
  EXPECT_EQ(builtin().find("Acct-Terminate-Cause")->value_by_name("Lost-Carrier"), 2u);
  EXPECT_EQ(builtin().find("Acct-Authentic")->name_of_value(1), "RADIUS");
  EXPECT_EQ(builtin().find("Framed-Protocol")->value_by_name("PPP"), 1u);
  EXPECT_EQ(builtin().find("Error-Cause")->value_by_name("Session-Context-Not-Found"), 503u);
}

TEST(BuiltinDictionary, AuthTypeHasTheMethodNames) {
  const AttributeDef* auth_type = builtin().find("Auth-Type");
  for (const char* name : {"Accept", "Reject", "Local", "PAP", "CHAP", "MS-CHAP", "EAP"}) {
    EXPECT_TRUE(auth_type->value_by_name(name).has_value()) << name;
  }
  EXPECT_EQ(auth_type->value_by_name("Accept"), 254u);
  EXPECT_EQ(auth_type->value_by_name("Reject"), 4u);
}

TEST(BuiltinDictionary, ExtendedAttributesAndTheirVendorSlots) {
  const AttributeDef* extended1 = builtin().find(0, 241);
  ASSERT_NE(extended1, nullptr);
  EXPECT_EQ(extended1->data_type, DataType::kExtended);
  EXPECT_EQ(builtin().find(0, 245)->data_type, DataType::kLongExtended);
  const AttributeDef* evs = builtin().find_child(*extended1, 26);
  ASSERT_NE(evs, nullptr);
  EXPECT_EQ(evs->name, "Extended-Vendor-Specific-1");
  EXPECT_EQ(evs->data_type, DataType::kEvs);
  EXPECT_EQ(evs->parent, extended1);
  EXPECT_EQ(builtin().find("Extended-Vendor-Specific-5")->parent, builtin().find(0, 245));
  // A child is not a top-level attribute.
  EXPECT_EQ(builtin().find(0, 26)->name, "Vendor-Specific");
}

TEST(BuiltinDictionary, IsSharedAndBuiltOnce) {
  EXPECT_EQ(Dictionary::builtin(), Dictionary::builtin());
  EXPECT_GT(builtin().attribute_count(), 250u);
}

TEST(DataTypeNames, AreFreeRadiusNames) {
  EXPECT_EQ(to_string(DataType::kIpAddr), "ipaddr");
  EXPECT_EQ(to_string(DataType::kLongExtended), "long-extended");
  EXPECT_EQ(to_string(DataType::kComboIp), "combo-ip");
  EXPECT_TRUE(is_integer(DataType::kShort));
  EXPECT_FALSE(is_integer(DataType::kDate));
}

}  // namespace
}  // namespace rw::radius
