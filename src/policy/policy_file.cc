// The policy file reader, on config::YamlReader: every call into yaml-cpp,
// which throws, runs inside YamlReader::read_document, which turns
// exceptions into ConfigErrors. The format is docs/policy.md "The file".
#include "policy/policy_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "config/clients_file.h"
#include "config/yaml_reader.h"

namespace rw::policy {
namespace {

using config::SourceLocation;

constexpr std::string_view kDayNames[7] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};

std::optional<int> day_of(std::string_view word) {
  if (word.size() != 3) return std::nullopt;
  for (int day = 0; day < 7; ++day) {
    const std::string_view name = kDayNames[day];
    if (std::equal(word.begin(), word.end(), name.begin(),
                   [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; }))
      return day;
  }
  return std::nullopt;
}

// "HH:MM", 00:00 to 24:00.
std::optional<int> minute_of(std::string_view text) {
  if (text.size() != 5 || text[2] != ':') return std::nullopt;
  const auto number = [&](std::size_t at) -> std::optional<int> {
    if (!std::isdigit(static_cast<unsigned char>(text[at])) ||
        !std::isdigit(static_cast<unsigned char>(text[at + 1])))
      return std::nullopt;
    return (text[at] - '0') * 10 + (text[at + 1] - '0');
  };
  const auto hours = number(0);
  const auto minutes = number(3);
  if (!hours || !minutes || *minutes > 59 || *hours > 24 || (*hours == 24 && *minutes != 0))
    return std::nullopt;
  return *hours * 60 + *minutes;
}

// "Mon-Fri", "Sat,Sun", "Mon,Wed-Fri": a bit per day, Monday first.
std::optional<std::uint8_t> days_of(std::string_view text) {
  std::uint8_t days = 0;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view part = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (comma != std::string_view::npos && text.empty()) return std::nullopt;
    const std::size_t dash = part.find('-');
    const auto first = day_of(part.substr(0, dash));
    const auto last = dash == std::string_view::npos ? first : day_of(part.substr(dash + 1));
    if (!first || !last) return std::nullopt;
    // A range may wrap past Sunday: "Fri-Mon".
    for (int day = *first;; day = (day + 1) % 7) {
      days |= static_cast<std::uint8_t>(1u << day);
      if (day == *last) break;
    }
  }
  return days == 0 ? std::nullopt : std::optional<std::uint8_t>(days);
}

// "[DAYS] [HH:MM-HH:MM]": at least one of the two.
std::optional<TimeWindow> window_of(std::string_view text) {
  TimeWindow window;
  const std::size_t space = text.find(' ');
  std::string_view days = text;
  std::string_view hours;
  if (space != std::string_view::npos) {
    days = text.substr(0, space);
    hours = text.substr(space + 1);
  } else if (text.find(':') != std::string_view::npos) {
    days = {};
    hours = text;
  }
  if (!days.empty()) {
    const auto parsed = days_of(days);
    if (!parsed) return std::nullopt;
    window.days = *parsed;
  }
  if (!hours.empty()) {
    const std::size_t dash = hours.find('-');
    if (dash == std::string_view::npos) return std::nullopt;
    const auto from = minute_of(hours.substr(0, dash));
    const auto to = minute_of(hours.substr(dash + 1));
    if (!from || !to || *from == *to || *from == kMinutesPerDay) return std::nullopt;
    window.from = static_cast<std::uint16_t>(*from);
    // "22:00-00:00" ends at midnight.
    window.to = static_cast<std::uint16_t>(*to == 0 ? kMinutesPerDay : *to);
  }
  if (days.empty() && hours.empty()) return std::nullopt;
  return window;
}

// "UTC", "Z", "+HH:MM", "-HH:MM" within ±14:00.
std::optional<int> offset_of(std::string_view text) {
  if (text == "UTC" || text == "Z") return 0;
  if (text.size() != 6 || (text[0] != '+' && text[0] != '-')) return std::nullopt;
  const auto minutes = minute_of(text.substr(1));
  if (!minutes || *minutes > 14 * 60) return std::nullopt;
  return text[0] == '-' ? -*minutes : *minutes;
}

std::optional<Address> address_of(const config::AddressPrefix& prefix) {
  return Address{.bytes = prefix.address, .is_v6 = prefix.is_v6};
}

constexpr std::string_view kReservedNames[] = {"default", kMabDenyRule, kMabAllowRule};

class PolicyParser : config::YamlReader {
 public:
  PolicyParser(std::string_view file_name, const Limits& limits) : YamlReader(file_name), limits_(limits) {}

