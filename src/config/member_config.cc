// Parsing and validation of a member's YAML configuration, on the shared
// YamlReader (yaml_reader.h): every call into yaml-cpp, which throws, is
// inside YamlReader::read_document, which turns exceptions into ConfigErrors.
#include "config/member_config.h"

#include "config/member_budget.h"
#include "config/yaml_reader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>

namespace rw::config {
namespace {

// A member config is a few kilobytes; the bound keeps yaml-cpp's time and
// memory small on hostile input.
constexpr std::size_t kMemberConfigBytesMax = 256 * 1024;

// Walks the YAML tree once and fills a MemberConfig, collecting errors.
class MemberParser : YamlReader {
 public:
  explicit MemberParser(std::string_view file_name) : YamlReader(file_name) {
    config_.source_file = file_;
    config_.dictionary_dir =
        ConfiguredPath{.path = std::string(kDefaultDictionaryDir), .where = SourceLocation{.file = file_}};
  }

  void parse_root(const YAML::Node& root) {
    if (!expect_root(root)) return;
    const std::set<std::string> seen =
        each_key(root, "", [&](const std::string& key, const YAML::Node& value, const SourceLocation& where) {
          if (!on_top_level(key, value, where)) return false;
          config_.key_where[key] = where;
          return true;
        });
    for (std::string_view key : {"id", "data_dir", "raft_address", "submission_listen", "members"}) {
      require(seen, "", key, at(root));
    }
    if (seen.contains("id") && seen.contains("raft_address") && seen.contains("members")) check_own_entry();
    if (config_.memory_budget_mib != 0) check_memory_budget();
    check_admin_tcp(config_.admin_socket.has_value(), config_.admin_listen,
                    config_.admin_token_file.has_value(), at(root), errors_);
    // docs/security.md "Submission port": TLS, or a loudly named opt-out.
    if (seen.contains("cluster_tls") && config_.insecure_plaintext_cluster) {
      errors_.push_back(at(root).error("cluster_tls and insecure_plaintext_cluster exclude each other"));
    } else if (!seen.contains("cluster_tls") && !config_.insecure_plaintext_cluster) {
      errors_.push_back(at(root).error(
          "missing required key 'cluster_tls' (the cluster certificates: radiusward certs), or "
          "'insecure_plaintext_cluster: true'"));
    }
  }

  void parse(std::string_view text) {
    read_document(text, kMemberConfigBytesMax, [&](const YAML::Node& root) { parse_root(root); });
  }

  ConfigErrors& errors() { return errors_; }
  MemberConfig& config() { return config_; }

 private:
  // A raft address: an address that libraft can use (is_raft_address).
  std::optional<HostPort> raft_endpoint(const YAML::Node& value, const SourceLocation& where) {
    std::optional<HostPort> parsed = address(value, where);
    if (parsed && !is_raft_address(*parsed)) {
      errors_.push_back(parsed->where.error(
          fmt::format("raft address '{}' is IPv6: libraft 0.15 listens and connects on IPv4 only; "
                      "submission addresses may be IPv6",
                      parsed->text)));
      return std::nullopt;
    }
    return parsed;
  }

