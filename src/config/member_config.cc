// Parsing and validation of a member's YAML configuration. yaml-cpp throws;
// every call into it is inside parse_member_config's try block, and its
// exceptions become ConfigErrors at the position yaml-cpp reports.
#include "config/member_config.h"

#include "config/yaml_reader.h"

#include <arpa/inet.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <set>

#include <fmt/format.h>

namespace rw::config {
namespace {

// A member config is a few kilobytes; the bound keeps yaml-cpp's time and
// memory small on hostile input.
constexpr std::size_t kMemberConfigBytesMax = 256 * 1024;

std::optional<std::uint64_t> parse_unsigned(std::string_view text) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
  return value;
}

// Reads one mapping of the YAML tree: each key is handed to `on_key`; a
// repeated key or a non-scalar key is an error.
class MemberParser : YamlReader {
 public:
  explicit MemberParser(std::string_view file_name) : YamlReader(file_name) {
    config_.source_file = file_;
    config_.dictionary_dir =
        ConfiguredPath{.path = std::string(kDefaultDictionaryDir), .where = SourceLocation{.file = file_}};
  }

  void parse_root(const YAML::Node& root) {
    if (!root.IsDefined() || root.IsNull() || !root.IsMap()) {
      errors_.push_back(at(root).error("the configuration must be a mapping of keys to values"));
      return;
    }
    const std::set<std::string> seen =
        each_key(root, "", [&](const std::string& key, const YAML::Node& value, const SourceLocation& where) {
          return on_top_level(key, value, where);
        });
    for (std::string_view key : {"id", "data_dir", "raft_address", "submission_listen", "members"}) {
      if (!seen.contains(std::string(key)))
        errors_.push_back(at(root).error(fmt::format("missing required key '{}'", key)));
    }
    if (seen.contains("id") && seen.contains("raft_address") && seen.contains("members")) check_own_entry();
  }

  ConfigErrors& errors() { return errors_; }
  MemberConfig& config() { return config_; }

 private:
  // Returns false for an unknown key.
  using KeyHandler = std::function<bool(const std::string&, const YAML::Node&, const SourceLocation&)>;

