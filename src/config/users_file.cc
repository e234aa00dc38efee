// The users-file reader; see users_file.h and docs/users_and_clients.md.
#include "config/users_file.h"

#include <regex.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>

#include <fmt/format.h>

#include "base/assert.h"

namespace rw::config {

std::string_view to_string(UsersOperator op) {
  switch (op) {
    case UsersOperator::kSet:
      return ":=";
    case UsersOperator::kAssign:
      return "=";
    case UsersOperator::kAdd:
      return "+=";
    case UsersOperator::kEqual:
      return "==";
    case UsersOperator::kNotEqual:
      return "!=";
    case UsersOperator::kLess:
      return "<";
    case UsersOperator::kLessEqual:
      return "<=";
    case UsersOperator::kGreater:
      return ">";
    case UsersOperator::kGreaterEqual:
      return ">=";
    case UsersOperator::kRegexMatch:
      return "=~";
    case UsersOperator::kRegexNoMatch:
      return "!~";
    case UsersOperator::kPresent:
      return "=*";
    case UsersOperator::kAbsent:
      return "!*";
  }
  return "?";
}

bool is_comparison(UsersOperator op) {
  return op != UsersOperator::kSet && op != UsersOperator::kAssign && op != UsersOperator::kAdd;
}

namespace {

std::optional<UsersOperator> operator_from_text(std::string_view text) {
  constexpr std::pair<std::string_view, UsersOperator> kTable[] = {
      {":=", UsersOperator::kSet},          {"=", UsersOperator::kAssign},
      {"+=", UsersOperator::kAdd},          {"==", UsersOperator::kEqual},
      {"!=", UsersOperator::kNotEqual},     {"<", UsersOperator::kLess},
      {"<=", UsersOperator::kLessEqual},    {">", UsersOperator::kGreater},
      {">=", UsersOperator::kGreaterEqual}, {"=~", UsersOperator::kRegexMatch},
      {"!~", UsersOperator::kRegexNoMatch}, {"=*", UsersOperator::kPresent},
      {"!*", UsersOperator::kAbsent},
  };
  for (const auto& [spelling, op] : kTable) {
    if (spelling == text) return op;
  }
  return std::nullopt;
}

// A rough bound on the size of the automaton glibc builds for a pattern:
// each atom counts 1, and glibc copies the atom under a quantifier (a+ is
// aa*, a{m,n} is m copies then n-m optional ones), so a quantifier
// multiplies the weight of what it applies to. Stacked or nested
// quantifiers such as a+++++ or ((a{100}){100}){100} are what make regcomp
// take seconds and gigabytes, so heavy patterns are refused. Back-references
// make matching exponential and are refused too.
constexpr std::size_t kRegexWeightMax = 4096;
constexpr unsigned kRegexRepeatMax = 255;

// The multiplier of the counted repetition `{...}` starting at pattern[i];
// moves i to its closing brace.
Result<std::size_t, std::string> repeat_factor(std::string_view pattern, std::size_t& i) {
  unsigned low = 0;
  unsigned high = 0;
  bool comma = false;
  std::size_t j = i + 1;
  for (; j < pattern.size() && pattern[j] != '}'; ++j) {
    char d = pattern[j];
    if (d == ',') {
      comma = true;
    } else if (d >= '0' && d <= '9') {
      unsigned& bound = comma ? high : low;
      bound = bound * 10 + static_cast<unsigned>(d - '0');
      if (bound > kRegexRepeatMax) {
        return fail(fmt::format("repetition counts above {} are not supported", kRegexRepeatMax));
      }
    }
  }
  i = j;
  return std::max<std::size_t>({low, comma ? std::max(high, low + 1) : low, 1});
}

Result<void, std::string> check_regex_cost(std::string_view pattern) {
  std::vector<std::size_t> groups{0};  // Weight of each open group.
  std::size_t last = 0;                // Weight of what a quantifier would apply to.
  bool after_quantifier = false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    std::size_t factor = 0;  // Non-zero: c is a quantifier.
    if (c == '\\') {
      if (i + 1 < pattern.size() && pattern[i + 1] >= '1' && pattern[i + 1] <= '9') {
        return fail(std::string("back-references are not supported"));
      }
      ++i;
      last = 1;
      groups.back() += 1;
    } else if (c == '[') {
      // A bracket expression is one atom; ']' first in it is literal.
      std::size_t j = i + 1;
      if (j < pattern.size() && pattern[j] == '^') ++j;
      if (j < pattern.size() && pattern[j] == ']') ++j;
      while (j < pattern.size() && pattern[j] != ']') ++j;
      i = j;
      last = 1;
      groups.back() += 1;
    } else if (c == '(') {
      groups.push_back(0);
      if (groups.size() > 64) return fail(std::string("groups nested deeper than 64"));
    } else if (c == ')' && groups.size() > 1) {
      last = std::max<std::size_t>(groups.back(), 1);
      groups.pop_back();
      groups.back() += last;
    } else if (c == '{') {
      auto counted = repeat_factor(pattern, i);
      if (!counted) return fail(counted.error());
      factor = *counted;
    } else if (c == '+') {
      factor = 2;
    } else if (c == '*' || c == '?') {
      factor = 1;
    } else if (c == '|' || c == '^' || c == '$') {
      last = 0;
    } else {
      last = 1;
      groups.back() += 1;
    }
    if (factor != 0) {
      // glibc's regcomp takes time exponential in a run of stacked
      // quantifiers (x*++++++++ took over 10 s in the fuzzer), and POSIX
      // leaves their meaning undefined: refuse them.
      if (after_quantifier)
        return fail(std::string("stacked quantifiers (such as a++ or a*+) are not supported"));
      groups.back() += last * (factor - 1);
      last *= factor;
    }
    after_quantifier = factor != 0;
    for (std::size_t weight : groups) {
      if (weight > kRegexWeightMax || last > kRegexWeightMax) {
        return fail(std::string("the expression is too large once expanded"));
      }
    }
  }
  return {};
}

}  // namespace

