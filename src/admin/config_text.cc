// `ctl config`'s text (config_text.h), built with nlohmann-json; its
// exceptions stay inside this file (docs/style.md §5).
#include "admin/config_text.h"

#include <nlohmann/json.hpp>
#include <vector>

#include "admin/text_table.h"

namespace rw::admin {
namespace {

using nlohmann::json;

std::string scalar_text(const json& value) {
  if (value.is_null()) return "-";
  if (value.is_string()) return printable(value.get<std::string>());
  return printable(value.dump());
}

// Objects nest as headings; arrays of scalars join on one line; arrays of
// objects list each object under "[i]".
void add_rows(std::vector<KeyValue>& rows, const json& object, int depth) {
  for (const auto& [key, value] : object.items()) {
    if (value.is_object()) {
      rows.push_back(KeyValue{depth, printable(key), ""});
      add_rows(rows, value, depth + 1);
    } else if (value.is_array() && !value.empty() && value.front().is_object()) {
      rows.push_back(KeyValue{depth, printable(key), ""});
      for (std::size_t i = 0; i < value.size(); ++i) {
        rows.push_back(KeyValue{depth + 1, "[" + std::to_string(i) + "]", ""});
        if (value[i].is_object()) add_rows(rows, value[i], depth + 2);
      }
    } else if (value.is_array()) {
      std::string joined;
      for (const json& element : value) joined += (joined.empty() ? "" : ", ") + scalar_text(element);
      rows.push_back(KeyValue{depth, printable(key), joined.empty() ? "(none)" : joined});
    } else {
      rows.push_back(KeyValue{depth, printable(key), scalar_text(value)});
    }
  }
}

}  // namespace

Result<std::string, std::string> render_config(std::string_view body) {
  const json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return fail(std::string("the /config answer is not a JSON object"));
  const auto config = parsed.find("config");
  const auto files = parsed.find("files");
  if (config == parsed.end() || !config->is_object() || files == parsed.end() || !files->is_array()) {
    return fail(std::string("the /config answer has no \"config\" object or no \"files\" array"));
  }
  std::vector<std::vector<std::string>> file_rows;
  for (const json& file : *files) {
    if (!file.is_object()) return fail(std::string("a /config file entry is not an object"));
    const auto field = [&](const char* name) {
      const auto found = file.find(name);
      return found == file.end() ? std::string("-") : scalar_text(*found);
    };
    file_rows.push_back({field("path"), field("what"), field("size"), field("loaded"), field("sha256")});
  }
  const auto role = parsed.find("role");
  std::string text = "role  " + (role != parsed.end() ? scalar_text(*role) : std::string("-")) + "\n\n";
  text += render_columns({"PATH", "WHAT", "SIZE", "LOADED (UTC)", "SHA-256"}, file_rows, {2});
  text += "\n";
  std::vector<KeyValue> rows;
  add_rows(rows, *config, 0);
  text += render_key_values(rows);
  return text;
}

}  // namespace rw::admin
