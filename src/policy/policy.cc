// Deciding by the compiled policy: every condition is a scan of a short
// list or a binary search, over views of the request; nothing allocates.
#include "policy/policy.h"

#include <algorithm>
#include <cctype>

#include "base/assert.h"

namespace rw::policy {
namespace {

std::optional<int> hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return std::nullopt;
}

std::uint64_t mac_number(const std::array<std::uint8_t, 6>& octets, std::size_t length) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < length; ++i) value = value << 8 | octets[i];
  return value;
}

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

bool any_glob(const std::vector<std::string>& patterns, std::string_view text) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& pattern) { return glob_match(pattern, text); });
}

bool any_prefix(const std::vector<Prefix>& prefixes, const std::optional<Address>& address) {
  if (!address) return false;
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](const Prefix& prefix) { return contains(prefix, *address); });
}

bool mac_matches(const MacPrefix& prefix, const auth::MacAddress& mac) {
  return std::equal(prefix.octets.begin(), prefix.octets.begin() + prefix.length, mac.octets.begin());
}

}  // namespace

std::string_view to_string(Method method) {
  switch (method) {
    case Method::kNone:
      return "none";
    case Method::kPap:
      return "PAP";
    case Method::kChap:
      return "CHAP";
    case Method::kMsChap1:
      return "MS-CHAPv1";
    case Method::kMsChap2:
      return "MS-CHAPv2";
    case Method::kMab:
      return "MAB";
    case Method::kEap:
      return "EAP";
    case Method::kEapTls:
      return "EAP-TLS";
    case Method::kPeap:
      return "PEAP";
    case Method::kEapTtls:
      return "EAP-TTLS";
    case Method::kEapMd5:
      return "EAP-MD5";
    case Method::kCount:
      break;
  }
  return "unknown";
}

std::optional<MethodMask> parse_method(std::string_view word) {
  constexpr MethodMask kAnyEap = bit(Method::kEap) | bit(Method::kEapTls) | bit(Method::kPeap) |
                                 bit(Method::kEapTtls) | bit(Method::kEapMd5);
  if (equal_ignoring_case(word, "MS-CHAP")) return bit(Method::kMsChap1) | bit(Method::kMsChap2);
  if (equal_ignoring_case(word, "EAP")) return kAnyEap;
  if (equal_ignoring_case(word, "TTLS")) return bit(Method::kEapTtls);
  if (equal_ignoring_case(word, "MD5")) return bit(Method::kEapMd5);
  for (std::size_t i = 0; i < static_cast<std::size_t>(Method::kCount); ++i) {
    const auto method = static_cast<Method>(i);
    if (method != Method::kEap && method != Method::kNone && equal_ignoring_case(word, to_string(method)))
      return bit(method);
  }
  return std::nullopt;
}

bool contains(const Prefix& prefix, const Address& address) {
  if (prefix.address.is_v6 != address.is_v6) return false;
  const std::size_t whole = prefix.length / 8;
  if (!std::equal(prefix.address.bytes.begin(), prefix.address.bytes.begin() + whole, address.bytes.begin()))
    return false;
  const unsigned rest = prefix.length % 8;
  if (rest == 0) return true;
  const auto mask = static_cast<std::uint8_t>(0xff << (8 - rest));
  return (prefix.address.bytes[whole] & mask) == (address.bytes[whole] & mask);
}

std::optional<MacPrefix> parse_mac_prefix(std::string_view text) {
  if (const auto mac = auth::parse_mac(text)) return MacPrefix{.octets = mac->octets, .length = 6};
  // An OUI: "001122", or "00:11:22" / "00-11-22".
  std::string_view digits = text;
  std::array<char, 6> bare{};
  if (text.size() == 8 && (text[2] == ':' || text[2] == '-') && text[5] == text[2]) {
    bare = {text[0], text[1], text[3], text[4], text[6], text[7]};
    digits = std::string_view(bare.data(), bare.size());
  }
  if (digits.size() != 6) return std::nullopt;
  MacPrefix prefix{.length = 3};
  for (std::size_t i = 0; i < 3; ++i) {
    const auto high = hex_digit(digits[2 * i]);
    const auto low = hex_digit(digits[2 * i + 1]);
    if (!high || !low) return std::nullopt;
    prefix.octets[i] = static_cast<std::uint8_t>(*high << 4 | *low);
  }
  return prefix;
}

std::optional<std::string_view> ssid_of(std::string_view called_station_id) {
  // The MAC notations by length: "aa:bb:cc:dd:ee:ff", "aabb.ccdd.eeff",
  // "aabbcc-ddeeff", "aabbccddeeff".
  for (const std::size_t length : {17u, 14u, 13u, 12u}) {
    if (called_station_id.size() > length && called_station_id[length] == ':' &&
        auth::parse_mac(called_station_id.substr(0, length))) {
      return called_station_id.substr(length + 1);
    }
  }
  return std::nullopt;
}

