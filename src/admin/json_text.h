// Reading admin API answers with nlohmann-json without exceptions (its
// accessors throw on a type mismatch: docs/style.md §5): every value is
// checked before it is read. For this folder's .cc files.
#pragma once

#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "admin/session_filter.h"
#include "admin/text_table.h"

namespace rw::admin {

using Json = nlohmann::ordered_json;

// `body` parsed, or a discarded value when it is not JSON.
[[nodiscard]] inline Json parse_json(std::string_view body) {
  return Json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
}

// object[key], or null when `object` is not an object or has no `key`.
[[nodiscard]] inline const Json& member(const Json& object, std::string_view key) {
  static const Json kNull;
  if (!object.is_object()) return kNull;
  const auto found = object.find(std::string(key));
  return found == object.end() ? kNull : *found;
}

[[nodiscard]] inline std::optional<std::string> string_of(const Json& value) {
  if (!value.is_string()) return std::nullopt;
  return value.get_ref<const std::string&>();
}

[[nodiscard]] inline std::optional<std::int64_t> integer_of(const Json& value) {
  if (value.is_number_unsigned()) {
    const auto unsigned_value = value.get<std::uint64_t>();
    if (unsigned_value > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<std::int64_t>(unsigned_value);
  }
  if (value.is_number_integer()) return value.get<std::int64_t>();
  return std::nullopt;
}

// Any value as text for a table: strings as they are (made printable),
// numbers, yes/no, "-" for null, anything else as compact JSON.
[[nodiscard]] inline std::string text_of(const Json& value) {
  if (value.is_string()) return printable(value.get_ref<const std::string&>());
  if (value.is_null()) return "-";
  if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
  if (value.is_number_float()) {
    char text[64];
    std::snprintf(text, sizeof text, "%.1f", value.get<double>());
    return text;
  }
  return printable(value.dump(-1, ' ', false, Json::error_handler_t::replace));
}

// The text of session[key] when it is a string, else "".
[[nodiscard]] inline std::string_view text_field(const Json& session, std::string_view key) {
  const Json& value = member(session, key);
  return value.is_string() ? std::string_view(value.get_ref<const std::string&>()) : std::string_view();
}

// The first of `keys` the session has as a string, else "".
[[nodiscard]] inline std::string_view first_text(const Json& session,
                                                 std::initializer_list<std::string_view> keys) {
  for (const std::string_view key : keys) {
    if (const std::string_view text = text_field(session, key); !text.empty()) return text;
  }
  return {};
}

// A /sessions element's texts, as the filter and the tables read them.
[[nodiscard]] inline SessionFields session_fields_of(const Json& session) {
  return SessionFields{
      .user_name = text_field(session, "User-Name"),
      .nas_address = first_text(session, {"NAS-IP-Address", "NAS-IPv6-Address"}),
      .nas_identifier = text_field(session, "NAS-Identifier"),
      .client = text_field(session, "client"),
      .calling_station_id = text_field(session, "Calling-Station-Id"),
      .framed_address = first_text(session, {"Framed-IP-Address", "Framed-IPv6-Address"}),
      .acct_session_id = text_field(session, "Acct-Session-Id"),
      .unique_session_id = text_field(session, "Acct-Unique-Session-Id"),
  };
}

}  // namespace rw::admin