struct UsersRegex::Compiled {
  regex_t regex;
};

UsersRegex::UsersRegex(std::unique_ptr<Compiled> compiled) : compiled_(std::move(compiled)) {}

UsersRegex::~UsersRegex() { regfree(&compiled_->regex); }

Result<std::shared_ptr<const UsersRegex>, std::string> UsersRegex::compile(std::string_view pattern) {
  if (pattern.find('\0') != std::string_view::npos) return fail(std::string("NUL byte in the expression"));
  auto cost = check_regex_cost(pattern);
  if (!cost) return fail(cost.error());
  auto compiled = std::make_unique<Compiled>();
  std::string text(pattern);
  int status = regcomp(&compiled->regex, text.c_str(), REG_EXTENDED | REG_NOSUB);
  if (status != 0) {
    std::array<char, 256> message{};
    regerror(status, &compiled->regex, message.data(), message.size());
    regfree(&compiled->regex);
    return fail(std::string(message.data()));
  }
  return std::shared_ptr<const UsersRegex>(new UsersRegex(std::move(compiled)));
}

bool UsersRegex::matches(Bytes subject) const {
  // regexec wants a NUL-terminated string (sanitizers check for one even
  // under REG_STARTEND), so the subject is copied; attribute values fit the
  // stack buffer (RFC 2865 §5: at most 253 bytes).
  std::array<char, 1024> buffer;
  std::string spill;
  char* text = buffer.data();
  if (subject.size() >= buffer.size()) {
    spill.resize(subject.size() + 1);
    text = spill.data();
  }
  if (!subject.empty()) std::memcpy(text, subject.data(), subject.size());
  text[subject.size()] = '\0';
  // REG_STARTEND (glibc, BSD) bounds the subject by length, so a NUL byte
  // inside the value does not end it.
  regmatch_t range{};
  range.rm_so = 0;
  range.rm_eo = static_cast<regoff_t>(subject.size());
  return regexec(&compiled_->regex, text, 1, &range, REG_STARTEND) == 0;
}

std::span<const std::uint32_t> UsersFile::entries_named(std::string_view name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return {};
  return it->second;
}

