// MAC address notations and the MAB request rule.
#include "auth/mab.h"

#include <cstddef>

#include "auth/encoding.h"

namespace rw::auth {
namespace {

constexpr std::size_t kMacDigits = 12;

bool is_separator(char c) { return c == ':' || c == '-' || c == '.'; }

}  // namespace

std::optional<MacAddress> parse_mac(std::string_view text) {
  // The group size is the position of the first separator; every later
  // separator must sit one group further on and be the same character.
  std::size_t group = kMacDigits;
  char separator = '\0';
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (is_separator(text[i])) {
      group = i;
      separator = text[i];
      break;
    }
  }
  if (group != 2 && group != 4 && group != 6 && group != kMacDigits) return std::nullopt;
  const std::size_t groups = kMacDigits / group;
  if (text.size() != kMacDigits + (groups - 1)) return std::nullopt;

  MacAddress mac;
  std::size_t digit = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((i + 1) % (group + 1) == 0) {
      if (text[i] != separator) return std::nullopt;
      continue;
    }
    const int value = hex_digit_value(text[i]);
    if (value < 0) return std::nullopt;
    mac.octets[digit / 2] = static_cast<std::uint8_t>(mac.octets[digit / 2] << 4 | value);
    ++digit;
  }
  return mac;
}

MacText canonical_mac(const MacAddress& mac) {
  MacText text{};
  for (std::size_t i = 0; i < mac.octets.size(); ++i) {
    hex_encode(Bytes(&mac.octets[i], 1), std::span<char>(text).subspan(3 * i, 2), HexCase::kLower);
    if (i + 1 < mac.octets.size()) text[3 * i + 2] = ':';
  }
  return text;
}

bool is_mab_request(std::string_view user_name, std::string_view calling_station_id,
                    std::optional<std::string_view> user_password) {
  const std::optional<MacAddress> name_mac = parse_mac(user_name);
  if (!name_mac) return false;
  const std::optional<MacAddress> station_mac = parse_mac(calling_station_id);
  if (!station_mac || *station_mac != *name_mac) return false;
  if (!user_password) return true;
  const std::optional<MacAddress> password_mac = parse_mac(*user_password);
  return password_mac && *password_mac == *name_mac;
}

std::string mab_entry_alias(std::string_view name) {
  const std::optional<MacAddress> mac = parse_mac(name);
  if (!mac) return {};
  const MacText text = canonical_mac(*mac);
  return std::string(view(text));
}

}  // namespace rw::auth
