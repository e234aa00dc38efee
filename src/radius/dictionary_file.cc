// Reads FreeRADIUS-format dictionary files (as in freeradius-common 3.2) into
// a Dictionary::Builder: ATTRIBUTE, VALUE, VENDOR, BEGIN-/END-VENDOR,
// BEGIN-/END-TLV, BEGIN-/END-PROTOCOL, PROTOCOL, FLAGS, ALIAS and $INCLUDE.
// The syntax and the conflict rules are described in docs/dictionary.md.
// This is a config loader: the only I/O is reading the files named.
#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include <fmt/format.h>

#include "radius/dictionary_builder.h"

namespace rw::radius {
namespace {

constexpr int kMaxIncludeDepth = 32;
constexpr std::size_t kMaxTlvDepth = 8;
constexpr std::size_t kMaxNameLength = 128;
constexpr std::size_t kMaxTokens = 16;
constexpr std::uintmax_t kMaxFileBytes = 16u << 20;

struct Token {
  std::string_view text;
  int column;  // 1-based byte offset in the line.
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// Splits a line into words; '#' starts a comment anywhere, as in FreeRADIUS.
// Returns false when the line has more words than any directive takes.
bool tokenize(std::string_view line, std::vector<Token>& tokens) {
  tokens.clear();
  const std::size_t comment = line.find('#');
  if (comment != std::string_view::npos) line = line.substr(0, comment);
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    if (i == line.size()) break;
    const std::size_t start = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    if (tokens.size() == kMaxTokens) return false;
    tokens.push_back(Token{line.substr(start, i - start), static_cast<int>(start) + 1});
  }
  return true;
}

// Decimal or 0x-hex, as FreeRADIUS writes attribute numbers and VALUEs.
std::optional<std::uint32_t> parse_number(std::string_view text) {
  const auto number = parse_unsigned(text);
  if (!number || *number > 0xFFFFFFFF) return std::nullopt;
  return static_cast<std::uint32_t>(*number);
}

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || c == '.' || c == '/' || c == ':' || c == '+';
    if (!ok) return false;
  }
  return true;
}

struct TypeName {
  std::string_view name;
  DataType type;
};

// FreeRADIUS 3 names, and the FreeRADIUS 4 spellings of the same types.
constexpr std::array<TypeName, 29> kTypeNames = {{
    {"string", DataType::kString},
    {"octets", DataType::kOctets},
    {"ipaddr", DataType::kIpAddr},
    {"ipv4addr", DataType::kIpAddr},
    {"ipv6addr", DataType::kIpv6Addr},
    {"ipv6prefix", DataType::kIpv6Prefix},
    {"ipv4prefix", DataType::kIpv4Prefix},
    {"integer", DataType::kInteger},
    {"uint32", DataType::kInteger},
    {"byte", DataType::kByte},
    {"uint8", DataType::kByte},
    {"short", DataType::kShort},
    {"uint16", DataType::kShort},
    {"signed", DataType::kSigned},
    {"int32", DataType::kSigned},
    {"integer64", DataType::kInteger64},
    {"uint64", DataType::kInteger64},
    {"date", DataType::kDate},
    {"ifid", DataType::kIfid},
    {"ether", DataType::kEther},
    {"abinary", DataType::kAbinary},
    {"tlv", DataType::kTlv},
    {"vsa", DataType::kVsa},
    {"extended", DataType::kExtended},
    {"long-extended", DataType::kLongExtended},
    {"evs", DataType::kEvs},
    {"combo-ip", DataType::kComboIp},
    {"combo-ipaddr", DataType::kComboIp},
    {"text", DataType::kString},
}};

bool is_container(DataType type) {
  return type == DataType::kTlv || type == DataType::kExtended || type == DataType::kLongExtended ||
         type == DataType::kEvs || type == DataType::kVsa;
}

