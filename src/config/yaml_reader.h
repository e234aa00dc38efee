// The one reader of YAML config files that gateway_config.cc and
// member_config.cc are built on: positions of yaml-cpp nodes as
// `file:line:col`, the collected errors, key checking (unknown and repeated
// keys are errors), and typed getters (integers in a range, durations,
// strings, paths, booleans, addresses, lists) that record an error instead
// of failing.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/time.h"
#include "config/gateway_config.h"

namespace rw::config {

// Resolves a path written in the config file `config_file` against that
// file's folder; absolute paths are kept.
[[nodiscard]] std::string resolve_path(std::string_view path, std::string_view config_file);

// YAML 1.2 core schema booleans: true/True/TRUE, false/False/FALSE.
[[nodiscard]] std::optional<bool> parse_bool(std::string_view text);

// A decimal integer with nothing around it ("+5", " 5", "5s" are not).
[[nodiscard]] std::optional<std::int64_t> parse_integer(std::string_view text);

// The enumerator of `values` whose to_string() is `text`.
template <class Enum>
[[nodiscard]] std::optional<Enum> parse_named(std::string_view text, std::initializer_list<Enum> values) {
  for (Enum value : values) {
    if (text == to_string(value)) return value;
  }
  return std::nullopt;
}

// The unit a duration key's name ends in (`_us`, `_ms`, `_s`).
enum class DurationUnit : std::uint8_t { kMicroseconds, kMilliseconds, kSeconds };

// The base of a parser of one config file: errors are collected, never thrown.
class YamlReader {
 public:
  // Handles one key of a mapping; returns false when the key is unknown.
  using KeyHandler =
      std::function<bool(const std::string& key, const YAML::Node& value, const SourceLocation& where)>;

 protected:
  explicit YamlReader(std::string_view file_name) : file_(file_name) {}

  // Parses `text` with yaml-cpp and hands the document to `on_root`. Text
  // longer than `bytes_max` is refused before yaml-cpp sees it (its time and
  // memory stay small on hostile input); what yaml-cpp throws becomes an
  // error at the position it reports.
  void read_document(std::string_view text, std::size_t bytes_max,
                     const std::function<void(const YAML::Node&)>& on_root);

  // The 1-based position of `node`, or 1:1 when yaml-cpp has none.
  [[nodiscard]] SourceLocation at(const YAML::Node& node) const;
  // A null value (`key:` with nothing after it) has no position of its own;
  // errors about it point at the key.
  [[nodiscard]] SourceLocation value_at(const YAML::Node& value, const SourceLocation& key_where) const;

  // The document must be a non-empty mapping; false (with an error) if not.
  bool expect_root(const YAML::Node& root);
  // `value` must be a mapping: "expected a mapping <what>" if not.
  bool expect_map(const YAML::Node& value, const SourceLocation& where, std::string_view what);
  // Hands each key of `map` to `on_key`. A non-scalar key, a repeated key or
  // a key `on_key` does not know is an error naming `<section><key>`.
  // Returns the keys seen.
  std::set<std::string> each_key(const YAML::Node& map, std::string_view section, const KeyHandler& on_key);
  // "missing required key '<section><key>'" at `where` unless `seen` has it.
  void require(const std::set<std::string>& seen, std::string_view section, std::string_view key,
               const SourceLocation& where);
  // Calls `each` for every element of a sequence; "expected a list of <what>" otherwise.
  void sequence(const YAML::Node& value, const SourceLocation& where, std::string_view what,
                const std::function<void(const YAML::Node&)>& each);

  // The text of a scalar value, or an error "expected <what>".
  std::optional<std::string> scalar(const YAML::Node& value, const SourceLocation& where,
                                    std::string_view what);
  // A non-empty scalar: "expected <what>, got an empty string" otherwise.
  std::optional<std::string> non_empty(const YAML::Node& value, const SourceLocation& where,
                                       std::string_view what);
  // A non-empty path, resolved against the config file's folder.
  std::optional<ConfiguredPath> path(const YAML::Node& value, const SourceLocation& where);
  // A {ca, cert, key, crl} mapping of PEM paths (crl optional; with
  // `ca_path_allowed`, also ca_path, a folder); `section` prefixes key names
  // in errors ("cluster_tls.").
  std::optional<ClusterTlsConfig> tls_section(const YAML::Node& value, const SourceLocation& where,
                                              std::string_view section, bool ca_path_allowed = false);
  // An integer in [min, max].
  std::optional<std::int64_t> integer(const YAML::Node& value, const SourceLocation& where, std::int64_t min,
                                      std::int64_t max);
  // An integer count of `unit` in [min, max].
  std::optional<Duration> duration(const YAML::Node& value, const SourceLocation& where, DurationUnit unit,
                                   std::int64_t min, std::int64_t max);
  std::optional<bool> boolean(const YAML::Node& value, const SourceLocation& where);
  // "IPv4:port" or "[IPv6]:port" (parse_host_port), positioned at the value.
  std::optional<HostPort> address(const YAML::Node& value, const SourceLocation& where);
  // A `logging:` section, {level, format}, the same in every config.
  void logging(const YAML::Node& value, const SourceLocation& where, GatewayConfig::Logging& out);
  // One of a closed set of words: `parse` maps the text to a value or
  // nothing; `what` lists the words for the error.
  template <class Value, class Parse>
  std::optional<Value> choice(const YAML::Node& value, const SourceLocation& where, std::string_view what,
                              Parse parse) {
    std::optional<std::string> word = scalar(value, where, what);
    if (!word) return std::nullopt;
    std::optional<Value> parsed = parse(*word);
    if (!parsed) invalid(value, what, *word);
    return parsed;
  }

  // Sets `target` to an integer in [min, max] if the value is one.
  template <class Target>
  void set_integer(Target& target, const YAML::Node& value, const SourceLocation& where, std::int64_t min,
                   std::int64_t max) {
    if (auto parsed = integer(value, where, min, max)) target = static_cast<Target>(*parsed);
  }

  // "expected <what>, got '<text>'" at `value`.
  void invalid(const YAML::Node& value, std::string_view what, std::string_view text);

  std::string file_;
  ConfigErrors errors_;
};

// True if `endpoints` holds `endpoint` however written (HostPort::same_endpoint).
[[nodiscard]] bool listed(const std::vector<HostPort>& endpoints, const HostPort& endpoint);

// Reads a config file whole. An unreadable file is one error without a position.
[[nodiscard]] Result<std::string, ConfigErrors> read_config_file(const std::string& path);

}  // namespace rw::config
