// Tests of log formatting helpers.
#include "io/logging.h"

#include <gtest/gtest.h>

namespace rw::io {
namespace {

TEST(JsonEscape, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(json_escape("user \"bob\"\\x\n\t\x01"), "user \\\"bob\\\"\\\\x\\u000a\\u0009\\u0001");
}

TEST(JsonEscape, KeepsUtf8) { EXPECT_EQ(json_escape("J\xc3\xbcrgen"), "J\xc3\xbcrgen"); }

}  // namespace
}  // namespace rw::io