// One file being read: the BEGIN-* blocks open in it. FreeRADIUS scopes
// them to the file, so an $INCLUDEd file starts with none.
struct FileState {
  std::string file;
  std::filesystem::path folder;
  int depth = 0;
  int line = 0;
  const VendorDef* vendor = nullptr;
  int vendor_line = 0;
  const AttributeDef* evs = nullptr;  // BEGIN-VENDOR ... format=Extended-Vendor-Specific-N
  std::vector<const AttributeDef*> tlvs;
  std::vector<bool> protocols;  // true: RADIUS (read); false: another protocol (skipped).
  bool default_internal = false;

  bool skipping() const {
    for (bool radius : protocols) {
      if (!radius) return true;
    }
    return false;
  }
};

class Reader {
 public:
  Reader(Dictionary::Builder& builder, bool allow_include)
      : builder_(builder), allow_include_(allow_include) {}

  Result<void, DictionaryError> read_file(const std::filesystem::path& path, int depth,
                                          const DictionaryError& where);
  Result<void, DictionaryError> read_text(std::string_view text, FileState& state);

 private:
  using Status = Result<void, DictionaryError>;

  static DictionaryError error_at(const FileState& state, int column, std::string message) {
    return DictionaryError{state.file, state.line, column, std::move(message)};
  }

  Status on_line(FileState& state, std::span<const Token> tokens);
  Status on_include(FileState& state, std::span<const Token> tokens, bool optional);
  Status on_attribute(FileState& state, std::span<const Token> tokens);
  Status on_value(FileState& state, std::span<const Token> tokens);
  Status on_vendor(FileState& state, std::span<const Token> tokens);
  Status on_begin_vendor(FileState& state, std::span<const Token> tokens);
  Status on_end_vendor(FileState& state, std::span<const Token> tokens);
  Status on_begin_tlv(FileState& state, std::span<const Token> tokens);
  Status on_end_tlv(FileState& state, std::span<const Token> tokens);
  Status on_protocol(FileState& state, std::span<const Token> tokens, bool begin);
  Status on_flags(FileState& state, std::span<const Token> tokens);
  Status on_alias(FileState& state, std::span<const Token> tokens);
  Status apply_flags(FileState& state, const Token& token, AttributeDef& def);
  Status resolve_number(FileState& state, const Token& token, AttributeDef& def);
  static Result<VendorDef, DictionaryError> parse_vendor_format(const FileState& state, const Token& token,
                                                                VendorDef vendor);

  Dictionary::Builder& builder_;
  bool allow_include_;
  std::vector<std::filesystem::path> include_stack_;
};

Result<void, DictionaryError> Reader::read_file(const std::filesystem::path& path, int depth,
                                                const DictionaryError& where) {
  std::error_code error;
  std::filesystem::path canonical = std::filesystem::weakly_canonical(path, error);
  if (error) canonical = path;
  for (const auto& open : include_stack_) {
    if (open == canonical) {
      return fail(DictionaryError{where.file, where.line, where.column,
                                  fmt::format("$INCLUDE loop: '{}' is already being read", path.string())});
    }
  }
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (!error && size > kMaxFileBytes) {
    return fail(DictionaryError{where.file, where.line, where.column,
                                fmt::format("'{}' is larger than {} bytes", path.string(), kMaxFileBytes)});
  }
  std::ifstream in(path, std::ios::binary);
  if (!in || std::filesystem::is_directory(path, error)) {
    return fail(DictionaryError{where.file, where.line, where.column,
                                fmt::format("cannot read '{}'", path.string())});
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) {
    return fail(DictionaryError{where.file, where.line, where.column,
                                fmt::format("error while reading '{}'", path.string())});
  }
  include_stack_.push_back(canonical);
  FileState state;
  state.file = path.string();
  state.folder = path.parent_path();
  state.depth = depth;
  auto status = read_text(text, state);
  include_stack_.pop_back();
  return status;
}

