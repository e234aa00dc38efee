// The authorization policy (docs/policy.md): ordered rules that look at an
// authenticated Access-Request (its NAS, the SSID of Called-Station-Id as
// RFC 3580 §3.20 writes it, the calling MAC, the method, certificate fields,
// group membership, the local time of day) and decide accept or reject with
// reply attributes (the RFC 3580 §3.31 VLAN triple, Session-Timeout,
// Filter-Id, Reply-Message); and the MAB allow and deny lists. A Policy is an
// immutable value compiled once by the loader (policy_file.h); deciding reads
// it without allocating. Pure: no clock (the caller passes the wall clock in),
// no I/O.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/mab.h"
#include "config/gateway_config.h"

namespace rw::policy {

// How the request was authenticated. The gateway names the method it
// checked; EAP methods name their type once the EAP core gives it (kEap
// when the type is not known).
enum class Method : std::uint8_t {
  kNone,  // Accepted without a credential check (Auth-Type := Accept): no method condition holds.
  kPap,
  kChap,
  kMsChap1,
  kMsChap2,
  kMab,
  kEap,
  kEapTls,
  kPeap,
  kEapTtls,
  kEapMd5,
  kCount,
};
[[nodiscard]] std::string_view to_string(Method method);
using MethodMask = std::uint32_t;
[[nodiscard]] constexpr MethodMask bit(Method method) {
  return MethodMask{1} << static_cast<unsigned>(method);
}
// The methods a word of a rule's `method:` list means: a method's own name
// (PAP, CHAP, MS-CHAPv1, MS-CHAPv2, MAB, EAP-TLS, PEAP, EAP-TTLS, EAP-MD5;
// case-insensitive), MS-CHAP (v1 or v2), EAP (any EAP method); TTLS and MD5
// are short for EAP-TTLS and EAP-MD5. Nothing for another word.
[[nodiscard]] std::optional<MethodMask> parse_method(std::string_view word);

// An IPv4 or IPv6 address (network order; IPv4 in the first 4 octets).
struct Address {
  std::array<std::uint8_t, 16> bytes{};
  bool is_v6 = false;
};

struct Prefix {
  Address address{};
  std::uint8_t length = 0;
};
[[nodiscard]] bool contains(const Prefix& prefix, const Address& address);

// A whole MAC address (length 6) or its first octets (length 3: an OUI).
struct MacPrefix {
  std::array<std::uint8_t, 6> octets{};
  std::uint8_t length = 6;
};
// A MAC in any notation auth::parse_mac reads, or an OUI: 6 hex digits bare
// or as 3 pairs split by ':' or '-' ("00:11:22", "00-11-22", "001122").
[[nodiscard]] std::optional<MacPrefix> parse_mac_prefix(std::string_view text);

// The SSID of a Called-Station-Id written "MAC:SSID" (RFC 3580 §3.20), the
// MAC in any notation auth::parse_mac reads; nothing when the value has no
// SSID part.
[[nodiscard]] std::optional<std::string_view> ssid_of(std::string_view called_station_id);

// `text` matches `pattern`, where `*` is any run of characters and `?` any
// one character; every other byte matches itself (case-sensitive). Time is
// at most |pattern| * |text|; nothing is allocated.
[[nodiscard]] bool glob_match(std::string_view pattern, std::string_view text);

inline constexpr int kMinutesPerDay = 24 * 60;
inline constexpr int kMinutesPerWeek = 7 * kMinutesPerDay;

// The minute of the local week (0 is Monday 00:00) of the Unix time
// `unix_ms` in a zone `utc_offset_minutes` east of UTC.
[[nodiscard]] int minute_of_week(std::int64_t unix_ms, int utc_offset_minutes);

// One window of a `time:` condition: on the days of `days` (bit 0 Monday ...
// bit 6 Sunday), from minute `from` to minute `to` of the day (to > from),
// or, when to <= from, from `from` on that day to `to` on the next.
struct TimeWindow {
  std::uint8_t days = 0x7f;
  std::uint16_t from = 0;
  std::uint16_t to = kMinutesPerDay;
};
[[nodiscard]] bool in_window(const TimeWindow& window, int week_minute);

// What the rule that decided adds to the reply; empty members add nothing.
struct Reply {
  std::string vlan{};  // Tunnel-Private-Group-Id of the RFC 3580 §3.31 triple.
  std::optional<std::uint32_t> session_timeout{};
  std::string filter_id{};
  std::string reply_message{};
  [[nodiscard]] bool empty() const {
    return vlan.empty() && !session_timeout && filter_id.empty() && reply_message.empty();
  }
};

// One rule. Every condition that lists something must hold; within a list,
// any element will do. A rule with no conditions matches every request.
struct Rule {
  std::string name{};
  config::SourceLocation where{};
  bool accept = true;
  std::vector<std::string> users{};             // Globs over User-Name.
  std::vector<std::string> clients{};           // Globs over the client's shortname.
  std::vector<Prefix> client_addresses{};       // The datagram's source address.
  std::vector<Prefix> nas_ip_addresses{};       // NAS-IP-Address / NAS-IPv6-Address.
  std::vector<std::string> nas_identifiers{};   // Globs over NAS-Identifier.
  std::vector<std::string> ssids{};             // Globs over the SSID of Called-Station-Id.
  std::vector<MacPrefix> macs{};                // Calling-Station-Id, a MAC or an OUI.
  MethodMask methods = 0;                       // 0: any method.
  std::vector<std::string> cert_subject_cns{};  // Globs over the client certificate's subject CN.
  std::vector<std::string> cert_issuers{};      // Globs over its issuer.
  std::vector<std::uint32_t> groups{};          // Indexes into Policy::groups().
  std::vector<TimeWindow> times{};
  Reply reply{};
};

// A group defined in the policy file: its members' User-Names, sorted.
struct Group {
  std::string name{};
  std::vector<std::string> members{};
};

// What the policy knows of one authenticated Access-Request. Views are the
// caller's and valid during the call.
struct Request {
  std::string_view user_name{};
  std::string_view client{};                // The client entry's shortname.
  std::optional<Address> client_address{};  // The datagram's source address.
  std::optional<Address> nas_ip_address{};
  std::string_view nas_identifier{};
  std::string_view called_station_id{};
  std::string_view calling_station_id{};
  Method method = Method::kNone;
  std::string_view cert_subject_cn{};  // EAP-TLS supplies them; empty otherwise.
  std::string_view cert_issuer{};
  std::int64_t unix_ms = 0;  // The wall clock at arrival.
};

// A MAC against the MAB lists: deny wins over allow.
enum class MabListing : std::uint8_t { kUnlisted, kAllowed, kDenied };

// What decided: a rule, or the default when none matched.
struct Decision {
  const Rule* rule = nullptr;  // Null: the default.
  bool accept = true;
  // The view is of the rule (in the Policy) or of a literal: never of a temporary.
  [[nodiscard]] std::string_view rule_name() const {
    return rule != nullptr ? std::string_view(rule->name) : std::string_view("default");
  }
  [[nodiscard]] const Reply* reply() const { return rule != nullptr ? &rule->reply : nullptr; }
};

// The name decisions by the MAB deny list carry as their rule.
inline constexpr std::string_view kMabDenyRule = "mab.deny";
inline constexpr std::string_view kMabAllowRule = "mab.allow";

// The bounds of a policy file (docs/limits.md "Authorization policy").
struct Limits {
  std::size_t file_bytes_max = 4 * 1024 * 1024;
  std::size_t rules_max = 1000;
  std::size_t list_max = 256;  // Values of one condition of one rule.
  std::size_t groups_max = 1000;
  std::size_t group_members_max = 100'000;  // Over all groups.
  std::size_t mab_entries_max = 100'000;    // Allow and deny lists together.
  std::size_t text_bytes_max = 253;         // A name, pattern or reply value (one attribute).
};

// A compiled policy. Build it with load_policy / parse_policy (policy_file.h).
class Policy {
 public:
  struct Parts {
    std::vector<Rule> rules;
    std::vector<Group> groups;
    bool default_accept = true;
    int utc_offset_minutes = 0;
    std::vector<MacPrefix> mab_allow;
    std::vector<MacPrefix> mab_deny;
    std::string source_file;
  };
  // Requires: group members sorted, group indexes in range.
  explicit Policy(Parts parts);

