// The shared pieces of the YAML config parsers (yaml_reader.h).
#include "config/yaml_reader.h"

#include <fmt/format.h>

#include <filesystem>

namespace rw::config {

std::string resolve_path(std::string_view path, std::string_view config_file) {
  std::filesystem::path written(path);
  if (written.is_absolute()) return written.lexically_normal().string();
  std::filesystem::path folder = std::filesystem::path(config_file).parent_path();
  if (folder.empty()) return written.lexically_normal().string();
  return (folder / written).lexically_normal().string();
}

std::optional<bool> parse_bool(std::string_view text) {
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  return std::nullopt;
}

SourceLocation YamlReader::at(const YAML::Node& node) const {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return SourceLocation{.file = file_, .line = 1, .column = 1};
  return SourceLocation{.file = file_, .line = mark.line + 1, .column = mark.column + 1};
}

SourceLocation YamlReader::value_at(const YAML::Node& value, const SourceLocation& key_where) const {
  if (value.Mark().is_null() || value.IsNull()) return key_where;
  return at(value);
}

std::optional<std::string> YamlReader::scalar(const YAML::Node& value, const SourceLocation& where,
                                              std::string_view what) {
  if (value.IsScalar()) return value.Scalar();
  errors_.push_back(value_at(value, where).error(fmt::format("expected {}", what)));
  return std::nullopt;
}

std::optional<ConfiguredPath> YamlReader::path(const YAML::Node& value, const SourceLocation& where) {
  std::optional<std::string> text = scalar(value, where, "a path");
  if (!text) return std::nullopt;
  if (text->empty()) {
    errors_.push_back(at(value).error("expected a path, got an empty string"));
    return std::nullopt;
  }
  return ConfiguredPath{.path = resolve_path(*text, file_), .where = where};
}

}  // namespace rw::config
