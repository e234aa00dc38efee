// Session filters (session_filter.h): parsing, normalising and matching.
#include "admin/session_filter.h"

#include <arpa/inet.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <utility>

#include "auth/mab.h"

namespace rw::admin {
namespace {

// The 16 bytes of an IPv6 address, or an IPv4 address mapped into them
// (::ffff:a.b.c.d), so that equal addresses compare equal in any notation.
std::optional<std::array<std::uint8_t, 16>> parse_address(std::string_view text) {
  if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  char buffer[INET6_ADDRSTRLEN] = {};
  std::memcpy(buffer, text.data(), text.size());
  std::array<std::uint8_t, 16> address{};
  if (::inet_pton(AF_INET, buffer, address.data() + 12) == 1) {
    address[10] = address[11] = 0xff;
    return address;
  }
  if (::inet_pton(AF_INET6, buffer, address.data()) == 1) return address;
  return std::nullopt;
}

bool same_address(std::string_view a, std::string_view b) {
  const auto left = parse_address(a);
  return left && left == parse_address(b);
}

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> percent_decode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int high = hex_value(text[i + 1]);
    const int low = hex_value(text[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high << 4 | low);
    i += 2;
  }
  return out;
}

void append_encoded(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (const char c : text) {
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                            c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += c;
    } else {
      const auto byte = static_cast<unsigned char>(c);
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
}

// The filter's fields with their query keys, in the order session_query writes them.
std::array<std::pair<std::string_view, std::optional<std::string> SessionFilter::*>, 5> fields() {
  return {{{"user", &SessionFilter::user},
           {"nas", &SessionFilter::nas},
           {"mac", &SessionFilter::mac},
           {"ip", &SessionFilter::ip},
           {"session", &SessionFilter::session}}};
}

}  // namespace

Result<SessionFilter, std::string> make_session_filter(SessionFilter given) {
  for (const auto& [key, field] : fields()) {
    if (given.*field && (given.*field)->empty())
      return fail("the " + std::string(key) + " filter must not be empty");
  }
  if (given.mac) {
    const std::optional<auth::MacAddress> mac = auth::parse_mac(*given.mac);
    if (!mac) {
      return fail("the mac filter '" + *given.mac +
                  "' is not a MAC address (aa:bb:cc:dd:ee:ff, AA-BB-CC-DD-EE-FF, aabb.ccdd.eeff or "
                  "aabbccddeeff)");
    }
    given.mac = std::string(auth::view(auth::canonical_mac(*mac)));
  }
  if (given.ip && !parse_address(*given.ip)) {
    return fail("the ip filter '" + *given.ip + "' is not an IPv4 or IPv6 address");
  }
  return given;
}

Result<SessionFilter, std::string> parse_session_query(std::string_view query) {
  SessionFilter filter;
  while (!query.empty()) {
    const std::size_t end = query.find('&');
    const std::string_view pair = query.substr(0, end);
    query = end == std::string_view::npos ? std::string_view() : query.substr(end + 1);
    if (pair.empty()) continue;
    const std::size_t equals = pair.find('=');
    const std::string_view key = pair.substr(0, equals);
    std::optional<std::string> value =
        percent_decode(equals == std::string_view::npos ? std::string_view() : pair.substr(equals + 1));
    if (!value) return fail("bad percent escape in the value of '" + std::string(key) + "'");
    bool known = false;
    for (const auto& [name, field] : fields()) {
      if (key != name) continue;
      if (filter.*field) return fail("'" + std::string(key) + "' given twice");
      filter.*field = std::move(*value);
      known = true;
      break;
    }
    if (!known) return fail("unknown filter '" + std::string(key) + "' (user, nas, mac, ip, session)");
  }
  return make_session_filter(std::move(filter));
}

std::string session_query(const SessionFilter& filter) {
  std::string out;
  for (const auto& [key, field] : fields()) {
    if (!(filter.*field)) continue;
    out += out.empty() ? '?' : '&';
    out += key;
    out += '=';
    append_encoded(out, *(filter.*field));
  }
  return out;
}

bool matches(const SessionFilter& filter, const SessionFields& session) {
  if (filter.user && *filter.user != session.user_name) return false;
  if (filter.nas && !same_address(*filter.nas, session.nas_address) &&
      *filter.nas != session.nas_identifier && *filter.nas != session.client) {
    return false;
  }
  if (filter.mac) {
    const std::optional<auth::MacAddress> mac = auth::parse_mac(session.calling_station_id);
    if (!mac || auth::view(auth::canonical_mac(*mac)) != *filter.mac) return false;
  }
  if (filter.ip && !same_address(*filter.ip, session.framed_address)) return false;
  if (filter.session && *filter.session != session.acct_session_id &&
      !equal_ignoring_case(*filter.session, session.unique_session_id)) {
    return false;
  }
  return true;
}

}  // namespace rw::admin
