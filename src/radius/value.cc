// Attribute values as text and as wire bytes: parse_value and format_value
// for every dictionary data type (RFC 8044 §3 wire forms; FreeRADIUS text
// forms so users files and SQL rows read as they do there).
#include <arpa/inet.h>

#include <array>
#include <charconv>
#include <cstring>
#include <iterator>
#include <limits>

#include <fmt/format.h>

#include "radius/dictionary.h"
#include "radius/dictionary_builder.h"

namespace rw::radius {
namespace {

using Wire = std::vector<std::uint8_t>;
using Parsed = Result<Wire, std::string>;

constexpr std::string_view kHexDigits = "0123456789abcdef";
constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = ascii_lower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool has_hex_prefix(std::string_view text) {
  return text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
}

void append_be(Wire& out, std::uint64_t value, int width) {
  for (int shift = (width - 1) * 8; shift >= 0; shift -= 8) {
    out.push_back(static_cast<std::uint8_t>(value >> shift));
  }
}

std::uint64_t read_be(Bytes bytes) {
  std::uint64_t value = 0;
  for (std::uint8_t byte : bytes) value = value << 8 | byte;
  return value;
}

void append_hex(std::string& text, Bytes bytes) {
  text += "0x";
  for (std::uint8_t byte : bytes) {
    text.push_back(kHexDigits[byte >> 4]);
    text.push_back(kHexDigits[byte & 0x0F]);
  }
}

Parsed parse_hex_octets(std::string_view digits) {
  if (digits.size() % 2 != 0) return fail(std::string("odd number of hex digits"));
  Wire out;
  out.reserve(digits.size() / 2);
  for (std::size_t i = 0; i < digits.size(); i += 2) {
    const int high = hex_digit(digits[i]);
    const int low = hex_digit(digits[i + 1]);
    if (high < 0 || low < 0)
      return fail(fmt::format("'{}' is not a hex digit", digits[high < 0 ? i : i + 1]));
    out.push_back(static_cast<std::uint8_t>(high << 4 | low));
  }
  return out;
}

// "0x..." is hex; anything else is taken byte for byte (FreeRADIUS does the same).
Parsed parse_octets(const AttributeDef& def, std::string_view text) {
  Parsed out = has_hex_prefix(text) ? parse_hex_octets(text.substr(2)) : Wire(text.begin(), text.end());
  if (out && def.fixed_length != 0 && out->size() != def.fixed_length) {
    return fail(fmt::format("{} bytes where {} needs exactly {}", out->size(), def.name, def.fixed_length));
  }
  return out;
}

// A number first (FreeRADIUS reads "56" as 56 even where a VALUE is named
// "56"), then a VALUE name, which may start with a digit ("3Com-Wireless").
std::optional<std::uint64_t> number_or_name(const AttributeDef& def, std::string_view text) {
  if (auto number = parse_unsigned(text)) return number;
  if (auto named = def.value_by_name(text)) return *named;
  return std::nullopt;
}

std::string not_a_number(const AttributeDef& def, std::string_view text) {
  if (def.values.empty()) return fmt::format("'{}' is not a number", text);
  return fmt::format("'{}' is not a number nor a VALUE name of {}", text, def.name);
}

Parsed parse_unsigned_value(const AttributeDef& def, std::string_view text, int width) {
  const std::uint64_t max =
      width == 8 ? std::numeric_limits<std::uint64_t>::max() : (1ull << (width * 8)) - 1;
  const auto number = number_or_name(def, text);
  if (!number) return fail(not_a_number(def, text));
  if (*number > max) return fail(fmt::format("{} is out of range for a {}-byte integer", text, width));
  Wire out;
  append_be(out, *number, width);
  return out;
}

Parsed parse_signed(const AttributeDef& def, std::string_view text) {
  std::int64_t value = 0;
  if (auto number = parse_unsigned(text)) {
    value =
        *number > 0xFFFFFFFF ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(*number);
  } else if (auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
             error == std::errc() && end == text.data() + text.size()) {
    // A negative decimal number.
  } else if (auto named = def.value_by_name(text)) {
    value = static_cast<std::int32_t>(*named);  // VALUE numbers are the 32-bit pattern.
  } else {
    return fail(not_a_number(def, text));
  }
  if (value < std::numeric_limits<std::int32_t>::min() || value > std::numeric_limits<std::int32_t>::max()) {
    return fail(fmt::format("{} is out of range for a signed 32-bit integer", text));
  }
  Wire out;
  append_be(out, static_cast<std::uint32_t>(static_cast<std::int32_t>(value)), 4);
  return out;
}

// inet_pton wants a NUL-terminated string; addresses are short, so a stack
// buffer holds them.
Parsed parse_address(int family, std::string_view text) {
  const char* what = family == AF_INET ? "IPv4" : "IPv6";
  std::array<char, 64> buffer{};
  Wire out(family == AF_INET ? 4 : 16);
  if (text.size() >= buffer.size()) return fail(fmt::format("'{}' is not an {} address", text, what));
  std::memcpy(buffer.data(), text.data(), text.size());
  if (inet_pton(family, buffer.data(), out.data()) != 1) {
    return fail(fmt::format("'{}' is not an {} address", text, what));
  }
  return out;
}

Parsed parse_ipv4(std::string_view text) { return parse_address(AF_INET, text); }
Parsed parse_ipv6(std::string_view text) { return parse_address(AF_INET6, text); }

// Clears the bits past `length` (FreeRADIUS masks a prefix written with host
// bits set rather than refusing it).
void mask_prefix(std::span<std::uint8_t> address, unsigned length) {
  for (std::size_t i = 0; i < address.size(); ++i) {
    const unsigned first_bit = static_cast<unsigned>(i) * 8;
    if (first_bit >= length) {
      address[i] = 0;
    } else if (length - first_bit < 8) {
      address[i] &= static_cast<std::uint8_t>(0xFF << (8 - (length - first_bit)));
    }
  }
}

std::optional<unsigned> parse_prefix_length(std::string_view text, unsigned max) {
  if (text.empty() || text.size() > 3) return std::nullopt;
  unsigned value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value > max) return std::nullopt;
  return value;
}

// RFC 8044 §3.10 (RFC 3162 §2.3): Reserved, Prefix-Length, then only the
// octets that hold the prefix.
Parsed parse_ipv6_prefix(std::string_view text) {
  const std::size_t slash = text.find('/');
  unsigned length = 128;
  if (slash != std::string_view::npos) {
    auto parsed_length = parse_prefix_length(text.substr(slash + 1), 128);
    if (!parsed_length)
      return fail(fmt::format("'{}' is not a prefix length 0..128", text.substr(slash + 1)));
    length = *parsed_length;
  }
  auto address = parse_ipv6(text.substr(0, slash));
  if (!address) return address;
  mask_prefix(*address, length);
  Wire out{0, static_cast<std::uint8_t>(length)};
  out.insert(out.end(), address->begin(), address->begin() + (length + 7) / 8);
  return out;
}

// RFC 8044 §3.11 (RFC 6572): Reserved, Prefix-Length, and all four octets.
Parsed parse_ipv4_prefix(std::string_view text) {
  const std::size_t slash = text.find('/');
  unsigned length = 32;
  if (slash != std::string_view::npos) {
    auto parsed_length = parse_prefix_length(text.substr(slash + 1), 32);
    if (!parsed_length) return fail(fmt::format("'{}' is not a prefix length 0..32", text.substr(slash + 1)));
    length = *parsed_length;
  }
  auto address = parse_ipv4(text.substr(0, slash));
  if (!address) return address;
  mask_prefix(*address, length);
  Wire out{0, static_cast<std::uint8_t>(length)};
  out.insert(out.end(), address->begin(), address->end());
  return out;
}

// "aa:bb:cc:dd:ee:ff" (':' or '-' between the octets).
Parsed parse_ether(std::string_view text) {
  Wire out;
  if (text.size() != 17) return fail(fmt::format("'{}' is not a MAC address aa:bb:cc:dd:ee:ff", text));
  for (std::size_t i = 0; i < 6; ++i) {
    const int high = hex_digit(text[i * 3]);
    const int low = hex_digit(text[i * 3 + 1]);
    const bool separator_ok = i == 5 || text[i * 3 + 2] == ':' || text[i * 3 + 2] == '-';
    if (high < 0 || low < 0 || !separator_ok) {
      return fail(fmt::format("'{}' is not a MAC address aa:bb:cc:dd:ee:ff", text));
    }
    out.push_back(static_cast<std::uint8_t>(high << 4 | low));
  }
  return out;
}

// "0011:2233:4455:6677": four groups of up to four hex digits (RFC 3162 §2.2).
Parsed parse_ifid(std::string_view text) {
  Wire out;
  std::size_t start = 0;
  for (int group = 0; group < 4; ++group) {
    std::size_t end = text.find(':', start);
    if (group == 3) end = text.size();
    if (end == std::string_view::npos || end == start || end - start > 4) {
      return fail(fmt::format("'{}' is not an interface id xxxx:xxxx:xxxx:xxxx", text));
    }
    unsigned value = 0;
    auto [stop, error] = std::from_chars(text.data() + start, text.data() + end, value, 16);
    if (error != std::errc() || stop != text.data() + end) {
      return fail(fmt::format("'{}' is not an interface id xxxx:xxxx:xxxx:xxxx", text));
    }
    append_be(out, value, 2);
    start = end + 1;
  }
  return out;
}

Parsed parse_combo_ip(std::string_view text) {
  if (text.find(':') != std::string_view::npos) return parse_ipv6(text);
  return parse_ipv4(text);
}

bool is_leap(std::int64_t year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

unsigned days_in_month(std::int64_t year, unsigned month) {
  constexpr std::array<unsigned, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap(year) ? 29 : kDays[month - 1];
}

// 32-bit dates span 1970 to 2106, so counting whole years and months is
// short and obviously right.
constexpr std::int64_t kFirstYear = 1970;
constexpr std::int64_t kLastYear = 2106;

// Days from 1970-01-01. Requires: kFirstYear <= year <= kLastYear.
std::int64_t days_from_civil(std::int64_t year, unsigned month, unsigned day) {
  std::int64_t days = 0;
  for (std::int64_t y = kFirstYear; y < year; ++y) days += is_leap(y) ? 366 : 365;
  for (unsigned m = 1; m < month; ++m) days += days_in_month(year, m);
  return days + day - 1;
}

struct Civil {
  std::int64_t year;
  unsigned month;
  unsigned day;
};

Civil civil_from_days(std::int64_t days) {
  Civil civil{kFirstYear, 1, 1};
  for (std::int64_t length = 365; days >= (length = is_leap(civil.year) ? 366 : 365); ++civil.year) {
    days -= length;
  }
  for (unsigned length = 31; days >= (length = days_in_month(civil.year, civil.month)); ++civil.month) {
    days -= length;
  }
  civil.day = static_cast<unsigned>(days) + 1;
  return civil;
}

std::optional<unsigned> month_from_name(std::string_view word) {
  if (word.size() < 3) return std::nullopt;
  for (unsigned i = 0; i < kMonths.size(); ++i) {
    bool match = true;
    for (std::size_t c = 0; c < 3; ++c) match = match && ascii_lower(word[c]) == ascii_lower(kMonths[i][c]);
    if (match) return i + 1;
  }
  return std::nullopt;
}

// "HH:MM" or "HH:MM:SS".
std::optional<std::int64_t> parse_time_of_day(std::string_view word) {
  std::array<unsigned, 3> parts{};
  std::size_t count = 0;
  while (count < 3) {
    const std::size_t colon = word.find(':');
    std::string_view part = word.substr(0, colon);
    if (part.empty() || part.size() > 2) return std::nullopt;
    auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), parts[count]);
    if (error != std::errc() || end != part.data() + part.size()) return std::nullopt;
    ++count;
    if (colon == std::string_view::npos) break;
    word.remove_prefix(colon + 1);
  }
  if (count < 2 || parts[0] > 23 || parts[1] > 59 || parts[2] > 60) return std::nullopt;
  return parts[0] * 3600 + parts[1] * 60 + parts[2];
}

