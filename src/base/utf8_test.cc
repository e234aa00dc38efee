// well_formed_utf8: what a Prometheus label value is made of when the text
// comes from an operator's file (a client's shortname).
#include "base/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace rw {
namespace {

TEST(WellFormedUtf8, KeepsWellFormedTextAsItIs) {
  const std::string text = "nas \"one\" \\ \n caf\xC3\xA9 \xF0\x9F\x93\xA1";
  EXPECT_EQ(well_formed_utf8(text), text);
}

TEST(WellFormedUtf8, ReplacesEachBadByteWithTheReplacementCharacter) {
  // A Latin-1 e-acute, a stray continuation byte, a NUL and a sequence cut short.
  EXPECT_EQ(well_formed_utf8(std::string("caf\xE9", 4)), "caf\xEF\xBF\xBD");
  EXPECT_EQ(well_formed_utf8(std::string("a\x80z", 3)), "a\xEF\xBF\xBDz");
  EXPECT_EQ(well_formed_utf8(std::string("a\0z", 3)), "a\xEF\xBF\xBDz");
  EXPECT_EQ(well_formed_utf8(std::string("\xE2\x82", 2)), "\xEF\xBF\xBD\xEF\xBF\xBD");
}

}  // namespace
}  // namespace rw
