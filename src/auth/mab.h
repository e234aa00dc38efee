// MAC Authentication Bypass (MAB): a switch or access point that meets a
// device without 802.1X sends its MAC address as User-Name (and usually as
// User-Password, CHAP secret or Calling-Station-Id). This file recognises MAC
// addresses in the notations NAS vendors use and decides whether an
// Access-Request is a MAB request. Pure: no I/O, no allocation.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rw::auth {

struct MacAddress {
  std::array<std::uint8_t, 6> octets{};
  friend bool operator==(const MacAddress&, const MacAddress&) = default;
};

// Parses a MAC address written as 12 hexadecimal digits (either case), bare
// or split into equal groups of 2, 4 or 6 digits by one separator used
// throughout, ':' '-' or '.': "aa:bb:cc:dd:ee:ff", "AA-BB-CC-DD-EE-FF",
// "aabb.ccdd.eeff", "aabbccddeeff", "aabbcc-ddeeff". nullopt for anything
// else, so it also answers "is this User-Name a MAC at all?".
[[nodiscard]] std::optional<MacAddress> parse_mac(std::string_view text);

// The canonical text of a MAC address: lower-case, colon-separated,
// "aa:bb:cc:dd:ee:ff" (the form Linux and IEEE 802 tooling print). Users
// files and SQL rows for MAB are looked up under this form.
using MacText = std::array<char, 17>;
[[nodiscard]] MacText canonical_mac(const MacAddress& mac);
[[nodiscard]] inline std::string_view view(const MacText& text) { return {text.data(), text.size()}; }

// Whether an Access-Request is a MAB request. The rule: User-Name and
// Calling-Station-Id both parse as MAC addresses and are the same address,
// and User-Password, when present, is that address too (in any notation), as
// Cisco, Aruba and HPE NASes send it. A request whose password is something
// else is an ordinary login by a user whose name happens to look like a MAC,
// and goes through normal authentication instead. Pass nullopt for
// user_password when the request has no User-Password (CHAP or EAP MAB).
// The canonical MAC form of a users-entry name that is a MAC address in any
// notation, or "" when it is not one (config::UsersLimits::alias_of).
[[nodiscard]] std::string mab_entry_alias(std::string_view name);

[[nodiscard]] bool is_mab_request(std::string_view user_name, std::string_view calling_station_id,
                                  std::optional<std::string_view> user_password = std::nullopt);

}  // namespace rw::auth