Result<void, DictionaryError> Reader::read_text(std::string_view text, FileState& state) {
  std::vector<Token> tokens;
  tokens.reserve(kMaxTokens);
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(end == text.size() ? end : end + 1);
    ++state.line;
    if (!tokenize(line, tokens)) return fail(error_at(state, 1, "too many words on one line"));
    if (tokens.empty()) continue;
    if (auto status = on_line(state, tokens); !status) return status;
  }
  ++state.line;
  if (!state.tlvs.empty()) {
    return fail(error_at(state, 1, fmt::format("BEGIN-TLV {} has no END-TLV", state.tlvs.back()->name)));
  }
  if (state.vendor != nullptr) {
    return fail(error_at(
        state, 1,
        fmt::format("BEGIN-VENDOR {} (line {}) has no END-VENDOR", state.vendor->name, state.vendor_line)));
  }
  if (!state.protocols.empty()) return fail(error_at(state, 1, "BEGIN-PROTOCOL has no END-PROTOCOL"));
  return {};
}

Result<void, DictionaryError> Reader::on_line(FileState& state, std::span<const Token> tokens) {
  const std::string_view keyword = tokens[0].text;
  auto is = [keyword](std::string_view name) { return equal_ignoring_case(keyword, name); };
  if (is("BEGIN-PROTOCOL")) return on_protocol(state, tokens, true);
  if (is("END-PROTOCOL")) return on_protocol(state, tokens, false);
  // FreeRADIUS 4 files describe other protocols (DHCP, ...) in blocks that
  // are not RADIUS attributes; they are skipped whole.
  if (state.skipping()) return {};
  if (is("ATTRIBUTE")) return on_attribute(state, tokens);
  if (is("VALUE")) return on_value(state, tokens);
  if (is("VENDOR")) return on_vendor(state, tokens);
  if (is("BEGIN-VENDOR")) return on_begin_vendor(state, tokens);
  if (is("END-VENDOR")) return on_end_vendor(state, tokens);
  if (is("BEGIN-TLV")) return on_begin_tlv(state, tokens);
  if (is("END-TLV")) return on_end_tlv(state, tokens);
  if (is("$INCLUDE")) return on_include(state, tokens, false);
  if (is("$INCLUDE-")) return on_include(state, tokens, true);
  if (is("PROTOCOL")) return {};  // Names a protocol number; nothing to keep for RADIUS.
  if (is("FLAGS")) return on_flags(state, tokens);
  if (is("ALIAS")) return on_alias(state, tokens);
  return fail(error_at(state, tokens[0].column, fmt::format("unknown directive '{}'", keyword)));
}

Result<void, DictionaryError> Reader::on_include(FileState& state, std::span<const Token> tokens,
                                                 bool optional) {
  if (tokens.size() != 2) return fail(error_at(state, tokens[0].column, "expected: $INCLUDE <file>"));
  if (!allow_include_) {
    if (optional) return {};
    return fail(error_at(state, tokens[0].column, "$INCLUDE is not allowed in a dictionary given as text"));
  }
  if (state.depth + 1 > kMaxIncludeDepth) {
    return fail(error_at(state, tokens[1].column,
                         fmt::format("$INCLUDE nested more than {} files deep", kMaxIncludeDepth)));
  }
  std::filesystem::path path(std::string(tokens[1].text));
  if (path.is_relative()) path = state.folder / path;
  std::error_code error;
  if (optional && !std::filesystem::exists(path, error)) return {};
  return read_file(path, state.depth + 1, error_at(state, tokens[1].column, ""));
}