// Builds a UsersFile from text. One instance reads one top-level file and
// everything it includes.
class UsersParser {
 public:
  UsersParser(SourceFiles& files, std::shared_ptr<const radius::Dictionary> dictionary,
              const UsersLimits& limits)
      : files_(files), limits_(limits) {
    out_.dictionary_ = std::move(dictionary);
    fall_through_ = out_.dictionary_->find("Fall-Through");
    user_password_ = out_.dictionary_->find("User-Password");
  }

  [[nodiscard]] Result<void, SourceError> parse_file(const std::string& path,
                                                     const std::optional<SourcePosition>& where);
  [[nodiscard]] Result<void, SourceError> parse_text(std::string_view text, std::string_view file_name);
  [[nodiscard]] UsersFile finish();

 private:
  enum class Side : std::uint8_t { kCheck, kReply };
  struct Item {
    UsersItem item;
    bool is_fall_through = false;
  };

  SourceFiles::TextParser text_parser() {
    return [this](std::string_view text, std::string_view file_name) { return parse_text(text, file_name); };
  }
  [[nodiscard]] Result<void, SourceError> parse_entry(Lexer& lexer, const Token& name);
  [[nodiscard]] Result<bool, SourceError> parse_items(Lexer& lexer, Side side, UserEntry& entry);
  [[nodiscard]] Result<Item, SourceError> parse_item(Lexer& lexer, Side side);
  [[nodiscard]] Result<void, SourceError> parse_operand(Lexer& lexer, const Token& attribute, Item& parsed);
  [[nodiscard]] Result<void, SourceError> check_placement(const SourcePosition& where, Side side,
                                                          Item& parsed);
  [[nodiscard]] std::uint32_t file_index(std::string_view file_name);

  SourceFiles& files_;
  const UsersLimits& limits_;
  UsersFile out_;
  const radius::AttributeDef* fall_through_ = nullptr;
  const radius::AttributeDef* user_password_ = nullptr;
  std::uint32_t current_file_ = 0;
};

Result<void, SourceError> UsersParser::parse_file(const std::string& path,
                                                  const std::optional<SourcePosition>& where) {
  return files_.parse_file(path, where, text_parser());
}

std::uint32_t UsersParser::file_index(std::string_view file_name) {
  out_.file_names_.emplace_back(file_name);
  return static_cast<std::uint32_t>(out_.file_names_.size() - 1);
}

Result<void, SourceError> UsersParser::parse_text(std::string_view text, std::string_view file_name) {
  const std::uint32_t index = file_index(file_name);
  current_file_ = index;
  Lexer lexer(text, file_name);
  for (;;) {
    auto token = lexer.next();
    if (!token) return fail(token.error());
    if (token->kind == TokenKind::kEndOfText) return {};
    if (token->kind == TokenKind::kEndOfLine) continue;
    SourcePosition where = lexer.position(*token);
    if (token->indented) {
      return fail(where.error(
          "indented line outside an entry: reply items follow the check line, and every reply line but the "
          "last ends with ','"));
    }
    Result<void, SourceError> done;
    if (include_kind(*token) != IncludeKind::kNone) {
      done = files_.include(lexer, *token, text_parser());
      current_file_ = index;
    } else if (token->kind == TokenKind::kWord || token->kind == TokenKind::kString) {
      done = parse_entry(lexer, *token);
    } else {
      done =
          fail(where.error(fmt::format("expected a user name or DEFAULT, found {}", to_string(token->kind))));
    }
    if (!done) return done;
  }
}

Result<void, SourceError> UsersParser::parse_entry(Lexer& lexer, const Token& name) {
  SourcePosition where = lexer.position(name);
  if (out_.entries_.size() >= limits_.entries_max) {
    return fail(where.error(fmt::format("more than {} entries", limits_.entries_max)));
  }
  if (name.text.empty()) return fail(where.error("empty user name"));
  UserEntry entry;
  entry.name = name.text;
  entry.is_default = name.text == "DEFAULT";
  entry.file_index = current_file_;
  entry.line = name.line;
  // FreeRADIUS: check items on the first line only.
  auto continued = parse_items(lexer, Side::kCheck, entry);
  if (!continued) return fail(continued.error());
  for (;;) {
    auto next = lexer.peek();
    if (!next) return fail(next.error());
    if (!(next->starts_line && next->indented)) break;
    auto more = parse_items(lexer, Side::kReply, entry);
    if (!more) return fail(more.error());
    if (!*more) break;
    // A reply line ending in ',' continues on the next line, which must be
    // another indented reply line.
    auto following = lexer.peek();
    if (!following) return fail(following.error());
    if (!(following->starts_line && following->indented)) {
      return fail(lexer.position(*following)
                      .error(fmt::format("entry {} ends its reply items with ',' but no indented reply item "
                                         "follows",
                                         entry.name)));
    }
  }
  out_.entries_.push_back(std::move(entry));
  return {};
}