// FreeRADIUS-style dates: "Jan  1 2024 00:00:00 UTC", "1 January 2024",
// "Jan 1 2024 12:30". Words may come in any order; the zone, if any, must be
// UTC or GMT (no time-zone database is read: this code is pure).
std::optional<std::int64_t> parse_date_words(std::string_view text) {
  std::optional<unsigned> month;
  std::optional<unsigned> day;
  std::optional<std::int64_t> year;
  std::int64_t seconds = 0;
  bool have_time = false;
  while (!text.empty()) {
    const std::size_t start = text.find_first_not_of(" \t,");
    if (start == std::string_view::npos) break;
    text.remove_prefix(start);
    const std::size_t end = std::min(text.find_first_of(" \t,"), text.size());
    const std::string_view word = text.substr(0, end);
    text.remove_prefix(end);
    if (word.find(':') != std::string_view::npos) {
      auto time = parse_time_of_day(word);
      if (!time || have_time) return std::nullopt;
      seconds = *time;
      have_time = true;
    } else if (word[0] >= '0' && word[0] <= '9') {
      unsigned number = 0;
      auto [stop, error] = std::from_chars(word.data(), word.data() + word.size(), number);
      if (error != std::errc() || stop != word.data() + word.size()) return std::nullopt;
      if (word.size() == 4 && !year) {
        year = number;
      } else if (word.size() <= 2 && !day) {
        day = number;
      } else {
        return std::nullopt;
      }
    } else if (auto named = month_from_name(word); named && !month) {
      month = named;
    } else if (!(word == "UTC" || word == "GMT" || word == "Z")) {
      return std::nullopt;
    }
  }
  if (!month || !day || !year || *day < 1 || *day > days_in_month(*year, *month)) return std::nullopt;
  if (*year < kFirstYear || *year > kLastYear) return -1;  // Refused by the range check.
  return days_from_civil(*year, *month, *day) * 86400 + seconds;
}

