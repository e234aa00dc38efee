// Tests of log formatting helpers.
#include "io/logging.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include <gtest/gtest.h>

namespace rw::io {
namespace {

TEST(JsonEscape, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(json_escape("user \"bob\"\\x\n\t\x01"), "user \\\"bob\\\"\\\\x\\u000a\\u0009\\u0001");
}

TEST(JsonEscape, KeepsUtf8) { EXPECT_EQ(json_escape("J\xc3\xbcrgen"), "J\xc3\xbcrgen"); }

TEST(JsonEscape, ReplacesBytesOutsideUtf8) {
  EXPECT_EQ(json_escape("a\xff"
                        "b\xc3"),
            "a\\ufffdb\\ufffd");
  EXPECT_EQ(json_escape(std::string_view("\0", 1)), "\\u0000");
}

TEST(TextEscape, ANewlineCannotForgeALine) {
  const std::string forged =
      text_escape("bob\n2026-12-01T12:00:00.000Z info [1] Access-Accept for \"admin\"");
  EXPECT_EQ(forged.find('\n'), std::string::npos);
  EXPECT_EQ(forged.substr(0, 7), "bob\\x0a");
  EXPECT_EQ(text_escape("a\rb\tc\x1b[31md\x7f"), "a\\x0db\\x09c\\x1b[31md\\x7f");
}

TEST(TextEscape, EscapesBytesOutsideUtf8AndKeepsUtf8) {
  EXPECT_EQ(text_escape("J\xc3\xbcrgen \xe2\x82\xac"), "J\xc3\xbcrgen \xe2\x82\xac");
  // A stray continuation byte, an overlong '/', a surrogate and a cut-off sequence.
  EXPECT_EQ(text_escape("\x80"), "\\x80");
  EXPECT_EQ(text_escape("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(text_escape("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  EXPECT_EQ(text_escape("ok\xe2\x82"), "ok\\xe2\\x82");
  EXPECT_EQ(text_escape(std::string_view("a\0b", 3)), "a\\x00b");
}

TEST(TextEscape, ABackslashCannotPassForAnEscape) {
  EXPECT_EQ(text_escape("EXAMPLE\\alice"), "EXAMPLE\\\\alice");
  EXPECT_EQ(text_escape("\\x0a"), "\\\\x0a");
}

}  // namespace
}  // namespace rw::io