// ATTRIBUTE <name> <number> <type> [<flags>|<vendor>]
Result<void, DictionaryError> Reader::on_attribute(FileState& state, std::span<const Token> tokens) {
  if (tokens.size() < 4) {
    return fail(error_at(state, tokens[0].column, "expected: ATTRIBUTE <name> <number> <type> [<flags>]"));
  }
  AttributeDef def;
  if (!valid_name(tokens[1].text)) {
    return fail(
        error_at(state, tokens[1].column, fmt::format("'{}' is not a valid attribute name", tokens[1].text)));
  }
  def.name = tokens[1].text;
  def.internal = state.default_internal;

  std::string_view type_name = tokens[3].text;
  if (const std::size_t bracket = type_name.find('['); bracket != std::string_view::npos) {
    const std::string_view length = type_name.substr(bracket + 1);
    auto fixed = length.empty() || length.back() != ']' ? std::nullopt
                                                        : parse_number(length.substr(0, length.size() - 1));
    if (!fixed || *fixed == 0 || *fixed > 253 ||
        !equal_ignoring_case(type_name.substr(0, bracket), "octets")) {
      return fail(error_at(state, tokens[3].column, fmt::format("'{}' is not a valid type", type_name)));
    }
    def.fixed_length = static_cast<std::uint16_t>(*fixed);
    type_name = type_name.substr(0, bracket);
  }
  const auto* known = std::find_if(kTypeNames.begin(), kTypeNames.end(), [type_name](const TypeName& t) {
    return equal_ignoring_case(t.name, type_name);
  });
  if (known == kTypeNames.end()) {
    return fail(error_at(state, tokens[3].column, fmt::format("unknown data type '{}'", type_name)));
  }
  def.data_type = known->type;

  def.vendor = state.vendor == nullptr ? 0 : state.vendor->number;
  for (const Token& token : tokens.subspan(4)) {
    if (auto status = apply_flags(state, token, def); !status) return status;
  }
  if (auto status = resolve_number(state, tokens[2], def); !status) return status;
  if (auto added = builder_.add_attribute(std::move(def)); !added) {
    return fail(error_at(state, tokens[1].column, std::move(added.error())));
  }
  return {};
}

// has_tag, encrypt=N, array, concat, virtual, secret, internal; or the name
// of a vendor (the FreeRADIUS 1 form "ATTRIBUTE name number type Vendor").
Result<void, DictionaryError> Reader::apply_flags(FileState& state, const Token& token, AttributeDef& def) {
  if (token.text.find_first_of(",=") == std::string_view::npos) {
    if (const VendorDef* vendor = builder_.find_vendor(token.text)) {
      if (state.vendor != nullptr || !state.tlvs.empty()) {
        return fail(error_at(state, token.column, "a vendor name after the type is not allowed in a block"));
      }
      def.vendor = vendor->number;
      return {};
    }
  }
  std::string_view rest = token.text;
  int column = token.column;
  while (!rest.empty()) {
    const std::size_t comma = std::min(rest.find(','), rest.size());
    const std::string_view flag = rest.substr(0, comma);
    if (flag == "has_tag") {
      def.has_tag = true;
    } else if (flag == "array") {
      def.array = true;
    } else if (flag == "concat") {
      def.concat = true;
    } else if (flag == "virtual" || flag == "internal") {
      def.internal = true;
    } else if (flag == "secret") {
      def.secret = true;
    } else if (flag.starts_with("encrypt=")) {
      const auto method = parse_number(flag.substr(8));
      if (!method || *method > 3) {
        return fail(error_at(state, column, fmt::format("'{}': encrypt= takes 0, 1, 2 or 3", flag)));
      }
      def.encryption = static_cast<Encryption>(*method);
    } else {
      return fail(error_at(state, column, fmt::format("unknown attribute flag '{}'", flag)));
    }
    column += static_cast<int>(comma) + 1;
    rest.remove_prefix(comma == rest.size() ? comma : comma + 1);
  }
  if (def.concat && def.data_type != DataType::kOctets) {
    return fail(error_at(state, token.column, "concat is only allowed on octets attributes"));
  }
  return {};
}

