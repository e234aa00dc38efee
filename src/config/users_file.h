// Reads FreeRADIUS `users` files (the `files` module format): entries of
// check items on the first line and reply items on indented lines after it,
// DEFAULT entries and Fall-Through. Values are compiled to their wire form
// once, at load, so the per-request policy (auth/users_policy.h) only
// compares bytes. Syntax, limits and differences from FreeRADIUS are in
// docs/users_and_clients.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "config/freeradius_lexer.h"
#include "radius/dictionary.h"

namespace rw::config {

// The operators of a users-file item, with FreeRADIUS's meanings.
enum class UsersOperator : std::uint8_t {
  kSet,           // :=  replace every instance in the list
  kAssign,        // =   add only when the list has none
  kAdd,           // +=  always add
  kEqual,         // ==  the request has an equal value
  kNotEqual,      // !=
  kLess,          // <
  kLessEqual,     // <=
  kGreater,       // >
  kGreaterEqual,  // >=
  kRegexMatch,    // =~  POSIX extended regular expression matches
  kRegexNoMatch,  // !~
  kPresent,       // =*  the request has the attribute (value ignored)
  kAbsent,        // !*  the request lacks the attribute
};
std::string_view to_string(UsersOperator op);
// True for the operators that test the request (==, !=, <, =~, =*, ...);
// false for :=, = and +=, which add to the control or reply list.
bool is_comparison(UsersOperator op);

// A compiled POSIX extended regular expression (FreeRADIUS's default regex
// engine). Patterns with back-references or huge counted repetitions are
// refused at compile time so that matching stays polynomial and small.
class UsersRegex {
 public:
  // Compiles `pattern`; the error says why it was refused.
  [[nodiscard]] static Result<std::shared_ptr<const UsersRegex>, std::string> compile(
      std::string_view pattern);

  // Whether the pattern matches anywhere in `subject` (bytes, not required
  // to be NUL-terminated). Allocates nothing for subjects under 1024 bytes.
  [[nodiscard]] bool matches(Bytes subject) const;

  ~UsersRegex();
  UsersRegex(const UsersRegex&) = delete;
  UsersRegex& operator=(const UsersRegex&) = delete;

 private:
  struct Compiled;
  explicit UsersRegex(std::unique_ptr<Compiled> compiled);
  std::unique_ptr<Compiled> compiled_;
};

// One `Attribute op value` item.
struct UsersItem {
  const radius::AttributeDef* def = nullptr;  // Points into the UsersFile's dictionary.
  UsersOperator op = UsersOperator::kEqual;
  // RFC 2868 §3.1 tag (`Tunnel-Type:1`), 0 when none was written; only on
  // attributes the dictionary marks has_tag. The value below is untagged:
  // the encoder puts the tag on the wire.
  std::uint8_t tag = 0;
  // The value in wire form (radius::parse_value); for =~ and !~ the pattern
  // text; empty for =* and !*.
  std::vector<std::uint8_t> value;
  std::shared_ptr<const UsersRegex> regex;  // Set for =~ and !~.
  int line = 0;
  int column = 0;

  [[nodiscard]] Bytes bytes() const { return value; }
};

// One entry: a user name (or DEFAULT) and its items.
struct UserEntry {
  std::string name;
  bool is_default = false;       // The name is DEFAULT: applies to every user.
  std::vector<UsersItem> check;  // First-line items: comparisons and control assignments.
  std::vector<UsersItem> reply;  // Indented items; Fall-Through is not among them.
  bool fall_through = false;     // `Fall-Through = Yes` was in the reply items.
  std::uint32_t file_index = 0;  // Into UsersFile::file_names().
  int line = 0;
};

struct UsersLimits {
  std::size_t entries_max = 1'000'000;
  std::size_t items_per_entry_max = 128;  // Check items, and reply items, each.
  std::size_t regex_bytes_max = 1024;     // One pattern.
  IncludeLimits include;
  // Another name to index an entry under, or "" for none: the gateway passes
  // the canonical MAC address form, so that MAB entries written in any
  // notation are found. Null: names are indexed only as written.
  std::string (*alias_of)(std::string_view name) = nullptr;
};

// A parsed users file with an index by user name. Immutable once built;
// every const member is safe from any thread and allocates nothing.
class UsersFile {
 public:
  // Reads `path` and what it `$INCLUDE`s. Attribute names and values are
  // resolved in `dictionary`, which the UsersFile keeps alive.
  [[nodiscard]] static Result<UsersFile, SourceError> load(
      const std::string& path, std::shared_ptr<const radius::Dictionary> dictionary,
      const UsersLimits& limits = {});
  // Parses text from memory (tests, fuzzing); `$INCLUDE` is an error.
  [[nodiscard]] static Result<UsersFile, SourceError> parse(
      std::string_view text, std::string_view file_name, std::shared_ptr<const radius::Dictionary> dictionary,
      const UsersLimits& limits = {});

  // Every entry in file order (includes expanded in place).
  [[nodiscard]] std::span<const UserEntry> entries() const { return entries_; }
  // Indices into entries() of the entries named exactly `name`
  // (case-sensitive, as FreeRADIUS), in file order; DEFAULT not included.
  [[nodiscard]] std::span<const std::uint32_t> entries_named(std::string_view name) const;
  // Indices of the DEFAULT entries, in file order.
  [[nodiscard]] std::span<const std::uint32_t> default_entries() const { return defaults_; }

  [[nodiscard]] const std::vector<std::string>& file_names() const { return file_names_; }
  [[nodiscard]] const std::string& file_of(const UserEntry& entry) const {
    return file_names_[entry.file_index];
  }
  // Accepted-with-a-change notes, such as `=` turned into `==` on the check line.
  [[nodiscard]] const std::vector<SourceError>& warnings() const { return warnings_; }
  [[nodiscard]] const radius::Dictionary& dictionary() const { return *dictionary_; }

 private:
  friend class UsersParser;
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
  };

  std::shared_ptr<const radius::Dictionary> dictionary_;
  std::vector<UserEntry> entries_;
  std::unordered_map<std::string, std::vector<std::uint32_t>, NameHash, std::equal_to<>> by_name_;
  std::vector<std::uint32_t> defaults_;
  std::vector<std::string> file_names_;
  std::vector<SourceError> warnings_;
};

}  // namespace rw::config