// Parses one line of comma-separated items into `entry`. Returns whether
// the line ended with a comma.
Result<bool, SourceError> UsersParser::parse_items(Lexer& lexer, Side side, UserEntry& entry) {
  std::vector<UsersItem>& items = side == Side::kCheck ? entry.check : entry.reply;
  bool trailing_comma = false;
  for (;;) {
    auto next = lexer.peek();
    if (!next) return fail(next.error());
    if (next->kind == TokenKind::kEndOfLine || next->kind == TokenKind::kEndOfText) {
      (void)lexer.next();
      break;
    }
    trailing_comma = false;
    auto parsed = parse_item(lexer, side);
    if (!parsed) return fail(parsed.error());
    if (parsed->is_fall_through) {
      const std::vector<std::uint8_t>& yes = parsed->item.value;
      entry.fall_through = std::any_of(yes.begin(), yes.end(), [](std::uint8_t byte) { return byte != 0; });
    } else {
      if (items.size() >= limits_.items_per_entry_max) {
        return fail(
            SourcePosition{lexer.file_name(), parsed->item.line, parsed->item.column}.error(fmt::format(
                "more than {} items in one list of entry {}", limits_.items_per_entry_max, entry.name)));
      }
      items.push_back(std::move(parsed->item));
    }
    auto separator = lexer.next();
    if (!separator) return fail(separator.error());
    if (separator->kind == TokenKind::kEndOfLine || separator->kind == TokenKind::kEndOfText) break;
    if (separator->kind != TokenKind::kComma) {
      return fail(lexer.position(*separator)
                      .error(fmt::format("expected ',' between items, found {} '{}'",
                                         to_string(separator->kind), separator->text)));
    }
    trailing_comma = true;
  }
  if (trailing_comma && side == Side::kCheck) {
    return fail(SourcePosition{lexer.file_name(), entry.line, 1}.error(fmt::format(
        "the check items of {} end with ','; check items must all be on the first line", entry.name)));
  }
  return trailing_comma;
}