// Finds the parent of a dotted number ("26.1", "241.26", "186.11.2.1") in
// the current block, and checks the number's range for where it lives.
Result<void, DictionaryError> Reader::resolve_number(FileState& state, const Token& token,
                                                     AttributeDef& def) {
  const AttributeDef* parent = state.tlvs.empty() ? state.evs : state.tlvs.back();
  if (parent != nullptr && parent->data_type != DataType::kEvs) def.vendor = parent->vendor;
  std::string_view rest = token.text;
  while (true) {
    const std::size_t dot = rest.find('.');
    const auto number = parse_number(rest.substr(0, dot));
    if (!number)
      return fail(error_at(state, token.column, fmt::format("'{}' is not an attribute number", token.text)));
    if (dot == std::string_view::npos) {
      def.type = *number;
      break;
    }
    const AttributeDef* next = builder_.find_number(parent, def.vendor, *number);
    if (next == nullptr || !is_container(next->data_type)) {
      return fail(error_at(state, token.column,
                           fmt::format("'{}': {} is not a tlv or extended attribute", token.text, *number)));
    }
    parent = next;
    rest.remove_prefix(dot + 1);
  }
  def.parent = parent;
  std::uint32_t max = 0xFFFFFFFF;
  if (parent != nullptr) {
    max = 255;
  } else if (def.vendor != 0) {
    const VendorDef* vendor = builder_.find_vendor(def.vendor);
    const std::uint8_t width = vendor == nullptr ? 1 : vendor->type_width;
    max = width == 1 ? 0xFF : width == 2 ? 0xFFFF : 0xFFFFFFFF;
  }
  if (def.type > max || (parent != nullptr && def.type == 0) || (def.vendor == 0 && def.type == 0)) {
    return fail(error_at(state, token.column, fmt::format("attribute number {} is out of range", def.type)));
  }
  return {};
}

// VALUE <attribute> <name> <number>
Result<void, DictionaryError> Reader::on_value(FileState& state, std::span<const Token> tokens) {
  if (tokens.size() != 4) {
    return fail(error_at(state, tokens[0].column, "expected: VALUE <attribute> <name> <number>"));
  }
  if (tokens[2].text.size() > kMaxNameLength)
    return fail(error_at(state, tokens[2].column, "VALUE name is too long"));
  const auto number = parse_number(tokens[3].text);
  if (!number) {
    return fail(error_at(state, tokens[3].column, fmt::format("'{}' is not a number", tokens[3].text)));
  }
  auto added = builder_.add_value(tokens[1].text, tokens[2].text, *number,
                                  SourcePosition{state.file, state.line, tokens[1].column});
  if (!added) return fail(error_at(state, tokens[2].column, std::move(added.error())));
  return {};
}

// format=t,l[,c]: the widths of a vendor's type and length fields.
Result<VendorDef, DictionaryError> Reader::parse_vendor_format(const FileState& state, const Token& token,
                                                               VendorDef vendor) {
  const std::string_view text = token.text;
  const auto bad = [&] {
    return fail(error_at(state, token.column, fmt::format("'{}': expected format=1|2|4,0|1|2[,c]", text)));
  };
  if (!text.starts_with("format=") || text.size() < 10 || text[8] != ',') return bad();
  const char type_width = text[7];
  const char length_width = text[9];
  if (type_width != '1' && type_width != '2' && type_width != '4') return bad();
  if (length_width != '0' && length_width != '1' && length_width != '2') return bad();
  vendor.type_width = static_cast<std::uint8_t>(type_width - '0');
  vendor.length_width = static_cast<std::uint8_t>(length_width - '0');
  if (text.size() == 12 && text.substr(10) == ",c" && type_width == '1' && length_width == '1') {
    vendor.continuation = true;
  } else if (text.size() != 10) {
    return bad();
  }
  return vendor;
}

