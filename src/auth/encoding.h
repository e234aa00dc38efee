// Text encodings the password forms need: hexadecimal (NT-Password, the
// MS-CHAP2-Success string), base64 ({ssha} and friends) and UTF-8 to UTF-16LE
// (the NT hash of RFC 2759 §8.3 is MD4 over UTF-16LE). All write into
// caller-owned buffers and allocate nothing.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "auth/auth_error.h"
#include "base/bytes.h"
#include "base/result.h"

namespace rw::auth {

// The value of one hexadecimal digit (either case), or -1 for any other character.
[[nodiscard]] int hex_digit_value(char c);

// Decodes exactly 2 * out.size() hexadecimal digits (either case) into out.
// Returns false, leaving out unspecified, on any other length or a non-hex
// character.
[[nodiscard]] bool hex_decode(std::string_view text, MutableBytes out);

enum class HexCase : bool { kLower, kUpper };

// Writes 2 * bytes.size() hexadecimal digits into out.
// Requires: out.size() >= 2 * bytes.size().
void hex_encode(Bytes bytes, std::span<char> out, HexCase letter_case);

// Decodes standard padded base64 (RFC 4648 §4) into out and returns the
// number of octets written; nullopt when the text is not base64 or when out
// is smaller than the worst case, (text.size() + 1) * 6 / 8 octets.
[[nodiscard]] std::optional<std::size_t> base64_decode(std::string_view text, MutableBytes out);

// Converts UTF-8 to UTF-16LE (code points above U+FFFF become surrogate
// pairs) and returns the number of octets written. Rejects what RFC 3629 §3
// forbids: overlong forms, surrogate code points, values above U+10FFFF and
// truncated sequences (kInvalidUtf8); kPasswordTooLong when out is too small.
[[nodiscard]] Result<std::size_t, AuthError> utf8_to_utf16le(std::string_view utf8, MutableBytes out);

}  // namespace rw::auth
