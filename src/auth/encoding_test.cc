// Tests for the hexadecimal, base64 and UTF-8 to UTF-16LE encoders.
#include "auth/encoding.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

namespace rw::auth {
namespace {

std::vector<std::uint8_t> utf16(std::string_view utf8) {
  std::array<std::uint8_t, 64> out{};
  const auto size = utf8_to_utf16le(utf8, out);
  EXPECT_TRUE(size.has_value());
  return size ? std::vector<std::uint8_t>(out.begin(), out.begin() + static_cast<long>(*size))
              : std::vector<std::uint8_t>{};
}

AuthError utf16_error(std::string_view utf8) {
  std::array<std::uint8_t, 64> out{};
  const auto size = utf8_to_utf16le(utf8, out);
  EXPECT_FALSE(size.has_value());
  return size ? AuthError::kWrongPassword : size.error();
}

TEST(HexDecode, AcceptsBothCases) {
  std::array<std::uint8_t, 2> out{};
  ASSERT_TRUE(hex_decode("aB0f", out));
  EXPECT_EQ(out[0], 0xAB);
  EXPECT_EQ(out[1], 0x0F);
}

TEST(HexDecode, RejectsOddLengthAndNonHex) {
  std::array<std::uint8_t, 2> out{};
  EXPECT_FALSE(hex_decode("aB0", out));
  EXPECT_FALSE(hex_decode("aB0g", out));
}

TEST(HexEncode, WritesTheRequestedCase) {
  const std::array<std::uint8_t, 2> in{0xAB, 0x0F};
  std::array<char, 4> out{};
  hex_encode(in, out, HexCase::kUpper);
  EXPECT_EQ(std::string(out.data(), 4), "AB0F");
  hex_encode(in, out, HexCase::kLower);
  EXPECT_EQ(std::string(out.data(), 4), "ab0f");
}

TEST(Base64Decode, DecodesPaddedText) {
  std::array<std::uint8_t, 16> out{};
  const auto size = base64_decode("c2VjcmV0", out);
  ASSERT_TRUE(size.has_value());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(out.data()), *size), "secret");
}

TEST(Base64Decode, RefusesAnOutputBufferSmallerThanTheWorstCase) {
  std::array<std::uint8_t, 4> out{};
  EXPECT_FALSE(base64_decode("c2VjcmV0", out).has_value());
}

TEST(Utf8ToUtf16le, EncodesTwoAndThreeOctetSequences) {
  EXPECT_EQ(utf16("\xC3\xA4\xE2\x82\xAC"), (std::vector<std::uint8_t>{0xE4, 0x00, 0xAC, 0x20}));
}

TEST(Utf8ToUtf16le, EncodesASupplementaryCharacterAsASurrogatePair) {
  // U+1F600 is D83D DE00 in UTF-16 (RFC 2781 §2.1).
  EXPECT_EQ(utf16("\xF0\x9F\x98\x80"), (std::vector<std::uint8_t>{0x3D, 0xD8, 0x00, 0xDE}));
}

TEST(Utf8ToUtf16le, RejectsOverlongForms) {
  EXPECT_EQ(utf16_error("\xC0\xAF"), AuthError::kInvalidUtf8);
  EXPECT_EQ(utf16_error("\xE0\x80\xAF"), AuthError::kInvalidUtf8);
}

TEST(Utf8ToUtf16le, RejectsEncodedSurrogates) {
  EXPECT_EQ(utf16_error("\xED\xA0\x80"), AuthError::kInvalidUtf8);
}

TEST(Utf8ToUtf16le, RejectsCodePointsAbove10ffff) {
  EXPECT_EQ(utf16_error("\xF4\x90\x80\x80"), AuthError::kInvalidUtf8);
}

TEST(Utf8ToUtf16le, RejectsTruncatedAndStrayContinuationOctets) {
  EXPECT_EQ(utf16_error("\xE2\x82"), AuthError::kInvalidUtf8);
  EXPECT_EQ(utf16_error("\x82"), AuthError::kInvalidUtf8);
}

TEST(Utf8ToUtf16le, ReportsAnOutputThatDoesNotFit) {
  std::array<std::uint8_t, 3> out{};
  EXPECT_EQ(utf8_to_utf16le("ab", out).error(), AuthError::kPasswordTooLong);
}

}  // namespace
}  // namespace rw::auth
