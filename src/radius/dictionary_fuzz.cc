// Fuzz target for the dictionary reader and the value codec: any text given
// to Dictionary::parse must give a dictionary or a positioned error, never a
// crash; and for the attributes it defines, every word of the input that
// parse_value accepts must come back unchanged through format_value
// (parse(format(parse(t))) == parse(t)).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "base/assert.h"
#include "radius/dictionary.h"

namespace {

using rw::radius::AttributeDef;
using rw::radius::Dictionary;

constexpr std::size_t kMaxInput = 64 * 1024;
constexpr std::size_t kMaxWords = 48;
constexpr std::size_t kMaxAttributes = 12;

std::vector<std::string_view> words_of(std::string_view text, std::size_t limit) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < text.size() && words.size() < limit) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) ++i;
    const std::size_t start = i;
    while (i < text.size() && !(text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) ++i;
    if (i > start) words.push_back(text.substr(start, i - start));
  }
  return words;
}

// The attributes named by the input's ATTRIBUTE lines, then a few built-in
// ones of other types so every type gets values.
std::vector<const AttributeDef*> attributes_to_check(const Dictionary& dictionary,
                                                     const std::vector<std::string_view>& words) {
  std::vector<const AttributeDef*> defs;
  for (std::size_t i = 0; i + 1 < words.size() && defs.size() < kMaxAttributes / 2; ++i) {
    if (words[i] != "ATTRIBUTE") continue;
    if (const AttributeDef* def = dictionary.find(words[i + 1])) defs.push_back(def);
  }
  constexpr std::array<std::string_view, 6> kBuiltin = {
      "Service-Type", "Framed-IP-Address",  "Framed-IPv6-Prefix", "Event-Timestamp",
      "Class",        "Framed-Interface-Id"};
  for (std::string_view name : kBuiltin) defs.push_back(dictionary.find(name));
  return defs;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kMaxInput) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = Dictionary::parse(text, "fuzz.dict");
  if (!parsed) {
    RW_ASSERT(!parsed.error().to_string().empty());
    return 0;
  }
  const Dictionary& dictionary = **parsed;
  const std::vector<std::string_view> words = words_of(text, kMaxWords);
  for (const AttributeDef* def : attributes_to_check(dictionary, words)) {
    RW_ASSERT(def != nullptr);
    for (std::string_view word : words) {
      (void)rw::radius::format_value(*def, rw::as_bytes(word));  // Any bytes must format.
      auto wire = rw::radius::parse_value(*def, word);
      if (!wire) continue;
      const std::string formatted = rw::radius::format_value(*def, *wire);
      auto again = rw::radius::parse_value(*def, formatted);
      RW_ASSERT(again.has_value());
      RW_ASSERT(*again == *wire);
    }
  }
  return 0;
}
