// What the YAML config parsers (gateway_config.cc, member_config.cc) share:
// positions of yaml-cpp nodes as `file:line:col`, the collected errors, and
// the readers of scalars and paths that record an error instead of failing.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <string_view>

#include "config/gateway_config.h"

namespace rw::config {

// Resolves a path written in the config file `config_file` against that
// file's folder; absolute paths are kept.
[[nodiscard]] std::string resolve_path(std::string_view path, std::string_view config_file);

// YAML 1.2 core schema booleans: true/True/TRUE, false/False/FALSE.
[[nodiscard]] std::optional<bool> parse_bool(std::string_view text);

// The base of a parser of one config file: errors are collected, never thrown.
class YamlReader {
 protected:
  explicit YamlReader(std::string_view file_name) : file_(file_name) {}

  // The 1-based position of `node`, or 1:1 when yaml-cpp has none.
  [[nodiscard]] SourceLocation at(const YAML::Node& node) const;
  // A null value (`key:` with nothing after it) has no position of its own;
  // errors about it point at the key.
  [[nodiscard]] SourceLocation value_at(const YAML::Node& value, const SourceLocation& key_where) const;
  // The text of a scalar value, or an error "expected <what>".
  std::optional<std::string> scalar(const YAML::Node& value, const SourceLocation& where,
                                    std::string_view what);
  // A non-empty path, resolved against the config file's folder.
  std::optional<ConfiguredPath> path(const YAML::Node& value, const SourceLocation& where);
  // A {ca, cert, key, crl} mapping of PEM paths (crl optional); `section`
  // prefixes key names in errors ("cluster_tls.").
  std::optional<ClusterTlsConfig> tls_section(const YAML::Node& value, const SourceLocation& where,
                                              std::string_view section);

  std::string file_;
  ConfigErrors errors_;
};

}  // namespace rw::config
