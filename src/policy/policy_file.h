// The policy file (docs/policy.md "The file"): YAML text in, a compiled
// Policy out, or every error found, each as `file:line:col: message`
// (docs/design.md invariant 5). Unknown keys, unknown groups, repeated rule
// names and values past the bounds (policy.h, Limits) are errors.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"
#include "config/gateway_config.h"
#include "policy/policy.h"

namespace rw::policy {

// Parses `text`; `file_name` goes into the errors. Reads no file.
[[nodiscard]] Result<Policy, config::ConfigErrors> parse_policy(std::string_view text,
                                                                std::string_view file_name,
                                                                const Limits& limits = {});

// Reads `path` and parses it. An unreadable file is one error without a position.
[[nodiscard]] Result<Policy, config::ConfigErrors> load_policy(const std::string& path,
                                                               const Limits& limits = {});

}  // namespace rw::policy