Parsed parse_date(std::string_view text) {
  std::optional<std::int64_t> seconds;
  if (auto number = parse_unsigned(text)) {
    seconds = static_cast<std::int64_t>(std::min<std::uint64_t>(*number, 1ull << 40));
  } else {
    seconds = parse_date_words(text);
  }
  if (!seconds)
    return fail(fmt::format("'{}' is not a date (seconds, or like \"Jan 1 2024 00:00:00 UTC\")", text));
  if (*seconds < 0 || *seconds > 0xFFFFFFFF) {
    return fail(fmt::format("'{}' is outside the 32-bit date range (1970 to 2106)", text));
  }
  Wire out;
  append_be(out, static_cast<std::uint64_t>(*seconds), 4);
  return out;
}

void append_date(std::string& out, std::uint32_t seconds) {
  const std::int64_t days = seconds / 86400;
  const std::int64_t rest = seconds % 86400;
  const Civil civil = civil_from_days(days);
  // FreeRADIUS prints "%b %e %Y %H:%M:%S %Z": the day padded with a space.
  fmt::format_to(std::back_inserter(out), "{} {:>2} {} {:02}:{:02}:{:02} UTC", kMonths[civil.month - 1],
                 civil.day, civil.year, rest / 3600, rest / 60 % 60, rest % 60);
}

