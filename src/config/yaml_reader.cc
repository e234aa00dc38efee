// The shared pieces of the YAML config parsers (yaml_reader.h).
#include "config/yaml_reader.h"

#include <fmt/format.h>

#include <filesystem>
#include <set>

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

std::optional<ClusterTlsConfig> YamlReader::tls_section(const YAML::Node& value, const SourceLocation& where,
                                                        std::string_view section) {
  if (!value.IsMap()) {
    errors_.push_back(
        value_at(value, where).error("expected a mapping with ca, cert, key and optionally crl"));
    return std::nullopt;
  }
  ClusterTlsConfig tls{.where = where};
  std::set<std::string> seen;
  bool complete = true;
  for (const auto& entry : value) {
    const SourceLocation key_where = at(entry.first);
    if (!entry.first.IsScalar()) {
      errors_.push_back(key_where.error("keys must be plain words"));
      continue;
    }
    const std::string& key = entry.first.Scalar();
    if (!seen.insert(key).second) {
      errors_.push_back(key_where.error(fmt::format("duplicate key '{}{}'", section, key)));
      continue;
    }
    ConfiguredPath* target = key == "ca"     ? &tls.ca
                             : key == "cert" ? &tls.cert
                             : key == "key"  ? &tls.key
                                             : nullptr;
    if (key == "crl") {
      tls.crl = path(entry.second, key_where);
      complete = complete && tls.crl.has_value();
    } else if (target == nullptr) {
      errors_.push_back(key_where.error(fmt::format("unknown key '{}{}'", section, key)));
    } else if (std::optional<ConfiguredPath> file = path(entry.second, key_where)) {
      *target = std::move(*file);
    } else {
      complete = false;
    }
  }
  for (std::string_view key : {"ca", "cert", "key"}) {
    if (!seen.contains(std::string(key))) {
      errors_.push_back(
          value_at(value, where).error(fmt::format("missing required key '{}{}'", section, key)));
      complete = false;
    }
  }
  if (!complete) return std::nullopt;
  return tls;
}

}  // namespace rw::config