Result<UsersParser::Item, SourceError> UsersParser::parse_item(Lexer& lexer, Side side) {
  auto attribute = lexer.next();
  if (!attribute) return fail(attribute.error());
  SourcePosition where = lexer.position(*attribute);
  if (attribute->kind != TokenKind::kWord) {
    return fail(where.error(fmt::format("expected an attribute name, found {}", to_string(attribute->kind))));
  }
  Item parsed;
  parsed.item.line = attribute->line;
  parsed.item.column = attribute->column;
  std::string_view name = attribute->text;
  // RFC 2868 §3.1: `Attribute:tag`, tag 0..31.
  if (auto colon = name.rfind(':'); colon != std::string_view::npos) {
    std::string_view tag_text = name.substr(colon + 1);
    unsigned tag = 0;
    bool digits = !tag_text.empty() && tag_text.size() <= 2 &&
                  std::all_of(tag_text.begin(), tag_text.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (digits) {
      for (char c : tag_text) tag = tag * 10 + static_cast<unsigned>(c - '0');
    }
    if (!digits || tag > 31)
      return fail(where.error(fmt::format("bad tag in '{}' (expected 0 to 31)", name)));
    parsed.item.tag = static_cast<std::uint8_t>(tag);
    name = name.substr(0, colon);
  }
  parsed.item.def = out_.dictionary_->find(name);
  if (parsed.item.def == nullptr) return fail(where.error(fmt::format("unknown attribute '{}'", name)));
  if (name.size() != attribute->text.size() && !parsed.item.def->has_tag) {
    return fail(where.error(fmt::format("{} does not take a tag", parsed.item.def->name)));
  }
  parsed.is_fall_through = parsed.item.def == fall_through_;
  auto operand = parse_operand(lexer, *attribute, parsed);
  if (!operand) return fail(operand.error());
  auto placed = check_placement(where, side, parsed);
  if (!placed) return fail(placed.error());
  return parsed;
}

namespace {

bool is_hex(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

// The value limit on the wire (RFC 2865 §5: Length is one octet) minus the
// Vendor-Specific header (RFC 2865 §5.26) and a tag byte (RFC 2868 §3.1).
std::size_t value_bytes_max(const radius::AttributeDef& def, const radius::Dictionary& dictionary) {
  std::size_t max = 253;
  if (def.vendor != 0) {
    const radius::VendorDef* vendor = dictionary.find_vendor(def.vendor);
    max -= 4 + (vendor ? vendor->type_width + vendor->length_width : 2);
  }
  if (def.has_tag) max -= 1;
  return max;
}

}  // namespace

Result<void, SourceError> UsersParser::parse_operand(Lexer& lexer, const Token& attribute, Item& parsed) {
  UsersItem& item = parsed.item;
  auto op_token = lexer.next();
  if (!op_token) return fail(op_token.error());
  SourcePosition op_where = lexer.position(*op_token);
  if (op_token->kind != TokenKind::kOperator) {
    return fail(op_where.error(fmt::format("expected an operator after {}, found {} '{}'", attribute.text,
                                           to_string(op_token->kind), op_token->text)));
  }
  auto op = operator_from_text(op_token->text);
  if (!op)
    return fail(op_where.error(fmt::format("operator {} is not supported in users files", op_token->text)));
  item.op = *op;

  if (item.op == UsersOperator::kPresent || item.op == UsersOperator::kAbsent) {
    // FreeRADIUS writes a placeholder value (`=* ANY`); it is optional here.
    auto peeked = lexer.peek();
    if (!peeked) return fail(peeked.error());
    if (peeked->kind == TokenKind::kWord || peeked->kind == TokenKind::kString) (void)lexer.next();
    return {};
  }
  auto value = lexer.next_value();
  if (!value) return fail(value.error());
  SourcePosition where = lexer.position(*value);
  if (value->kind != TokenKind::kWord && value->kind != TokenKind::kString) {
    return fail(where.error(fmt::format("expected a value after {} {}", attribute.text, op_token->text)));
  }
  if (value->kind == TokenKind::kString && value->quote == '"' &&
      value->text.find("%{") != std::string::npos) {
    // FreeRADIUS expands %{...} in double-quoted values; radiusward does not,
    // and sending the template text unexpanded would be wrong.
    return fail(
        where.error("%{...} expansions are not supported; write the value in single quotes to send it "
                    "literally"));
  }
  if (item.op == UsersOperator::kRegexMatch || item.op == UsersOperator::kRegexNoMatch) {
    std::string_view pattern = value->kind == TokenKind::kString ? value->raw : value->text;
    if (pattern.size() > limits_.regex_bytes_max) {
      return fail(
          where.error(fmt::format("regular expression longer than {} bytes", limits_.regex_bytes_max)));
    }
    auto regex = UsersRegex::compile(pattern);
    if (!regex) return fail(where.error(fmt::format("bad regular expression: {}", regex.error())));
    item.regex = std::move(*regex);
    item.value.assign(pattern.begin(), pattern.end());
    return {};
  }
  const radius::AttributeDef& def = *item.def;
  std::string_view text = value->text;
  // FreeRADIUS accepts NT-Password and LM-Password as 32 bare hex digits.
  std::string with_prefix;
  if ((def.name == "NT-Password" || def.name == "LM-Password") && text.size() == 32 && is_hex(text)) {
    with_prefix = "0x" + std::string(text);
    text = with_prefix;
  }
  auto wire = radius::parse_value(def, text);
  if (!wire) {
    return fail(where.error(
        fmt::format("bad value for {} ({}): {}", def.name, radius::to_string(def.data_type), wire.error())));
  }
  if (!def.internal && !def.concat && wire->size() > value_bytes_max(def, *out_.dictionary_)) {
    return fail(where.error(fmt::format("value of {} is {} bytes; at most {} fit in one attribute", def.name,
                                        wire->size(), value_bytes_max(def, *out_.dictionary_))));
  }
  item.value = std::move(*wire);
  return {};
}

// Refuses items in the wrong list, following FreeRADIUS's own warnings:
// server-side attributes belong on the check line, RADIUS attributes to send
// belong in the reply items, and comparisons only make sense on the check
// line.
Result<void, SourceError> UsersParser::check_placement(const SourcePosition& where, Side side, Item& parsed) {
  UsersItem& item = parsed.item;
  const radius::AttributeDef& def = *item.def;
  if (parsed.is_fall_through) {
    if (side == Side::kCheck) return fail(where.error("Fall-Through belongs in the reply items"));
    if (item.op != UsersOperator::kAssign && item.op != UsersOperator::kSet) {
      return fail(where.error("Fall-Through takes = Yes or = No"));
    }
    return {};
  }
  if (side == Side::kReply) {
    if (is_comparison(item.op)) {
      return fail(
          where.error(fmt::format("comparison {} {} in the reply items; comparisons belong on the first line",
                                  def.name, to_string(item.op))));
    }
    if (def.internal) {
      return fail(
          where.error(fmt::format("{} is a check item, not a reply attribute; it must go on the first line "
                                  "with the other check items",
                                  def.name)));
    }
    return {};
  }
  if (&def == user_password_) {
    return fail(
        where.error("User-Password on the check line: write the password as Cleartext-Password := \"...\""));
  }
  if (def.internal && is_comparison(item.op)) {
    return fail(where.error(fmt::format(
        "{} is computed by FreeRADIUS modules that radiusward does not have; it cannot be compared",
        def.name)));
  }
  if (!def.internal && item.op == UsersOperator::kAssign) {
    // FreeRADIUS 3 does the same, with the same warning.
    item.op = UsersOperator::kEqual;
    out_.warnings_.push_back(where.error(fmt::format(
        "'{} =' on the check line compares the request attribute; read as '{} =='", def.name, def.name)));
  } else if (!def.internal && !is_comparison(item.op)) {
    return fail(
        where.error(fmt::format("{} {} on the check line would set a RADIUS attribute in the control list; "
                                "put it on an indented reply "
                                "line, or compare with ==",
                                def.name, to_string(item.op))));
  }
  return {};
}

UsersFile UsersParser::finish() {
  for (std::uint32_t i = 0; i < out_.entries_.size(); ++i) {
    const UserEntry& entry = out_.entries_[i];
    if (entry.is_default) {
      out_.defaults_.push_back(i);
    } else {
      out_.by_name_[entry.name].push_back(i);
      if (limits_.alias_of == nullptr) continue;
      if (std::string alias = limits_.alias_of(entry.name); !alias.empty() && alias != entry.name) {
        out_.by_name_[alias].push_back(i);
      }
    }
  }
  return std::move(out_);
}

Result<UsersFile, SourceError> UsersFile::load(const std::string& path,
                                               std::shared_ptr<const radius::Dictionary> dictionary,
                                               const UsersLimits& limits) {
  RW_ASSERT(dictionary != nullptr);
  SourceFiles files(/*allow_files=*/true, limits.include);
  UsersParser parser(files, std::move(dictionary), limits);
  auto parsed = parser.parse_file(path, std::nullopt);
  if (!parsed) return fail(parsed.error());
  return parser.finish();
}

Result<UsersFile, SourceError> UsersFile::parse(std::string_view text, std::string_view file_name,
                                                std::shared_ptr<const radius::Dictionary> dictionary,
                                                const UsersLimits& limits) {
  RW_ASSERT(dictionary != nullptr);
  SourceFiles files(/*allow_files=*/false, limits.include);
  UsersParser parser(files, std::move(dictionary), limits);
  auto parsed = parser.parse_text(text, files.remember(std::string(file_name)));
  if (!parsed) return fail(parsed.error());
  return parser.finish();
}

}  // namespace rw::config