  std::set<std::string> each_key(const YAML::Node& map, std::string_view section, const KeyHandler& on_key) {
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

  bool expect_map(const YAML::Node& value, const SourceLocation& where, std::string_view what) {
    if (value.IsMap()) return true;
    errors_.push_back(value_at(value, where).error(fmt::format("expected a mapping {}", what)));
    return false;
  }

  std::optional<std::uint64_t> number(const YAML::Node& value, const SourceLocation& where, std::uint64_t min,
                                      std::uint64_t max) {
    const std::string what = fmt::format("an integer between {} and {}", min, max);
    std::optional<std::string> text = scalar(value, where, what);
    if (!text) return std::nullopt;
    std::optional<std::uint64_t> parsed = parse_unsigned(*text);
    if (!parsed || *parsed < min || *parsed > max) {
      errors_.push_back(at(value).error(fmt::format("expected {}, got '{}'", what, *text)));
      return std::nullopt;
    }
    return parsed;
  }

  std::optional<Ipv4Endpoint> endpoint(const YAML::Node& value, const SourceLocation& where) {
    constexpr std::string_view kWhat = "an IPv4 address and port such as 127.0.0.1:7201";
    std::optional<std::string> text = scalar(value, where, kWhat);
    if (!text) return std::nullopt;
    std::optional<Ipv4Endpoint> parsed = parse_ipv4_endpoint(*text);
    if (!parsed) {
      errors_.push_back(at(value).error(fmt::format("expected {}, got '{}'", kWhat, *text)));
      return std::nullopt;
    }
    parsed->where = at(value);
    return parsed;
  }

  std::optional<bool> boolean(const YAML::Node& value, const SourceLocation& where) {
    std::optional<std::string> text = scalar(value, where, "true or false");
    if (!text) return std::nullopt;
    // YAML 1.2 core schema booleans.
    if (*text == "true" || *text == "True" || *text == "TRUE") return true;
    if (*text == "false" || *text == "False" || *text == "FALSE") return false;
    errors_.push_back(at(value).error(fmt::format("expected true or false, got '{}'", *text)));
    return std::nullopt;
  }

  template <class Target>
  void set_number(Target& target, const YAML::Node& value, const SourceLocation& where, std::uint64_t min,
                  std::uint64_t max) {
    if (auto parsed = number(value, where, min, max)) target = static_cast<Target>(*parsed);
  }

  bool on_top_level(const std::string& key, const YAML::Node& value, const SourceLocation& where) {
    if (key == "id") {
      set_number(config_.id, value, where, 1, kMemberIdMax);
    } else if (key == "data_dir") {
      if (auto dir = path(value, where)) config_.data_dir = std::move(*dir);
    } else if (key == "raft_address") {
      if (auto address = endpoint(value, where)) config_.raft_address = std::move(*address);
    } else if (key == "submission_listen") {
      if (auto address = endpoint(value, where)) config_.submission_listen = std::move(*address);
    } else if (key == "admin_socket") {
      if (!value.IsNull()) config_.admin_socket = path(value, where);
    } else if (key == "bootstrap") {
      if (auto flag = boolean(value, where)) config_.bootstrap = *flag;
    } else if (key == "members") {
      on_members(value, where);
    } else if (key == "raft") {
      on_raft(value, where);
    } else if (key == "ledger") {
      on_ledger(value, where);
    } else if (key == "export") {
      on_export(value, where);
    } else if (key == "dictionary_dir") {
      config_.dictionary_dir_optional = false;
      config_.dictionary_dir.reset();
      // `dictionary_dir:` with no value: the built-in dictionary only.
      if (!value.IsNull()) config_.dictionary_dir = path(value, where);
    } else if (key == "logging") {
      on_logging(value, where);
    } else {
      return false;
    }
    return true;
  }

  void on_members(const YAML::Node& value, const SourceLocation& where) {
    if (!value.IsSequence() || value.size() == 0 || value.size() > kMembersMax) {
      errors_.push_back(
          value_at(value, where)
              .error(
                  fmt::format("expected a list of 1 to {} members ({{id, raft, submission}})", kMembersMax)));
      return;
    }
    std::map<std::uint64_t, SourceLocation> ids;
    std::set<std::string> raft_addresses;
    std::set<std::string> submission_addresses;
    for (const auto& element : value) {
      std::optional<MemberAddress> member = member_entry(element);
      if (!member) continue;
      if (!ids.emplace(member->id, member->where).second) {
        errors_.push_back(member->where.error(fmt::format("member id {} is listed twice", member->id)));
        continue;
      }
      if (!raft_addresses.insert(member->raft.text).second)
        errors_.push_back(
            member->raft.where.error(fmt::format("raft address {} is listed twice", member->raft.text)));
      if (!submission_addresses.insert(member->submission.text).second) {
        errors_.push_back(member->submission.where.error(
            fmt::format("submission address {} is listed twice", member->submission.text)));
      }
      config_.members.push_back(std::move(*member));
    }
  }

  std::optional<MemberAddress> member_entry(const YAML::Node& element) {
    const SourceLocation where = at(element);
    if (!expect_map(element, where, "with id, raft and submission")) return std::nullopt;
    MemberAddress member{.where = where};
    bool complete = true;
    const std::set<std::string> seen =
        each_key(element, "members.",
                 [&](const std::string& key, const YAML::Node& value, const SourceLocation& at_key) {
                   std::optional<Ipv4Endpoint> address;
                   if (key == "id") {
                     std::optional<std::uint64_t> id = number(value, at_key, 1, kMemberIdMax);
                     complete = complete && id.has_value();
                     member.id = id.value_or(0);
                     return true;
                   }
                   if (key != "raft" && key != "submission") return false;
                   address = endpoint(value, at_key);
                   complete = complete && address.has_value();
                   (key == "raft" ? member.raft : member.submission) = address.value_or(Ipv4Endpoint{});
                   return true;
                 });
    for (std::string_view key : {"id", "raft", "submission"}) {
      if (!seen.contains(std::string(key))) {
        errors_.push_back(where.error(fmt::format("member entry misses '{}'", key)));
        complete = false;
      }
    }
    if (!complete) return std::nullopt;
    return member;
  }

  void on_raft(const YAML::Node& value, const SourceLocation& where) {
    if (!expect_map(value, where, "of raft settings")) return;
    MemberConfig::Raft& raft = config_.raft;
    each_key(value, "raft.",
             [&](const std::string& key, const YAML::Node& item, const SourceLocation& at_key) {
               if (key == "election_timeout_ms") {
                 set_number(raft.election_timeout_ms, item, at_key, 50, 60'000);
               } else if (key == "heartbeat_timeout_ms") {
                 set_number(raft.heartbeat_timeout_ms, item, at_key, 5, 10'000);
               } else if (key == "snapshot_threshold") {
                 set_number(raft.snapshot_threshold, item, at_key, 16, 1'000'000'000);
               } else if (key == "snapshot_trailing") {
                 set_number(raft.snapshot_trailing, item, at_key, 0, 1'000'000'000);
               } else {
                 return false;
               }
               return true;
             });
    if (raft.heartbeat_timeout_ms * 2 > raft.election_timeout_ms) {
      errors_.push_back(
          value_at(value, where)
              .error(fmt::format(
                  "raft.heartbeat_timeout_ms ({}) must be at most half of raft.election_timeout_ms ({})",
                  raft.heartbeat_timeout_ms, raft.election_timeout_ms)));
    }
  }

  void on_ledger(const YAML::Node& value, const SourceLocation& where) {
    if (!expect_map(value, where, "of ledger bounds")) return;
    MemberConfig::Ledger& ledger = config_.ledger;
    each_key(value, "ledger.",
             [&](const std::string& key, const YAML::Node& item, const SourceLocation& at_key) {
               if (key == "held_records_max") {
                 set_number(ledger.held_records_max, item, at_key, 1, 100'000'000);
               } else if (key == "held_bytes_max") {
                 set_number(ledger.held_bytes_max, item, at_key, 4096, std::uint64_t{64} << 30);
               } else if (key == "sessions_max") {
                 set_number(ledger.sessions_max, item, at_key, 0, 100'000'000);
               } else {
                 return false;
               }
               return true;
             });
  }

  // export: {sqlite: FILE} or {postgresql: {conninfo, sslmode, ...}}, plus
  // batch and retry bounds. `export:` with no value means no exporter.
  void on_export(const YAML::Node& value, const SourceLocation& where) {
    if (value.IsNull()) return;
    if (!expect_map(value, where, "with sqlite or postgresql")) return;
    MemberConfig::Export out;
    bool postgresql = false;
    each_key(value, "export.",
             [&](const std::string& key, const YAML::Node& item, const SourceLocation& at_key) {
               if (key == "sqlite") {
                 out.sqlite = path(item, at_key);
               } else if (key == "postgresql") {
                 postgresql = true;
                 on_postgresql(item, at_key, out);
               } else if (key == "batch_records_max") {
                 set_number(out.batch_records_max, item, at_key, 1, 100'000);
               } else if (key == "poll_interval_ms") {
                 set_number(out.poll_interval_ms, item, at_key, 1, 10'000);
               } else if (key == "retry_initial_ms") {
                 set_number(out.retry_initial_ms, item, at_key, 1, 60'000);
               } else if (key == "retry_max_ms") {
                 set_number(out.retry_max_ms, item, at_key, 1, 3'600'000);
               } else {
                 return false;
               }
               return true;
             });
    if (out.sqlite.has_value() == postgresql) {
      errors_.push_back(value_at(value, where).error("export needs exactly one of sqlite or postgresql"));
      return;
    }
    if (out.retry_initial_ms > out.retry_max_ms) {
      errors_.push_back(
          value_at(value, where).error("export.retry_initial_ms must not exceed export.retry_max_ms"));
    }
    config_.exporter = std::move(out);
  }

  // libpq keywords: conninfo as given, then each TLS key as keyword='value'
  // (libpq quoting: backslash before ' and \).
  void on_postgresql(const YAML::Node& value, const SourceLocation& where, MemberConfig::Export& out) {
    if (!expect_map(value, where, "with conninfo and TLS options")) return;
    std::string conninfo;
    std::string options;
    each_key(value, "export.postgresql.",
             [&](const std::string& key, const YAML::Node& item, const SourceLocation& at_key) {
               static const std::set<std::string> kTls = {"sslmode",  "sslrootcert",     "sslcert",
                                                          "sslkey",   "sslcrl",          "sslpassword",
                                                          "passfile", "application_name"};
               if (set_timeout(out.postgresql_timeouts, key, item, at_key)) return true;
               if (key != "conninfo" && !kTls.contains(key)) return false;
               std::optional<std::string> text = scalar(item, at_key, "a string");
               if (!text) return true;
               if (key == "conninfo") {
                 conninfo = *text;
                 return true;
               }
               std::string quoted;
               for (char c : *text) {
                 if (c == '\\' || c == '\'') quoted += '\\';
                 quoted += c;
               }
               options += " " + key + "='" + quoted + "'";
               return true;
             });
    if (conninfo.empty()) {
      errors_.push_back(
          value_at(value, where).error("export.postgresql needs conninfo (a libpq connection string)"));
    }
    out.postgresql_conninfo = conninfo + options;
  }

  // One of export.postgresql's session bounds; false for another key.
  bool set_timeout(MemberConfig::PostgresTimeouts& out, const std::string& key, const YAML::Node& item,
                   const SourceLocation& at_key) {
    struct Bound {
      std::string_view key;
      unsigned MemberConfig::PostgresTimeouts::*field;
      unsigned min, max;
    };
    using T = MemberConfig::PostgresTimeouts;
    static constexpr Bound kBounds[] = {
        {"connect_timeout_s", &T::connect_timeout_s, 1, 3600},
        {"lock_timeout_ms", &T::lock_timeout_ms, 1, 3'600'000},
        {"statement_timeout_ms", &T::statement_timeout_ms, 1, 86'400'000},
        {"idle_in_transaction_session_timeout_ms", &T::idle_in_transaction_session_timeout_ms, 1, 86'400'000},
        {"keepalives_idle_s", &T::keepalives_idle_s, 1, 86'400},
        {"keepalives_interval_s", &T::keepalives_interval_s, 1, 3600},
        {"keepalives_count", &T::keepalives_count, 1, 100},
        {"tcp_user_timeout_ms", &T::tcp_user_timeout_ms, 1, 86'400'000},
    };
    for (const Bound& bound : kBounds) {
      if (key != bound.key) continue;
      set_number(out.*bound.field, item, at_key, bound.min, bound.max);
      return true;
    }
    return false;
  }

  void on_logging(const YAML::Node& value, const SourceLocation& where) {
    if (!expect_map(value, where, "with 'level' and 'format'")) return;
    each_key(value, "logging.",
             [&](const std::string& key, const YAML::Node& item, const SourceLocation& at_key) {
               if (key == "level") {
                 constexpr std::string_view kWhat = "one of trace, debug, info, warn, error, off";
                 std::optional<std::string> text = scalar(item, at_key, kWhat);
                 std::optional<LogLevel> level = text ? parse_log_level(*text) : std::nullopt;
                 if (level) config_.logging.level = *level;
                 if (text && !level)
                   errors_.push_back(at(item).error(fmt::format("expected {}, got '{}'", kWhat, *text)));
               } else if (key == "format") {
                 std::optional<std::string> text = scalar(item, at_key, "text or json");
                 if (text && (*text == "text" || *text == "json")) {
                   config_.logging.format = *text == "json" ? LogFormat::kJson : LogFormat::kText;
                 } else if (text) {
                   errors_.push_back(at(item).error(fmt::format("expected text or json, got '{}'", *text)));
                 }
               } else {
                 return false;
               }
               return true;
             });
  }

  // The member's own id must be in the address book, with its raft address.
  void check_own_entry() {
    if (config_.id == 0 || config_.raft_address.text.empty() || config_.members.empty()) return;
    const MemberAddress* own = config_.find_member(config_.id);
    if (own == nullptr) {
      errors_.push_back(SourceLocation{.file = file_, .line = 1, .column = 1}.error(
          fmt::format("id {} is not listed in members", config_.id)));
    } else if (own->raft.text != config_.raft_address.text) {
      errors_.push_back(config_.raft_address.where.error(
          fmt::format("raft_address {} differs from member {}'s raft address {} in members",
                      config_.raft_address.text, config_.id, own->raft.text)));
    }
  }

  MemberConfig config_;
};

}  // namespace

std::optional<Ipv4Endpoint> parse_ipv4_endpoint(std::string_view text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::string host(text.substr(0, colon));
  in_addr address{};
  if (inet_pton(AF_INET, host.c_str(), &address) != 1) return std::nullopt;
  std::optional<std::uint64_t> port = parse_unsigned(text.substr(colon + 1));
  if (!port || *port == 0 || *port > 65535) return std::nullopt;
  return Ipv4Endpoint{.text = std::string(text), .host = host, .port = static_cast<std::uint16_t>(*port)};
}

const MemberAddress* MemberConfig::find_member(std::uint64_t member_id) const {
  for (const MemberAddress& member : members) {
    if (member.id == member_id) return &member;
  }
  return nullptr;
}

Result<MemberConfig, ConfigErrors> parse_member_config(std::string_view text, std::string_view file_name) {
  MemberParser parser(file_name);
  if (text.size() > kMemberConfigBytesMax) {
    return fail(ConfigErrors{
        ConfigError{.file = std::string(file_name),
                    .message = fmt::format("the file is larger than {} bytes", kMemberConfigBytesMax)}});
  }
  try {
    parser.parse_root(YAML::Load(std::string(text)));
  } catch (const YAML::Exception& error) {
    // yaml-cpp's marks are 0-based; ours are 1-based.
    const bool known = !error.mark.is_null();
    parser.errors().push_back(ConfigError{.file = std::string(file_name),
                                          .line = known ? error.mark.line + 1 : 0,
                                          .column = known ? error.mark.column + 1 : 0,
                                          .message = error.msg});
  } catch (const std::exception& error) {
    parser.errors().push_back(ConfigError{.file = std::string(file_name), .message = error.what()});
  }
  if (!parser.errors().empty()) return fail(std::move(parser.errors()));
  return std::move(parser.config());
}

Result<MemberConfig, ConfigErrors> load_member_config(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  std::string text;
  if (stream) text.assign(std::istreambuf_iterator<char>(stream), std::istreambuf_iterator<char>());
  if (!stream && !stream.eof()) {
    return fail(ConfigErrors{
        ConfigError{.file = path, .message = fmt::format("cannot read: {}", std::strerror(errno))}});
  }
  return parse_member_config(text, path);
}

}  // namespace rw::config
