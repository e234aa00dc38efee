// The one YAML config reader (yaml_reader.h).
#include "config/yaml_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

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

std::optional<std::int64_t> parse_integer(std::string_view text) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

void YamlReader::read_document(std::string_view text, std::size_t bytes_max,
                               const std::function<void(const YAML::Node&)>& on_root) {
  if (text.size() > bytes_max) {
    errors_.push_back(
        ConfigError{.file = file_, .message = fmt::format("the file is larger than {} bytes", bytes_max)});
    return;
  }
  try {
    on_root(YAML::Load(std::string(text)));
  } catch (const YAML::Exception& error) {
    // yaml-cpp's marks are 0-based; ours are 1-based.
    const YAML::Mark& mark = error.mark;
    errors_.push_back(ConfigError{.file = file_,
                                  .line = mark.is_null() ? 0 : mark.line + 1,
                                  .column = mark.is_null() ? 0 : mark.column + 1,
                                  .message = error.msg});
  } catch (const std::exception& error) {
    errors_.push_back(ConfigError{.file = file_, .message = error.what()});
  }
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

bool YamlReader::expect_root(const YAML::Node& root) {
  if (!root.IsDefined() || root.IsNull()) {
    errors_.push_back(at(root).error("the configuration is empty"));
    return false;
  }
  if (!root.IsMap()) {
    errors_.push_back(at(root).error("the configuration must be a mapping of keys to values"));
    return false;
  }
  return true;
}

bool YamlReader::expect_map(const YAML::Node& value, const SourceLocation& where, std::string_view what) {
  if (value.IsMap()) return true;
  errors_.push_back(value_at(value, where).error(fmt::format("expected a mapping {}", what)));
  return false;
}

std::set<std::string> YamlReader::each_key(const YAML::Node& map, std::string_view section,
                                           const KeyHandler& on_key) {
  std::set<std::string> seen;
  for (const auto& entry : map) {
    const SourceLocation where = at(entry.first);
    if (!entry.first.IsScalar()) {
      errors_.push_back(where.error("keys must be plain words"));
      continue;
    }
    const std::string& key = entry.first.Scalar();
    if (!seen.insert(key).second) {
      errors_.push_back(where.error(fmt::format("duplicate key '{}{}'", section, key)));
    } else if (!on_key(key, entry.second, where)) {
      errors_.push_back(where.error(fmt::format("unknown key '{}{}'", section, key)));
    }
  }
  return seen;
}

void YamlReader::require(const std::set<std::string>& seen, std::string_view section, std::string_view key,
                         const SourceLocation& where) {
  if (!seen.contains(std::string(key)))
    errors_.push_back(where.error(fmt::format("missing required key '{}{}'", section, key)));
}

void YamlReader::sequence(const YAML::Node& value, const SourceLocation& where, std::string_view what,
                          const std::function<void(const YAML::Node&)>& each) {
  if (!value.IsSequence()) {
    errors_.push_back(value_at(value, where).error(fmt::format("expected a list of {}", what)));
    return;
  }
  for (const auto& element : value) each(element);
}

std::optional<std::string> YamlReader::scalar(const YAML::Node& value, const SourceLocation& where,
                                              std::string_view what) {
  if (value.IsScalar()) return value.Scalar();
  errors_.push_back(value_at(value, where).error(fmt::format("expected {}", what)));
  return std::nullopt;
}

std::optional<std::string> YamlReader::non_empty(const YAML::Node& value, const SourceLocation& where,
                                                 std::string_view what) {
  std::optional<std::string> written = scalar(value, where, what);
  if (written && written->empty()) {
    errors_.push_back(at(value).error(fmt::format("expected {}, got an empty string", what)));
    return std::nullopt;
  }
  return written;
}

std::optional<ConfiguredPath> YamlReader::path(const YAML::Node& value, const SourceLocation& where) {
  std::optional<std::string> written = non_empty(value, where, "a path");
  if (!written) return std::nullopt;
  return ConfiguredPath{.path = resolve_path(*written, file_), .where = where};
}

std::optional<std::int64_t> YamlReader::integer(const YAML::Node& value, const SourceLocation& where,
                                                std::int64_t min, std::int64_t max) {
  const std::string what = fmt::format("an integer between {} and {}", min, max);
  std::optional<std::string> written = scalar(value, where, what);
  if (!written) return std::nullopt;
  std::optional<std::int64_t> number = parse_integer(*written);
  if (!number || *number < min || *number > max) {
    invalid(value, what, *written);
    return std::nullopt;
  }
  return number;
}

std::optional<Duration> YamlReader::duration(const YAML::Node& value, const SourceLocation& where,
                                             DurationUnit unit, std::int64_t min, std::int64_t max) {
  std::optional<std::int64_t> count = integer(value, where, min, max);
  if (!count) return std::nullopt;
  switch (unit) {
    case DurationUnit::kMicroseconds:
      return Duration::microseconds(*count);
    case DurationUnit::kMilliseconds:
      return Duration::milliseconds(*count);
    case DurationUnit::kSeconds:
      return Duration::seconds(*count);
  }
  return std::nullopt;
}

std::optional<bool> YamlReader::boolean(const YAML::Node& value, const SourceLocation& where) {
  return choice<bool>(value, where, "true or false", parse_bool);
}

std::optional<HostPort> YamlReader::address(const YAML::Node& value, const SourceLocation& where) {
  std::optional<HostPort> parsed = choice<HostPort>(value, where, kHostPortWhat, parse_host_port);
  if (parsed) parsed->where = at(value);
  return parsed;
}

void YamlReader::logging(const YAML::Node& value, const SourceLocation& where, GatewayConfig::Logging& out) {
  if (!expect_map(value, where, "with 'level' and 'format'")) return;
  each_key(value, "logging.",
           [&](const std::string& key, const YAML::Node& item, const SourceLocation& at_key) {
             if (key == "level") {
               constexpr std::string_view kWhat = "one of trace, debug, info, warn, error, off";
               if (auto level = choice<LogLevel>(item, at_key, kWhat, parse_log_level)) out.level = *level;
             } else if (key == "format") {
               auto parse = [](std::string_view word) {
                 return parse_named(word, {LogFormat::kText, LogFormat::kJson});
               };
               if (auto format = choice<LogFormat>(item, at_key, "text or json", parse)) out.format = *format;
             } else {
               return false;
             }
             return true;
           });
}

bool listed(const std::vector<HostPort>& endpoints, const HostPort& endpoint) {
  return std::any_of(endpoints.begin(), endpoints.end(),
                     [&](const HostPort& other) { return other.same_endpoint(endpoint); });
}

void YamlReader::invalid(const YAML::Node& value, std::string_view what, std::string_view written) {
  errors_.push_back(at(value).error(fmt::format("expected {}, got '{}'", what, written)));
}

Result<std::string, ConfigErrors> read_config_file(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) {
    return fail(ConfigErrors{
        ConfigError{.file = path, .message = fmt::format("cannot read: {}", std::strerror(errno))}});
  }
  std::string text(std::istreambuf_iterator<char>(stream), {});
  if (stream.bad()) return fail(ConfigErrors{ConfigError{.file = path, .message = "read error"}});
  return text;
}

