// Tests for MAC address notations and the MAB request rule.
#include "auth/mab.h"

#include <gtest/gtest.h>

#include "auth/vector_file_for_test.h"

namespace rw::auth {
namespace {

TEST(ParseMac, NormalisesEveryNotationOfTheVectors) {
  for (const auto& record : testing::load_vectors("mac_notations.txt")) {
    SCOPED_TRACE(record.text("Notation"));
    const auto mac = parse_mac(record.text("Notation"));
    ASSERT_TRUE(mac.has_value());
    EXPECT_EQ(view(canonical_mac(*mac)), record.text("Canonical"));
  }
}

TEST(ParseMac, RejectsTextThatIsNotAMac) {
  for (const char* text : {"", "alice", "aa:bb:cc:dd:ee", "aa:bb:cc:dd:ee:ff:00", "aa:bb-cc:dd:ee:ff",
                           "aabb.ccdd.eefg", "a:b:c:d:e:f", "aabbccddeef", "aabbccddeeff0",
                           "aa:bb:cc:dd:ee:ff ", "aabbc.cddeef.f", ":aabbccddeeff"}) {
    EXPECT_FALSE(parse_mac(text).has_value()) << '"' << text << '"';
  }
}

TEST(IsMabRequest, AcceptsTheSameMacInDifferentNotations) {
  EXPECT_TRUE(is_mab_request("aabbccddeeff", "AA-BB-CC-DD-EE-FF"));
}

TEST(IsMabRequest, RejectsADifferentCallingStationId) {
  EXPECT_FALSE(is_mab_request("aabbccddeeff", "AA-BB-CC-DD-EE-00"));
}

TEST(IsMabRequest, RejectsAUserNameThatIsNotAMac) {
  EXPECT_FALSE(is_mab_request("alice", "AA-BB-CC-DD-EE-FF"));
}

TEST(IsMabRequest, AcceptsAUserPasswordThatIsTheMac) {
  EXPECT_TRUE(is_mab_request("aabbccddeeff", "AA-BB-CC-DD-EE-FF", "aa:bb:cc:dd:ee:ff"));
}

TEST(IsMabRequest, RejectsAUserPasswordThatIsNotTheMac) {
  EXPECT_FALSE(is_mab_request("aabbccddeeff", "AA-BB-CC-DD-EE-FF", "hunter2"));
}

}  // namespace
}  // namespace rw::auth