void append_address(std::string& out, int family, Bytes bytes) {
  if (family == AF_INET) {
    // inet_ntop's dotted quad, without its trip through printf or fmt's
    // format-string parse (the session text of every Accounting-Request
    // holds one: docs/accounting.md "Gateway accounting path").
    std::array<char, 15> quad;
    char* end = quad.data();
    for (std::size_t i = 0; i < 4; ++i) {
      if (i > 0) *end++ = '.';
      end = std::to_chars(end, quad.data() + quad.size(), bytes[i]).ptr;
    }
    out.append(quad.data(), end);
    return;
  }
  std::array<char, 64> buffer{};
  if (inet_ntop(family, bytes.data(), buffer.data(), buffer.size()) == nullptr) {
    append_hex(out, bytes);
    return;
  }
  out += buffer.data();
}

// A VALUE name that reads as a number ("56" in dictionary.usr) would parse
// back as that number, so the number is printed instead.
bool reads_as_number(std::string_view name) {
  if (!name.empty() && name[0] == '-') name.remove_prefix(1);
  return parse_unsigned(name).has_value();
}

void append_integer(std::string& out, const AttributeDef& def, Bytes value) {
  const std::uint64_t number = read_be(value);
  if (number <= 0xFFFFFFFF) {
    auto name = def.name_of_value(static_cast<std::uint32_t>(number));
    if (name && !reads_as_number(*name)) {
      out += *name;
      return;
    }
  }
  // std::to_chars prints what "{}" prints, without a format string to parse.
  std::array<char, 24> digits;
  const auto printed =
      def.data_type == DataType::kSigned
          ? std::to_chars(digits.data(), digits.data() + digits.size(), static_cast<std::int32_t>(number))
          : std::to_chars(digits.data(), digits.data() + digits.size(), number);
  out.append(digits.data(), printed.ptr);
}

void append_ipv6_prefix(std::string& out, Bytes value) {
  const unsigned length = value[1];
  std::array<std::uint8_t, 16> address{};
  std::memcpy(address.data(), value.data() + 2, value.size() - 2);
  append_address(out, AF_INET6, address);
  fmt::format_to(std::back_inserter(out), "/{}", length);
}

void append_ifid(std::string& out, Bytes value) {
  fmt::format_to(std::back_inserter(out), "{:04x}:{:04x}:{:04x}:{:04x}", read_be(value.subspan(0, 2)),
                 read_be(value.subspan(2, 2)), read_be(value.subspan(4, 2)), read_be(value.subspan(6, 2)));
}