// VENDOR <name> <number> [format=t,l[,c]]
Result<void, DictionaryError> Reader::on_vendor(FileState& state, std::span<const Token> tokens) {
  if (tokens.size() < 3 || tokens.size() > 4) {
    return fail(error_at(state, tokens[0].column, "expected: VENDOR <name> <number> [format=t,l]"));
  }
  if (!valid_name(tokens[1].text)) {
    return fail(
        error_at(state, tokens[1].column, fmt::format("'{}' is not a valid vendor name", tokens[1].text)));
  }
  const auto number = parse_number(tokens[2].text);
  if (!number || *number == 0 || *number > 0xFFFFFF) {
    return fail(
        error_at(state, tokens[2].column, fmt::format("'{}' is not a vendor number", tokens[2].text)));
  }
  VendorDef vendor{.name = std::string(tokens[1].text), .number = *number};
  if (tokens.size() == 4) {
    auto formatted = parse_vendor_format(state, tokens[3], std::move(vendor));
    if (!formatted) return fail(std::move(formatted.error()));
    vendor = std::move(*formatted);
  }
  if (auto added = builder_.add_vendor(std::move(vendor)); !added) {
    return fail(error_at(state, tokens[1].column, std::move(added.error())));
  }
  return {};
}

// BEGIN-VENDOR <name> [format=Extended-Vendor-Specific-N]
Result<void, DictionaryError> Reader::on_begin_vendor(FileState& state, std::span<const Token> tokens) {
  if (tokens.size() < 2 || tokens.size() > 3) {
    return fail(error_at(state, tokens[0].column, "expected: BEGIN-VENDOR <name> [format=...]"));
  }
  if (state.vendor != nullptr) {
    return fail(error_at(state, tokens[0].column,
                         fmt::format("BEGIN-VENDOR inside BEGIN-VENDOR {}", state.vendor->name)));
  }
  const VendorDef* vendor = builder_.find_vendor(tokens[1].text);
  if (vendor == nullptr) {
    return fail(error_at(state, tokens[1].column, fmt::format("unknown vendor '{}'", tokens[1].text)));
  }
  state.evs = nullptr;
  if (tokens.size() == 3) {
    // RFC 6929 §2.4: the vendor's attributes live inside an
    // Extended-Vendor-Specific attribute rather than in Vendor-Specific.
    const std::string_view format = tokens[2].text;
    const AttributeDef* evs = format.starts_with("format=") ? builder_.find(format.substr(7))
                                                            : static_cast<const AttributeDef*>(nullptr);
    if (evs == nullptr || evs->data_type != DataType::kEvs) {
      return fail(error_at(state, tokens[2].column,
                           fmt::format("'{}': expected format=Extended-Vendor-Specific-<n>", format)));
    }
    state.evs = evs;
  }
  state.vendor = vendor;
  state.vendor_line = state.line;
  return {};
}

Result<void, DictionaryError> Reader::on_end_vendor(FileState& state, std::span<const Token> tokens) {
  if (tokens.size() != 2) return fail(error_at(state, tokens[0].column, "expected: END-VENDOR <name>"));
  if (state.vendor == nullptr || !equal_ignoring_case(state.vendor->name, tokens[1].text)) {
    return fail(
        error_at(state, tokens[1].column, fmt::format("END-VENDOR {} without BEGIN-VENDOR", tokens[1].text)));
  }
  if (!state.tlvs.empty()) {
    return fail(error_at(state, tokens[0].column,
                         fmt::format("BEGIN-TLV {} is still open", state.tlvs.back()->name)));
  }
  state.vendor = nullptr;
  state.evs = nullptr;
  return {};
}