bool glob_match(std::string_view pattern, std::string_view text) {
  // The classic two-pointer match: on a mismatch, the last `*` absorbs one
  // more character of the text. Each step advances the text or the last
  // star's resume point, so the time is bounded by |pattern| * |text|.
  std::size_t p = 0;
  std::size_t t = 0;
  std::size_t star = std::string_view::npos;
  std::size_t resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

int minute_of_week(std::int64_t unix_ms, int utc_offset_minutes) {
  // Floor division, so that times before 1970 are right too.
  std::int64_t minutes = unix_ms / 60'000;
  if (unix_ms % 60'000 < 0) --minutes;
  minutes += utc_offset_minutes;
  // 1970-01-01 was a Thursday: three days after a Monday.
  std::int64_t week = (minutes + 3 * kMinutesPerDay) % kMinutesPerWeek;
  if (week < 0) week += kMinutesPerWeek;
  return static_cast<int>(week);
}

bool in_window(const TimeWindow& window, int week_minute) {
  const int day = week_minute / kMinutesPerDay;
  const int minute = week_minute % kMinutesPerDay;
  const auto on = [&](int d) { return (window.days >> ((d + 7) % 7) & 1) != 0; };
  if (window.from < window.to) return on(day) && minute >= window.from && minute < window.to;
  // Past midnight: the evening of a listed day, or the morning after it.
  return (on(day) && minute >= window.from) || (on(day - 1) && minute < window.to);
}

Policy::Policy(Parts parts)
    : rules_(std::move(parts.rules)),
      groups_(std::move(parts.groups)),
      default_accept_(parts.default_accept),
      utc_offset_minutes_(parts.utc_offset_minutes),
      source_file_(std::move(parts.source_file)) {
  for (const Group& group : groups_) RW_ASSERT(std::is_sorted(group.members.begin(), group.members.end()));
  for (const Rule& rule : rules_) {
    for (const std::uint32_t group : rule.groups) RW_ASSERT(group < groups_.size());
  }
  const auto fill = [](MabList& list, const std::vector<MacPrefix>& entries) {
    for (const MacPrefix& entry : entries) {
      if (entry.length == 6) {
        list.macs.push_back(mac_number(entry.octets, 6));
      } else {
        list.ouis.push_back(static_cast<std::uint32_t>(mac_number(entry.octets, 3)));
      }
    }
    std::sort(list.macs.begin(), list.macs.end());
    std::sort(list.ouis.begin(), list.ouis.end());
  };
  fill(allow_, parts.mab_allow);
  fill(deny_, parts.mab_deny);
}

bool Policy::MabList::has(const auth::MacAddress& mac) const {
  return std::binary_search(macs.begin(), macs.end(), mac_number(mac.octets, 6)) ||
         std::binary_search(ouis.begin(), ouis.end(), static_cast<std::uint32_t>(mac_number(mac.octets, 3)));
}

MabListing Policy::mab_listing(const auth::MacAddress& mac) const {
  if (deny_.has(mac)) return MabListing::kDenied;
  if (allow_.has(mac)) return MabListing::kAllowed;
  return MabListing::kUnlisted;
}

std::size_t Policy::mab_entries() const {
  return allow_.macs.size() + allow_.ouis.size() + deny_.macs.size() + deny_.ouis.size();
}

bool Policy::member(std::uint32_t group, std::string_view user_name) const {
  const std::vector<std::string>& members = groups_[group].members;
  const auto found = std::lower_bound(members.begin(), members.end(), user_name,
                                      [](const std::string& a, std::string_view b) { return a < b; });
  return found != members.end() && *found == user_name;
}

bool Policy::matches(const Rule& rule, const Request& request, const std::optional<auth::MacAddress>& mac,
                     const std::optional<std::string_view>& ssid, int minute) const {
  if (rule.methods != 0 && (rule.methods & bit(request.method)) == 0) return false;
  if (!rule.users.empty() && !any_glob(rule.users, request.user_name)) return false;
  if (!rule.clients.empty() && !any_glob(rule.clients, request.client)) return false;
  if (!rule.client_addresses.empty() && !any_prefix(rule.client_addresses, request.client_address))
    return false;
  if (!rule.nas_ip_addresses.empty() && !any_prefix(rule.nas_ip_addresses, request.nas_ip_address))
    return false;
  if (!rule.nas_identifiers.empty() && !any_glob(rule.nas_identifiers, request.nas_identifier)) return false;
  if (!rule.ssids.empty() && (!ssid || !any_glob(rule.ssids, *ssid))) return false;
  if (!rule.macs.empty()) {
    if (!mac) return false;
    if (std::none_of(rule.macs.begin(), rule.macs.end(),
                     [&](const MacPrefix& prefix) { return mac_matches(prefix, *mac); }))
      return false;
  }
  // Certificate fields hold only when the method supplied them.
  if (!rule.cert_subject_cns.empty() &&
      (request.cert_subject_cn.empty() || !any_glob(rule.cert_subject_cns, request.cert_subject_cn)))
    return false;
  if (!rule.cert_issuers.empty() &&
      (request.cert_issuer.empty() || !any_glob(rule.cert_issuers, request.cert_issuer)))
    return false;
  if (!rule.groups.empty() && std::none_of(rule.groups.begin(), rule.groups.end(), [&](std::uint32_t group) {
        return member(group, request.user_name);
      }))
    return false;
  if (!rule.times.empty() &&
      std::none_of(rule.times.begin(), rule.times.end(),
                   [&](const TimeWindow& window) { return in_window(window, minute); }))
    return false;
  return true;
}

Decision Policy::decide(const Request& request) const {
  const std::optional<auth::MacAddress> mac = auth::parse_mac(request.calling_station_id);
  const std::optional<std::string_view> ssid = ssid_of(request.called_station_id);
  const int minute = minute_of_week(request.unix_ms, utc_offset_minutes_);
  for (const Rule& rule : rules_) {
    if (matches(rule, request, mac, ssid, minute)) return Decision{.rule = &rule, .accept = rule.accept};
  }
  return Decision{.rule = nullptr, .accept = default_accept_};
}

}  // namespace rw::policy