  void parse(std::string_view text) {
    read_document(text, limits_.file_bytes_max, [&](const YAML::Node& root) { parse_root(root); });
  }

  config::ConfigErrors& errors() { return errors_; }
  Policy::Parts take() {
    parts_.source_file = file_;
    return std::move(parts_);
  }

 private:
  void parse_root(const YAML::Node& root) {
    if (!expect_root(root)) return;
    // Groups first: rules name them wherever they are written.
    if (const YAML::Node groups = root["groups"]; groups.IsDefined()) on_groups(groups, at(groups));
    each_key(root, "", [&](const std::string& key, const YAML::Node& value, const SourceLocation& where) {
      if (key == "groups") return true;
      if (key == "utc_offset") {
        constexpr std::string_view kWhat = "UTC or an offset +HH:MM / -HH:MM within 14:00";
        if (auto offset = choice<int>(value, where, kWhat, offset_of)) parts_.utc_offset_minutes = *offset;
      } else if (key == "default") {
        if (auto accept = decision(value, where)) parts_.default_accept = *accept;
      } else if (key == "mab") {
        on_mab(value, where);
      } else if (key == "rules") {
        sequence(value, where, "rules", [&](const YAML::Node& rule) { on_rule(rule); });
      } else {
        return false;
      }
      return true;
    });
  }

  std::optional<bool> decision(const YAML::Node& value, const SourceLocation& where) {
    return choice<bool>(value, where, "accept or reject", [](std::string_view word) -> std::optional<bool> {
      if (word == "accept") return true;
      if (word == "reject") return false;
      return std::nullopt;
    });
  }

  // A scalar or a list of scalars, each a non-empty text within the bound.
  void each_text(const YAML::Node& value, const SourceLocation& where, std::string_view what,
                 const std::function<void(const std::string&, const YAML::Node&)>& each) {
    const auto one = [&](const YAML::Node& element) {
      std::optional<std::string> text = non_empty(element, value_at(element, where), what);
      if (!text) return;
      if (text->size() > limits_.text_bytes_max) {
        errors_.push_back(at(element).error(fmt::format("longer than {} bytes", limits_.text_bytes_max)));
        return;
      }
      each(*text, element);
    };
    if (value.IsSequence()) {
      if (value.size() == 0)
        errors_.push_back(at(value).error(fmt::format("expected at least one {}", what)));
      if (value.size() > limits_.list_max) {
        errors_.push_back(at(value).error(fmt::format("more than {} values", limits_.list_max)));
        return;
      }
      for (const auto& element : value) one(element);
    } else {
      one(value);
    }
  }

  void on_groups(const YAML::Node& value, const SourceLocation& where) {
    if (!expect_map(value, where, "of group names to lists of User-Names")) return;
    std::size_t members = 0;
    each_key(
        value, "groups.", [&](const std::string& name, const YAML::Node& list, const SourceLocation& at_key) {
          if (parts_.groups.size() >= limits_.groups_max) {
            errors_.push_back(at_key.error(fmt::format("more than {} groups", limits_.groups_max)));
            return true;
          }
          Group group{.name = name};
          if (!list.IsSequence()) {
            errors_.push_back(value_at(list, at_key).error("expected a list of User-Names"));
          } else {
            for (const auto& element : list) {
              std::optional<std::string> user = non_empty(element, at(element), "a User-Name");
              if (!user) continue;
              if (++members > limits_.group_members_max) {
                // One error for the bound, at the first member past it.
                if (members == limits_.group_members_max + 1) {
                  errors_.push_back(at(element).error(
                      fmt::format("more than {} group members in all", limits_.group_members_max)));
                }
                break;
              }
              group.members.push_back(std::move(*user));
            }
          }
          std::sort(group.members.begin(), group.members.end());
          group.members.erase(std::unique(group.members.begin(), group.members.end()), group.members.end());
          group_index_[name] = static_cast<std::uint32_t>(parts_.groups.size());
          parts_.groups.push_back(std::move(group));
          return true;
        });
  }