std::optional<ClusterTlsConfig> YamlReader::tls_section(const YAML::Node& value, const SourceLocation& where,
                                                        std::string_view section, bool ca_path_allowed) {
  if (!expect_map(value, where, "with ca, cert, key and optionally crl")) return std::nullopt;
  ClusterTlsConfig tls{.where = where};
  bool complete = true;
  const std::set<std::string> seen = each_key(
      value, section, [&](const std::string& key, const YAML::Node& item, const SourceLocation& at_key) {
        if (key == "crl") {
          tls.crl = path(item, at_key);
          complete = complete && tls.crl.has_value();
          return true;
        }
        if (key == "ca_path" && ca_path_allowed) {
          tls.ca_path = path(item, at_key);
          complete = complete && tls.ca_path.has_value();
          return true;
        }
        ConfiguredPath* target = key == "ca"     ? &tls.ca
                                 : key == "cert" ? &tls.cert
                                 : key == "key"  ? &tls.key
                                                 : nullptr;
        if (target == nullptr) return false;
        std::optional<ConfiguredPath> file = path(item, at_key);
        if (file) *target = std::move(*file);
        complete = complete && file.has_value();
        return true;
      });
  for (std::string_view key : {"ca", "cert", "key"}) {
    if (!seen.contains(std::string(key))) complete = false;
    require(seen, section, key, value_at(value, where));
  }
  if (!complete) return std::nullopt;
  return tls;
}

}  // namespace rw::config