void append_ether(std::string& out, Bytes value) {
  fmt::format_to(std::back_inserter(out), "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", value[0], value[1],
                 value[2], value[3], value[4], value[5]);
}

// The exact wire length of fixed-size types; nullopt for variable ones.
std::optional<std::size_t> fixed_size(DataType type) {
  switch (type) {
    case DataType::kIpAddr:
    case DataType::kInteger:
    case DataType::kSigned:
    case DataType::kDate:
      return 4;
    case DataType::kIpv6Addr:
      return 16;
    case DataType::kByte:
      return 1;
    case DataType::kShort:
      return 2;
    case DataType::kInteger64:
    case DataType::kIfid:
      return 8;
    case DataType::kEther:
    case DataType::kIpv4Prefix:
      return 6;
    default:
      return std::nullopt;
  }
}

bool well_formed(DataType type, Bytes value) {
  if (auto size = fixed_size(type)) {
    if (value.size() != *size) return false;
    return type != DataType::kIpv4Prefix || (value[0] == 0 && value[1] <= 32);
  }
  if (type == DataType::kIpv6Prefix) {
    return value.size() >= 2 && value.size() <= 18 && value[0] == 0 && value[1] <= 128 &&
           (value[1] + 7u) / 8u <= value.size() - 2;
  }
  if (type == DataType::kComboIp) return value.size() == 4 || value.size() == 16;
  return true;
}

}  // namespace

std::optional<std::uint64_t> parse_unsigned(std::string_view text) {
  int base = 10;
  if (has_hex_prefix(text)) {
    text.remove_prefix(2);
    base = 16;
  }
  if (text.empty()) return std::nullopt;
  std::uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

Result<std::vector<std::uint8_t>, std::string> parse_value(const AttributeDef& def, std::string_view text) {
  switch (def.data_type) {
    case DataType::kString:
      return Wire(text.begin(), text.end());
    case DataType::kOctets:
    case DataType::kAbinary:
    case DataType::kTlv:
    case DataType::kVsa:
    case DataType::kExtended:
    case DataType::kLongExtended:
    case DataType::kEvs:
      return parse_octets(def, text);
    case DataType::kIpAddr:
      return parse_ipv4(text);
    case DataType::kIpv6Addr:
      return parse_ipv6(text);
    case DataType::kIpv6Prefix:
      return parse_ipv6_prefix(text);
    case DataType::kIpv4Prefix:
      return parse_ipv4_prefix(text);
    case DataType::kByte:
      return parse_unsigned_value(def, text, 1);
    case DataType::kShort:
      return parse_unsigned_value(def, text, 2);
    case DataType::kInteger:
      return parse_unsigned_value(def, text, 4);
    case DataType::kInteger64:
      return parse_unsigned_value(def, text, 8);
    case DataType::kSigned:
      return parse_signed(def, text);
    case DataType::kDate:
      return parse_date(text);
    case DataType::kIfid:
      return parse_ifid(text);
    case DataType::kEther:
      return parse_ether(text);
    case DataType::kComboIp:
      return parse_combo_ip(text);
  }
  return fail(std::string("unknown data type"));
}

void append_value(std::string& out, const AttributeDef& def, Bytes value) {
  if (!well_formed(def.data_type, value)) {
    append_hex(out, value);
    return;
  }
  switch (def.data_type) {
    case DataType::kString:
      out += as_chars(value);
      return;
    case DataType::kIpAddr:
      append_address(out, AF_INET, value);
      return;
    case DataType::kIpv6Addr:
      append_address(out, AF_INET6, value);
      return;
    case DataType::kComboIp:
      append_address(out, value.size() == 4 ? AF_INET : AF_INET6, value);
      return;
    case DataType::kIpv6Prefix:
      append_ipv6_prefix(out, value);
      return;
    case DataType::kIpv4Prefix:
      append_address(out, AF_INET, value.subspan(2));
      fmt::format_to(std::back_inserter(out), "/{}", value[1]);
      return;
    case DataType::kByte:
    case DataType::kShort:
    case DataType::kInteger:
    case DataType::kInteger64:
    case DataType::kSigned:
      append_integer(out, def, value);
      return;
    case DataType::kDate:
      append_date(out, static_cast<std::uint32_t>(read_be(value)));
      return;
    case DataType::kIfid:
      append_ifid(out, value);
      return;
    case DataType::kEther:
      append_ether(out, value);
      return;
    default:
      append_hex(out, value);
      return;
  }
}

std::string format_value(const AttributeDef& def, Bytes value) {
  std::string out;
  append_value(out, def, value);
  return out;
}

}  // namespace rw::radius
