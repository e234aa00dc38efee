// The restart-only keys of the member config, compared through the view of
// /config (config_view.h), which holds every value and no position.
#include "config/member_reload.h"

#include <fmt/format.h>

#include <string>
#include <string_view>

#include "config/config_view.h"

namespace rw::config {

bool is_member_reloadable_key(std::string_view key) { return key == "export" || key == "dictionary_dir"; }

ConfigErrors member_restart_changes(const MemberConfig& running, const MemberConfig& next) {
  const nlohmann::ordered_json before = member_config_json(running);
  const nlohmann::ordered_json after = member_config_json(next);
  ConfigErrors errors;
  for (const auto& [key, value] : after.items()) {
    if (key == "source_file" || is_member_reloadable_key(key)) continue;
    const nlohmann::ordered_json& old_value = before.at(key);
    if (old_value == value) continue;
    const auto found = next.key_where.find(key);
    const SourceLocation where =
        found != next.key_where.end() ? found->second : SourceLocation{.file = next.source_file};
    // A scalar says what it was and what it became; a section only that it changed.
    const std::string what =
        value.is_structured() || old_value.is_structured()
            ? fmt::format("the {} section changed", key)
            : fmt::format("{} changed from {} to {}", key, old_value.dump(), value.dump());
    errors.push_back(where.error(what + ": needs a restart (nothing was reloaded)"));
  }
  return errors;
}

}  // namespace rw::config
