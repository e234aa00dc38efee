// Hexadecimal, base64 (through nettle) and a strict UTF-8 decoder.
#include "auth/encoding.h"

#include <nettle/base64.h>

#include <cstdint>

#include "base/assert.h"

namespace rw::auth {
namespace {

// Decodes one UTF-8 sequence starting at text[at]; advances at. Returns the
// code point, or nullopt on any sequence RFC 3629 §4 does not allow.
std::optional<char32_t> next_code_point(std::string_view text, std::size_t& at) {
  const auto lead = static_cast<std::uint8_t>(text[at]);
  std::size_t length = 0;
  char32_t value = 0;
  char32_t minimum = 0;
  if (lead < 0x80) {
    ++at;
    return lead;
  } else if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    value = lead & 0x1F;
    minimum = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    value = lead & 0x0F;
    minimum = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    value = lead & 0x07;
    minimum = 0x10000;
  } else {
    return std::nullopt;  // A continuation octet, C0/C1 (always overlong) or F5..FF.
  }
  if (text.size() - at < length) return std::nullopt;
  for (std::size_t i = 1; i < length; ++i) {
    const auto next = static_cast<std::uint8_t>(text[at + i]);
    if ((next & 0xC0) != 0x80) return std::nullopt;
    value = value << 6 | (next & 0x3F);
  }
  if (value < minimum || value > 0x10FFFF) return std::nullopt;
  if (value >= 0xD800 && value <= 0xDFFF) return std::nullopt;
  at += length;
  return value;
}

}  // namespace

int hex_digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool hex_decode(std::string_view text, MutableBytes out) {
  if (text.size() != 2 * out.size()) return false;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int high = hex_digit_value(text[2 * i]);
    const int low = hex_digit_value(text[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    out[i] = static_cast<std::uint8_t>(high << 4 | low);
  }
  return true;
}

void hex_encode(Bytes bytes, std::span<char> out, HexCase letter_case) {
  RW_ASSERT(out.size() >= 2 * bytes.size());
  const char* digits = letter_case == HexCase::kUpper ? "0123456789ABCDEF" : "0123456789abcdef";
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    out[2 * i] = digits[bytes[i] >> 4];
    out[2 * i + 1] = digits[bytes[i] & 0x0F];
  }
}

std::optional<std::size_t> base64_decode(std::string_view text, MutableBytes out) {
  // BASE64_DECODE_LENGTH is nettle's worst case: checking it first means the
  // decoder can never write past out.
  if (BASE64_DECODE_LENGTH(text.size()) > out.size()) return std::nullopt;
  base64_decode_ctx context;
  base64_decode_init(&context);
  std::size_t written = out.size();
  if (base64_decode_update(&context, &written, out.data(), text.size(), text.data()) != 1) {
    return std::nullopt;
  }
  if (base64_decode_final(&context) != 1) return std::nullopt;
  return written;
}

Result<std::size_t, AuthError> utf8_to_utf16le(std::string_view utf8, MutableBytes out) {
  std::size_t at = 0;
  ByteWriter writer(out);
  while (at < utf8.size()) {
    const std::optional<char32_t> code_point = next_code_point(utf8, at);
    if (!code_point) return fail(AuthError::kInvalidUtf8);
    if (*code_point >= 0x10000) {
      // UTF-16 (RFC 2781 §2.1): a high then a low surrogate, each little-endian here.
      const char32_t offset = *code_point - 0x10000;
      const auto high = static_cast<std::uint16_t>(0xD800 | offset >> 10);
      const auto low = static_cast<std::uint16_t>(0xDC00 | (offset & 0x3FF));
      writer.write_u8(static_cast<std::uint8_t>(high));
      writer.write_u8(static_cast<std::uint8_t>(high >> 8));
      writer.write_u8(static_cast<std::uint8_t>(low));
      writer.write_u8(static_cast<std::uint8_t>(low >> 8));
    } else {
      writer.write_u8(static_cast<std::uint8_t>(*code_point));
      writer.write_u8(static_cast<std::uint8_t>(*code_point >> 8));
    }
  }
  if (writer.overflowed()) return fail(AuthError::kPasswordTooLong);
  return writer.size();
}

}  // namespace rw::auth
