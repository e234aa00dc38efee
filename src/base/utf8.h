// Well-formed UTF-8 (RFC 3629 §4), one sequence at a time: what the exporter
// needs to replace bad bytes in SQL text and the logs need to escape them.
// Pure and allocation-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace rw {

// Length of the well-formed UTF-8 sequence at text[at] (RFC 3629 §4), or 0:
// for a NUL, a stray continuation byte, an overlong form, a surrogate, a
// code point above U+10FFFF, or a sequence cut short. Requires: at < size.
[[nodiscard]] inline std::size_t utf8_sequence(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(text[i]); };
  const std::uint8_t lead = byte(at);
  if (lead == 0) return 0;
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  std::uint8_t low = 0x80;
  std::uint8_t high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (text.size() - at < length) return 0;
  if (byte(at + 1) < low || byte(at + 1) > high) return 0;
  for (std::size_t i = 2; i < length; ++i) {
    if (byte(at + i) < 0x80 || byte(at + i) > 0xBF) return 0;
  }
  return length;
}

}  // namespace rw