Result<void, DictionaryError> Reader::on_begin_tlv(FileState& state, std::span<const Token> tokens) {
  if (tokens.size() != 2) return fail(error_at(state, tokens[0].column, "expected: BEGIN-TLV <name>"));
  const AttributeDef* tlv = builder_.find(tokens[1].text);
  if (tlv == nullptr || tlv->data_type != DataType::kTlv) {
    return fail(
        error_at(state, tokens[1].column, fmt::format("'{}' is not a tlv attribute", tokens[1].text)));
  }
  if (state.tlvs.size() == kMaxTlvDepth) {
    return fail(
        error_at(state, tokens[0].column, fmt::format("BEGIN-TLV nested more than {} deep", kMaxTlvDepth)));
  }
  state.tlvs.push_back(tlv);
  return {};
}

Result<void, DictionaryError> Reader::on_end_tlv(FileState& state, std::span<const Token> tokens) {
  if (tokens.size() != 2) return fail(error_at(state, tokens[0].column, "expected: END-TLV <name>"));
  if (state.tlvs.empty() || !equal_ignoring_case(state.tlvs.back()->name, tokens[1].text)) {
    return fail(
        error_at(state, tokens[1].column, fmt::format("END-TLV {} without BEGIN-TLV", tokens[1].text)));
  }
  state.tlvs.pop_back();
  return {};
}

Result<void, DictionaryError> Reader::on_protocol(FileState& state, std::span<const Token> tokens,
                                                  bool begin) {
  if (tokens.size() != 2) {
    return fail(error_at(state, tokens[0].column, fmt::format("expected: {} <name>", tokens[0].text)));
  }
  if (begin) {
    if (state.protocols.size() == kMaxTlvDepth) {
      return fail(error_at(state, tokens[0].column, "BEGIN-PROTOCOL nested too deep"));
    }
    state.protocols.push_back(equal_ignoring_case(tokens[1].text, "RADIUS"));
    return {};
  }
  if (state.protocols.empty()) {
    return fail(error_at(state, tokens[1].column,
                         fmt::format("END-PROTOCOL {} without BEGIN-PROTOCOL", tokens[1].text)));
  }
  state.protocols.pop_back();
  return {};
}

// FLAGS [!]internal: marks the following attributes of this file
// server-side (FreeRADIUS 4).
Result<void, DictionaryError> Reader::on_flags(FileState& state, std::span<const Token> tokens) {
  if (tokens.size() != 2 || (tokens[1].text != "internal" && tokens[1].text != "!internal")) {
    return fail(error_at(state, tokens[0].column, "expected: FLAGS internal | FLAGS !internal"));
  }
  state.default_internal = tokens[1].text == "internal";
  return {};
}

// ALIAS <new-name> <existing-attribute>
Result<void, DictionaryError> Reader::on_alias(FileState& state, std::span<const Token> tokens) {
  if (tokens.size() != 3)
    return fail(error_at(state, tokens[0].column, "expected: ALIAS <name> <attribute>"));
  if (!valid_name(tokens[1].text)) {
    return fail(
        error_at(state, tokens[1].column, fmt::format("'{}' is not a valid attribute name", tokens[1].text)));
  }
  if (auto added = builder_.add_alias(tokens[1].text, tokens[2].text); !added) {
    return fail(error_at(state, tokens[2].column, std::move(added.error())));
  }
  return {};
}

}  // namespace

Result<std::shared_ptr<const Dictionary>, DictionaryError> Dictionary::load(const std::string& path) {
  Builder builder;
  add_builtin_definitions(builder);
  Reader reader(builder, true);
  if (auto status = reader.read_file(path, 0, DictionaryError{path, 0, 0, ""}); !status) {
    return fail(std::move(status.error()));
  }
  return builder.finish();
}

Result<std::shared_ptr<const Dictionary>, DictionaryError> Dictionary::parse(std::string_view text,
                                                                             std::string_view file_name) {
  Builder builder;
  add_builtin_definitions(builder);
  Reader reader(builder, false);
  FileState state;
  state.file = file_name;
  if (auto status = reader.read_text(text, state); !status) return fail(std::move(status.error()));
  return builder.finish();
}

}  // namespace rw::radius