  void on_mab(const YAML::Node& value, const SourceLocation& where) {
    if (!expect_map(value, where, "with allow and deny lists")) return;
    each_key(
        value, "mab.", [&](const std::string& key, const YAML::Node& list, const SourceLocation& at_key) {
          std::vector<MacPrefix>* target = key == "allow"  ? &parts_.mab_allow
                                           : key == "deny" ? &parts_.mab_deny
                                                           : nullptr;
          if (target == nullptr) return false;
          if (!list.IsSequence()) {
            errors_.push_back(value_at(list, at_key).error("expected a list of MAC addresses or OUIs"));
            return true;
          }
          for (const auto& element : list) {
            std::optional<std::string> text = scalar(element, at(element), "a MAC address or an OUI");
            if (!text) continue;
            const auto prefix = parse_mac_prefix(*text);
            if (!prefix) {
              invalid(element, "a MAC address (aa:bb:cc:dd:ee:ff) or an OUI (aa:bb:cc)", *text);
            } else if (parts_.mab_allow.size() + parts_.mab_deny.size() >= limits_.mab_entries_max) {
              errors_.push_back(
                  at(element).error(fmt::format("more than {} MAB list entries", limits_.mab_entries_max)));
              return true;
            } else {
              target->push_back(*prefix);
            }
          }
          return true;
        });
  }

  void on_rule(const YAML::Node& node) {
    const SourceLocation where = at(node);
    if (!expect_map(node, where, "for a rule (name, match, decision, reply)")) return;
    if (++rules_seen_ > limits_.rules_max) {
      if (rules_seen_ == limits_.rules_max + 1)
        errors_.push_back(where.error(fmt::format("more than {} rules", limits_.rules_max)));
      return;
    }
    Rule rule{.where = where};
    std::optional<SourceLocation> reply_where;
    const std::set<std::string> seen = each_key(
        node, "rules[].", [&](const std::string& key, const YAML::Node& value, const SourceLocation& at_key) {
          if (key == "name") {
            on_name(rule, value, at_key);
          } else if (key == "match") {
            if (expect_map(value, at_key, "of conditions")) {
              each_key(value, "match.",
                       [&](const std::string& condition, const YAML::Node& item,
                           const SourceLocation& at_condition) {
                         return on_condition(rule, condition, item, at_condition);
                       });
            }
          } else if (key == "decision") {
            if (auto accept = decision(value, at_key)) rule.accept = *accept;
          } else if (key == "reply") {
            reply_where = at_key;
            on_reply(rule.reply, value, at_key);
          } else {
            return false;
          }
          return true;
        });
    require(seen, "rules[].", "name", where);
    require(seen, "rules[].", "decision", where);
    if (!rule.accept && reply_where &&
        (!rule.reply.vlan.empty() || rule.reply.session_timeout || !rule.reply.filter_id.empty())) {
      errors_.push_back(reply_where->error("a reject rule's reply may carry only reply_message"));
    }
    parts_.rules.push_back(std::move(rule));
  }

