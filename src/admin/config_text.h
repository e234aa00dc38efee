// `radiusward ctl config` for people (docs/admin_api.md "/config"): the
// files the process loaded as a table (path, what, size, load time, SHA-256),
// then every configuration key as an indented `key: value` list. Pure.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace rw::admin {

// The text of a /config body; an error sentence when the body is not what
// the admin API sends.
[[nodiscard]] Result<std::string, std::string> render_config(std::string_view body);

}  // namespace rw::admin