  // The first rule whose conditions all hold decides; none: the default.
  // Allocates nothing.
  [[nodiscard]] Decision decide(const Request& request) const;
  // Where `mac` stands on the MAB lists (deny wins). Allocates nothing.
  [[nodiscard]] MabListing mab_listing(const auth::MacAddress& mac) const;

  [[nodiscard]] const std::vector<Rule>& rules() const { return rules_; }
  [[nodiscard]] const std::vector<Group>& groups() const { return groups_; }
  [[nodiscard]] bool default_accept() const { return default_accept_; }
  [[nodiscard]] int utc_offset_minutes() const { return utc_offset_minutes_; }
  [[nodiscard]] std::size_t mab_entries() const;
  [[nodiscard]] const std::string& source_file() const { return source_file_; }

 private:
  // Sorted, for binary search: whole MACs as 48-bit numbers, OUIs as 24-bit.
  struct MabList {
    std::vector<std::uint64_t> macs;
    std::vector<std::uint32_t> ouis;
    [[nodiscard]] bool has(const auth::MacAddress& mac) const;
  };
  [[nodiscard]] bool matches(const Rule& rule, const Request& request,
                             const std::optional<auth::MacAddress>& mac,
                             const std::optional<std::string_view>& ssid, int minute) const;
  [[nodiscard]] bool member(std::uint32_t group, std::string_view user_name) const;

  std::vector<Rule> rules_;
  std::vector<Group> groups_;
  bool default_accept_ = true;
  int utc_offset_minutes_ = 0;
  MabList allow_;
  MabList deny_;
  std::string source_file_;
};

}  // namespace rw::policy