  void on_name(Rule& rule, const YAML::Node& value, const SourceLocation& where) {
    std::optional<std::string> name = non_empty(value, where, "a rule name");
    if (!name) return;
    const bool printable = std::all_of(name->begin(), name->end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    });
    if (!printable || name->size() > 64) {
      invalid(value, "a rule name of at most 64 letters, digits, '-', '_' or '.'", *name);
    } else if (std::find(std::begin(kReservedNames), std::end(kReservedNames), *name) !=
               std::end(kReservedNames)) {
      errors_.push_back(at(value).error(fmt::format("'{}' is a reserved name", *name)));
    } else if (auto [earlier, inserted] = names_.emplace(*name, at(value)); !inserted) {
      errors_.push_back(at(value).error(
          fmt::format("rule '{}' is already defined at line {}", *name, earlier->second.line)));
    }
    rule.name = std::move(*name);
  }

  void globs(std::vector<std::string>& target, const YAML::Node& value, const SourceLocation& where,
             std::string_view what) {
    each_text(value, where, what,
              [&](const std::string& text, const YAML::Node&) { target.push_back(text); });
  }

  void prefixes(std::vector<Prefix>& target, const YAML::Node& value, const SourceLocation& where) {
    each_text(value, where, "an address or prefix", [&](const std::string& text, const YAML::Node& element) {
      auto parsed = config::parse_address_prefix(text, config::AddressFamily::kAny);
      if (!parsed || text == "*") {
        invalid(element, "an IPv4 or IPv6 address with an optional /prefix", text);
        return;
      }
      target.push_back(Prefix{.address = *address_of(*parsed), .length = parsed->prefix_length});
    });
  }

  bool on_condition(Rule& rule, const std::string& key, const YAML::Node& value,
                    const SourceLocation& where) {
    if (key == "user") {
      globs(rule.users, value, where, "a User-Name pattern");
    } else if (key == "client") {
      globs(rule.clients, value, where, "a client shortname pattern");
    } else if (key == "client_address") {
      prefixes(rule.client_addresses, value, where);
    } else if (key == "nas_ip_address") {
      prefixes(rule.nas_ip_addresses, value, where);
    } else if (key == "nas_identifier") {
      globs(rule.nas_identifiers, value, where, "a NAS-Identifier pattern");
    } else if (key == "ssid") {
      globs(rule.ssids, value, where, "an SSID pattern");
    } else if (key == "cert_subject_cn") {
      globs(rule.cert_subject_cns, value, where, "a certificate subject CN pattern");
    } else if (key == "cert_issuer") {
      globs(rule.cert_issuers, value, where, "a certificate issuer pattern");
    } else if (key == "mac") {
      each_text(value, where, "a MAC address or an OUI",
                [&](const std::string& text, const YAML::Node& element) {
                  if (auto prefix = parse_mac_prefix(text)) {
                    rule.macs.push_back(*prefix);
                  } else {
                    invalid(element, "a MAC address (aa:bb:cc:dd:ee:ff) or an OUI (aa:bb:cc)", text);
                  }
                });
    } else if (key == "method") {
      each_text(value, where, "a method", [&](const std::string& text, const YAML::Node& element) {
        if (auto mask = parse_method(text)) {
          rule.methods |= *mask;
        } else {
          invalid(element,
                  "PAP, CHAP, MS-CHAP, MS-CHAPv1, MS-CHAPv2, MAB, EAP, EAP-TLS, PEAP, EAP-TTLS or EAP-MD5",
                  text);
        }
      });
    } else if (key == "group") {
      each_text(value, where, "a group name", [&](const std::string& text, const YAML::Node& element) {
        if (auto found = group_index_.find(text); found != group_index_.end()) {
          rule.groups.push_back(found->second);
        } else {
          errors_.push_back(at(element).error(fmt::format("no group '{}' in 'groups'", text)));
        }
      });
    } else if (key == "time") {
      each_text(value, where, "a time window", [&](const std::string& text, const YAML::Node& element) {
        if (auto window = window_of(text)) {
          rule.times.push_back(*window);
        } else {
          invalid(element, "a time window such as 'Mon-Fri 08:00-18:00', 'Sat,Sun' or '22:00-06:00'", text);
        }
      });
    } else {
      return false;
    }
    return true;
  }

  void on_reply(Reply& reply, const YAML::Node& value, const SourceLocation& where) {
    if (!expect_map(value, where, "of reply attributes")) return;
    each_key(value, "reply.",
             [&](const std::string& key, const YAML::Node& item, const SourceLocation& at_key) {
               std::string* text = key == "vlan"            ? &reply.vlan
                                   : key == "filter_id"     ? &reply.filter_id
                                   : key == "reply_message" ? &reply.reply_message
                                                            : nullptr;
               if (text != nullptr) {
                 if (item.IsSequence()) {
                   errors_.push_back(at(item).error("expected one value"));
                   return true;
                 }
                 each_text(item, at_key, "a value",
                           [&](const std::string& written, const YAML::Node&) { *text = written; });
                 return true;
               }
               if (key == "session_timeout") {
                 if (auto seconds = integer(item, at_key, 1, 0xffff'ffff))
                   reply.session_timeout = static_cast<std::uint32_t>(*seconds);
                 return true;
               }
               return false;
             });
  }

  const Limits& limits_;
  Policy::Parts parts_;
  std::map<std::string, std::uint32_t, std::less<>> group_index_;
  std::map<std::string, SourceLocation, std::less<>> names_;
  std::size_t rules_seen_ = 0;
};

}  // namespace

Result<Policy, config::ConfigErrors> parse_policy(std::string_view text, std::string_view file_name,
                                                  const Limits& limits) {
  PolicyParser parser(file_name, limits);
  parser.parse(text);
  if (!parser.errors().empty()) return fail(std::move(parser.errors()));
  return Policy(parser.take());
}

Result<Policy, config::ConfigErrors> load_policy(const std::string& path, const Limits& limits) {
  auto text = config::read_config_file(path);
  if (!text) return fail(std::move(text.error()));
  if (text->size() > limits.file_bytes_max) {
    return fail(config::ConfigErrors{config::ConfigError{
        .file = path, .message = fmt::format("the file is larger than {} bytes", limits.file_bytes_max)}});
  }
  return parse_policy(*text, path, limits);
}

}  // namespace rw::policy