  bool on_top_level(const std::string& key, const YAML::Node& value, const SourceLocation& where) {
    if (key == "id") {
      set_integer(config_.id, value, where, 1, kMemberIdMax);
    } else if (key == "data_dir") {
      if (auto dir = path(value, where)) config_.data_dir = std::move(*dir);
    } else if (key == "raft_address") {
      if (auto raft = raft_endpoint(value, where)) config_.raft_address = std::move(*raft);
    } else if (key == "raft_listen") {
      if (auto listen = raft_endpoint(value, where)) config_.raft_listen = std::move(*listen);
    } else if (key == "submission_listen") {
      if (auto listen = address(value, where)) config_.submission_listen = std::move(*listen);
    } else if (key == "admin_socket") {
      if (!value.IsNull()) config_.admin_socket = path(value, where);
    } else if (key == "admin_listen") {
      if (!value.IsNull()) config_.admin_listen = address(value, where);
    } else if (key == "admin_token_file") {
      if (!value.IsNull()) config_.admin_token_file = path(value, where);
    } else if (key == "bootstrap") {
      if (auto flag = boolean(value, where)) config_.bootstrap = *flag;
    } else if (key == "members") {
      on_members(value, where);
    } else if (key == "submission_connections_max") {
      set_integer(config_.submission_connections_max, value, where, 1, 4096);
    } else if (key == "memory_budget_mib") {
      set_integer(config_.memory_budget_mib, value, where, 0, std::int64_t{1} << 20);
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
      logging(value, where, config_.logging);
    } else if (key == "cluster_tls") {
      config_.cluster_tls = tls_section(value, where, "cluster_tls.");
    } else if (key == "insecure_plaintext_cluster") {
      if (auto flag = boolean(value, where)) config_.insecure_plaintext_cluster = *flag;
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
    std::vector<HostPort> raft_addresses;
    std::vector<HostPort> submission_addresses;
    for (const auto& element : value) {
      std::optional<MemberAddress> member = member_entry(element);
      if (!member) continue;
      if (!ids.emplace(member->id, member->where).second) {
        errors_.push_back(member->where.error(fmt::format("member id {} is listed twice", member->id)));
        continue;
      }
      if (listed(raft_addresses, member->raft)) {
        errors_.push_back(
            member->raft.where.error(fmt::format("raft address {} is listed twice", member->raft.text)));
      }
      raft_addresses.push_back(member->raft);
      if (listed(submission_addresses, member->submission)) {
        errors_.push_back(member->submission.where.error(
            fmt::format("submission address {} is listed twice", member->submission.text)));
      }
      submission_addresses.push_back(member->submission);
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
                   if (key == "id") {
                     std::optional<std::int64_t> id = integer(value, at_key, 1, kMemberIdMax);
                     complete = complete && id.has_value();
                     member.id = static_cast<std::uint64_t>(id.value_or(0));
                     return true;
                   }
                   if (key != "raft" && key != "submission") return false;
                   std::optional<HostPort> endpoint =
                       key == "raft" ? raft_endpoint(value, at_key) : address(value, at_key);
                   complete = complete && endpoint.has_value();
                   (key == "raft" ? member.raft : member.submission) = endpoint.value_or(HostPort{});
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
    each_key(
        value, "raft.", [&](const std::string& key, const YAML::Node& item, const SourceLocation& at_key) {
          if (key == "election_timeout_ms") {
            set_integer(raft.election_timeout_ms, item, at_key, 50, 60'000);
          } else if (key == "heartbeat_timeout_ms") {
            set_integer(raft.heartbeat_timeout_ms, item, at_key, 5, 10'000);
          } else if (key == "snapshot_threshold") {
            set_integer(raft.snapshot_threshold, item, at_key, 16, 1'000'000'000);
          } else if (key == "snapshot_trailing") {
            set_integer(raft.snapshot_trailing, item, at_key, 0, 1'000'000'000);
          } else if (key == "log_bytes_max") {
            // 0 turns the byte bound off; else at least 1 MiB.
            set_integer(raft.log_bytes_max, item, at_key, 0, std::int64_t{64} << 30);
            if (raft.log_bytes_max != 0 && raft.log_bytes_max < (std::size_t{1} << 20)) {
              errors_.push_back(value_at(item, at_key)
                                    .error("raft.log_bytes_max must be 0 (off) or at least 1048576 (1 MiB)"));
            }
          } else if (key == "segment_bytes") {
            set_integer(raft.segment_bytes, item, at_key, 65'536, 1'073'741'824);
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
                 set_integer(ledger.held_records_max, item, at_key, 1, 100'000'000);
               } else if (key == "held_bytes_max") {
                 set_integer(ledger.held_bytes_max, item, at_key, 4096, std::int64_t{64} << 30);
               } else if (key == "sessions_max") {
                 set_integer(ledger.sessions_max, item, at_key, 0, 100'000'000);
               } else if (key == "sessions_bytes_max") {
                 set_integer(ledger.sessions_bytes_max, item, at_key, 0, std::uint64_t{64} << 30);
               } else if (key == "session_expiry_multiple") {
                 set_integer(ledger.session_expiry_multiple, item, at_key, 0, 1000);
               } else if (key == "session_default_interim_s") {
                 set_integer(ledger.session_default_interim_s, item, at_key, 1, 7 * 24 * 3600);
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
                 set_integer(out.batch_records_max, item, at_key, 1, 100'000);
               } else if (key == "poll_interval_ms") {
                 set_integer(out.poll_interval_ms, item, at_key, 1, 10'000);
               } else if (key == "batch_delay_ms") {
                 set_integer(out.batch_delay_ms, item, at_key, 0, 10'000);
               } else if (key == "log_retention_days") {
                 set_integer(out.log_retention_days, item, at_key, 0, 36'500);
               } else if (key == "retry_initial_ms") {
                 set_integer(out.retry_initial_ms, item, at_key, 1, 60'000);
               } else if (key == "retry_max_ms") {
                 set_integer(out.retry_max_ms, item, at_key, 1, 3'600'000);
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
      set_integer(out.*bound.field, item, at_key, bound.min, bound.max);
      return true;
    }
    return false;
  }

  // docs/limits.md "Member memory budget": the bounds, all full, within
  // memory_budget_mib; the error names the largest items.
  void check_memory_budget() {
    const SourceLocation where = config_.key_where.at("memory_budget_mib");
    const MemoryBudget budget = member_memory_budget(config_);
    if (budget.log_unbounded) {
      errors_.push_back(
          where.error("memory_budget_mib needs raft.log_bytes_max: 0 leaves the raft log unbounded"));
      return;
    }
    const std::uint64_t limit = config_.memory_budget_mib << 20;
    if (budget.total_bytes <= limit) return;
    std::vector<BudgetItem> items = budget.items;
    std::stable_sort(items.begin(), items.end(),
                     [](const BudgetItem& a, const BudgetItem& b) { return a.bytes > b.bytes; });
    std::string largest;
    for (std::size_t i = 0; i < items.size() && i < 3; ++i) {
      largest += fmt::format("{}{} {} MiB ({})", i == 0 ? "" : ", ", items[i].what, mib(items[i].bytes),
                             items[i].keys);
    }
    errors_.push_back(where.error(fmt::format(
        "the bounds need {} MiB when full, more than memory_budget_mib ({}): largest {}; lower them or raise "
        "memory_budget_mib (docs/limits.md \"Member memory budget\")",
        mib(budget.total_bytes), config_.memory_budget_mib, largest)));
  }

  static std::uint64_t mib(std::uint64_t bytes) { return (bytes + (std::uint64_t{1} << 20) - 1) >> 20; }

  // The member's own id must be in the address book, with its raft address.
  void check_own_entry() {
    if (config_.id == 0 || config_.raft_address.text.empty() || config_.members.empty()) return;
    const MemberAddress* own = config_.find_member(config_.id);
    if (own == nullptr) {
      errors_.push_back(SourceLocation{.file = file_, .line = 1, .column = 1}.error(
          fmt::format("id {} is not listed in members", config_.id)));
    } else if (own->raft.text != config_.raft_address.text) {
      // The same text, not only the same endpoint: libraft is handed both.
      errors_.push_back(config_.raft_address.where.error(
          fmt::format("raft_address {} differs from member {}'s raft address {} in members",
                      config_.raft_address.text, config_.id, own->raft.text)));
    }
  }

  MemberConfig config_;
};

}  // namespace

bool is_raft_address(const HostPort& address) { return !address.is_v6; }

const MemberAddress* MemberConfig::find_member(std::uint64_t member_id) const {
  for (const MemberAddress& member : members) {
    if (member.id == member_id) return &member;
  }
  return nullptr;
}

Result<MemberConfig, ConfigErrors> parse_member_config(std::string_view text, std::string_view file_name) {
  MemberParser parser(file_name);
  parser.parse(text);
  if (!parser.errors().empty()) return fail(std::move(parser.errors()));
  return std::move(parser.config());
}

Result<MemberConfig, ConfigErrors> load_member_config(const std::string& path) {
  Result<std::string, ConfigErrors> text = read_config_file(path);
  if (!text) return fail(std::move(text.error()));
  return parse_member_config(*text, path);
}

}  // namespace rw::config
