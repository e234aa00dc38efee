// The FreeRADIUS-format tokenizer and `$INCLUDE` resolution; see
// freeradius_lexer.h.
#include "config/freeradius_lexer.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "base/assert.h"

namespace rw::config {

std::string SourceError::to_string() const {
  if (line <= 0) return fmt::format("{}: {}", file, message);
  return fmt::format("{}:{}:{}: {}", file, line, column, message);
}

SourceError SourcePosition::error(std::string message) const {
  return SourceError{std::string(file), line, column, std::move(message)};
}

std::string_view to_string(TokenKind kind) {
  switch (kind) {
    case TokenKind::kWord:
      return "word";
    case TokenKind::kString:
      return "quoted string";
    case TokenKind::kOperator:
      return "operator";
    case TokenKind::kOpenBrace:
      return "'{'";
    case TokenKind::kCloseBrace:
      return "'}'";
    case TokenKind::kComma:
      return "','";
    case TokenKind::kEndOfLine:
      return "end of line";
    case TokenKind::kEndOfText:
      return "end of file";
  }
  return "token";
}

namespace {

// Longest first, so that ":=" wins over "=" and "=~" over "=".
constexpr std::array<std::string_view, 14> kOperators = {
    ":=", "==", "+=", "-=", "!=", ">=", "<=", "=~", "!~", "=*", "!*", "=", ">", "<"};

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

bool ends_word(char c) {
  return is_blank(c) || c == '\n' || c == ',' || c == '{' || c == '}' || c == '"' || c == '\'' || c == '`' ||
         c == '#';
}

bool is_octal(char c) { return c >= '0' && c <= '7'; }

}  // namespace

Lexer::Lexer(std::string_view text, std::string_view file_name) : text_(text), file_name_(file_name) {}

Result<Token, SourceError> Lexer::peek() {
  if (!peeked_) {
    auto token = scan();
    if (!token) return token;
    peeked_ = std::move(*token);
  }
  return *peeked_;
}

Result<Token, SourceError> Lexer::next() {
  if (peeked_) {
    Token token = std::move(*peeked_);
    peeked_.reset();
    return token;
  }
  return scan();
}

Result<Token, SourceError> Lexer::next_value() {
  RW_ASSERT(!peeked_);
  value_mode_ = true;
  auto token = scan();
  value_mode_ = false;
  return token;
}

SourceError Lexer::error_here(std::string message) const {
  return SourceError{std::string(file_name_), line_, static_cast<int>(offset_ - line_start_) + 1,
                     std::move(message)};
}

void Lexer::skip_blanks_and_comments() {
  while (offset_ < text_.size()) {
    char c = text_[offset_];
    if (is_blank(c)) {
      ++offset_;
    } else if (c == '#') {
      while (offset_ < text_.size() && text_[offset_] != '\n') ++offset_;
    } else {
      return;
    }
  }
}

std::size_t Lexer::operator_length_at(std::size_t at) const {
  // Every operator starts with one of these; most word characters do not.
  char first = text_[at];
  if (first != '=' && first != ':' && first != '+' && first != '-' && first != '!' && first != '<' &&
      first != '>') {
    return 0;
  }
  std::string_view rest = text_.substr(at);
  for (std::string_view op : kOperators) {
    if (rest.starts_with(op)) return op.size();
  }
  return 0;
}

Result<Token, SourceError> Lexer::scan() {
  for (;;) {
    skip_blanks_and_comments();
    if (offset_ >= text_.size()) {
      Token token;
      token.line = line_;
      token.column = static_cast<int>(offset_ - line_start_) + 1;
      token.kind = line_has_token_ ? TokenKind::kEndOfLine : TokenKind::kEndOfText;
      line_has_token_ = false;
      return token;
    }
    if (text_[offset_] != '\n') break;
    Token end;
    end.kind = TokenKind::kEndOfLine;
    end.line = line_;
    end.column = static_cast<int>(offset_ - line_start_) + 1;
    bool emit = line_has_token_;
    ++offset_;
    ++line_;
    line_start_ = offset_;
    line_has_token_ = false;
    if (emit) return end;
  }

  Token token;
  token.line = line_;
  token.column = static_cast<int>(offset_ - line_start_) + 1;
  token.starts_line = !line_has_token_;
  token.indented = line_start_ < text_.size() && (text_[line_start_] == ' ' || text_[line_start_] == '\t');
  line_has_token_ = true;

  char c = text_[offset_];
  switch (c) {
    case '{':
      token.kind = TokenKind::kOpenBrace;
      token.text = "{";
      ++offset_;
      return token;
    case '}':
      token.kind = TokenKind::kCloseBrace;
      token.text = "}";
      ++offset_;
      return token;
    case ',':
      token.kind = TokenKind::kComma;
      token.text = ",";
      ++offset_;
      return token;
    case '"':
    case '\'':
      return scan_string(std::move(token));
    case '`':
      return fail(error_here("back-quoted strings (program execution) are not supported"));
    default:
      break;
  }
  if (std::size_t length = value_mode_ ? 0 : operator_length_at(offset_); length > 0) {
    token.kind = TokenKind::kOperator;
    token.text = std::string(text_.substr(offset_, length));
    offset_ += length;
    return token;
  }
  return scan_word(std::move(token));
}

Result<Token, SourceError> Lexer::scan_word(Token token) {
  std::size_t start = offset_;
  int braces = 0;  // In a value, `${confdir}` keeps its braces.
  for (; offset_ < text_.size(); ++offset_) {
    char c = text_[offset_];
    if (value_mode_ && c == '{' && offset_ > start) {
      ++braces;
    } else if (value_mode_ && c == '}' && braces > 0) {
      --braces;
    } else if (ends_word(c) || (!value_mode_ && operator_length_at(offset_) > 0)) {
      break;
    }
    if (c == '\0') return fail(error_here("NUL byte in text"));
    if (offset_ - start >= kTokenBytesMax) {
      return fail(SourceError{std::string(file_name_), token.line, token.column,
                              fmt::format("word longer than {} bytes", kTokenBytesMax)});
    }
  }
  token.kind = TokenKind::kWord;
  token.text = std::string(text_.substr(start, offset_ - start));
  return token;
}

Result<Token, SourceError> Lexer::scan_string(Token token) {
  const char quote = text_[offset_];
  token.kind = TokenKind::kString;
  token.quote = quote;
  ++offset_;
  auto unterminated = [&] {
    return SourceError{std::string(file_name_), token.line, token.column, "unterminated quoted string"};
  };
  for (;;) {
    if (token.text.size() > kTokenBytesMax || token.raw.size() > kTokenBytesMax) {
      return fail(SourceError{std::string(file_name_), token.line, token.column,
                              fmt::format("quoted string longer than {} bytes", kTokenBytesMax)});
    }
    if (offset_ >= text_.size() || text_[offset_] == '\n') return fail(unterminated());
    char c = text_[offset_];
    if (c == '\0') return fail(error_here("NUL byte in text"));
    if (c == quote) {
      ++offset_;
      return token;
    }
    if (c != '\\') {
      token.text.push_back(c);
      token.raw.push_back(c);
      ++offset_;
      continue;
    }
    if (offset_ + 1 >= text_.size() || text_[offset_ + 1] == '\n') return fail(unterminated());
    char e = text_[offset_ + 1];
    offset_ += 2;
    if (e == quote) {
      token.text.push_back(e);
      token.raw.push_back(e);
      continue;
    }
    token.raw.push_back('\\');
    token.raw.push_back(e);
    if (e == '\\') {
      token.text.push_back('\\');
      continue;
    }
    if (quote == '\'') {
      // Single quotes take no other escapes (FreeRADIUS).
      token.text.push_back('\\');
      token.text.push_back(e);
      continue;
    }
    switch (e) {
      case 'n':
        token.text.push_back('\n');
        continue;
      case 'r':
        token.text.push_back('\r');
        continue;
      case 't':
        token.text.push_back('\t');
        continue;
      case '\'':
        token.text.push_back('\'');
        continue;
      default:
        break;
    }
    if (is_octal(e) && offset_ + 1 < text_.size() && is_octal(text_[offset_]) &&
        is_octal(text_[offset_ + 1])) {
      int value = (e - '0') * 64 + (text_[offset_] - '0') * 8 + (text_[offset_ + 1] - '0');
      if (value > 255) return fail(error_here("octal escape above \\377"));
      token.raw.push_back(text_[offset_]);
      token.raw.push_back(text_[offset_ + 1]);
      token.text.push_back(static_cast<char>(value));
      offset_ += 2;
      continue;
    }
    // An unknown escape is kept as written, backslash included.
    token.text.push_back('\\');
    token.text.push_back(e);
  }
}

IncludeKind include_kind(const Token& token) {
  if (token.kind != TokenKind::kWord) return IncludeKind::kNone;
  auto equals = [&](std::string_view word) {
    return std::equal(token.text.begin(), token.text.end(), word.begin(), word.end(),
                      [](char a, char b) { return std::toupper(static_cast<unsigned char>(a)) == b; });
  };
  if (equals("$INCLUDE")) return IncludeKind::kRequired;
  if (equals("$-INCLUDE")) return IncludeKind::kOptional;
  return IncludeKind::kNone;
}

std::string_view SourceFiles::remember(std::string name) {
  names_.push_back(std::move(name));
  return names_.back();
}

Result<std::string, SourceError> SourceFiles::read(const std::string& path,
                                                   const std::optional<SourcePosition>& where) {
  auto error = [&](std::string message) {
    if (where) return where->error(std::move(message));
    return SourceError{path, 0, 0, std::move(message)};
  };
  if (!allow_files_) return fail(error("reading files is not allowed here"));
  if (files_read_ >= limits_.files_max) {
    return fail(error(fmt::format("more than {} files included", limits_.files_max)));
  }
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return fail(error(fmt::format("cannot open {}: {}", path, std::strerror(errno))));
  std::string text;
  std::array<char, 65536> chunk;
  std::size_t got = 0;
  bool too_big = false;
  while ((got = std::fread(chunk.data(), 1, chunk.size(), file)) > 0) {
    text.append(chunk.data(), got);
    if (text.size() > limits_.file_bytes_max || bytes_read_ + text.size() > limits_.total_bytes_max) {
      too_big = true;
      break;
    }
  }
  bool read_error = std::ferror(file) != 0;
  std::fclose(file);
  if (too_big) {
    return fail(error(fmt::format("{} is larger than {} bytes (or all files together exceed {} bytes)", path,
                                  limits_.file_bytes_max, limits_.total_bytes_max)));
  }
  if (read_error) return fail(error(fmt::format("cannot read {}", path)));
  ++files_read_;
  bytes_read_ += text.size();
  return text;
}

namespace {

// FreeRADIUS skips editor backups and package-manager leftovers in included
// folders: names with a leading dot, a trailing '~', or unusual characters.
bool is_includable_name(std::string_view name) {
  if (name.empty() || name.front() == '.' || name.back() == '~') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

}  // namespace

Result<std::vector<std::string>, SourceError> SourceFiles::resolve_include(std::string_view target,
                                                                           IncludeKind kind,
                                                                           std::string_view including_file,
                                                                           const SourcePosition& where) {
  namespace fs = std::filesystem;
  if (!allow_files_) return fail(where.error("$INCLUDE is not allowed in text parsed from memory"));
  if (target.empty()) return fail(where.error("$INCLUDE needs a file or folder name"));
  if (target.find("${") != std::string_view::npos) {
    return fail(where.error("variables such as ${confdir} are not expanded in $INCLUDE; write the path"));
  }
  fs::path path(target);
  if (path.is_relative()) path = fs::path(including_file).parent_path() / path;
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    if (kind == IncludeKind::kOptional) return std::vector<std::string>{};
    return fail(where.error(fmt::format("cannot include {}: no such file or folder", path.string())));
  }
  if (!fs::is_directory(status)) return std::vector<std::string>{path.string()};

  std::vector<std::string> files;
  fs::directory_iterator it(path, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!is_includable_name(name)) continue;
    std::error_code file_ec;
    if (!it->is_regular_file(file_ec) || file_ec) continue;
    files.push_back(it->path().string());
    if (files.size() > limits_.files_max) {
      return fail(where.error(fmt::format("{} holds more than {} files", path.string(), limits_.files_max)));
    }
  }
  if (ec) return fail(where.error(fmt::format("cannot list {}: {}", path.string(), ec.message())));
  // Name order makes the result independent of the file system's order.
  std::sort(files.begin(), files.end());
  return files;
}

Result<void, SourceError> SourceFiles::enter(const std::string& path, const SourcePosition& where) {
  if (static_cast<int>(open_.size()) >= limits_.depth_max) {
    return fail(where.error(fmt::format("$INCLUDE nested deeper than {}", limits_.depth_max)));
  }
  std::error_code ec;
  std::string canonical = std::filesystem::weakly_canonical(path, ec).string();
  if (ec) canonical = path;
  if (std::find(open_.begin(), open_.end(), canonical) != open_.end()) {
    return fail(where.error(fmt::format("$INCLUDE of {} includes itself", path)));
  }
  open_.push_back(std::move(canonical));
  return {};
}

void SourceFiles::leave() {
  if (!open_.empty()) open_.pop_back();
}

Result<void, SourceError> SourceFiles::parse_file(const std::string& path,
                                                  const std::optional<SourcePosition>& where,
                                                  const TextParser& parse) {
  auto text = read(path, where);
  if (!text) return fail(text.error());
  std::string_view name = remember(path);
  auto entered = enter(path, where.value_or(SourcePosition{name, 0, 0}));
  if (!entered) return fail(entered.error());
  auto parsed = parse(*text, name);
  leave();
  return parsed;
}

Result<void, SourceError> SourceFiles::include(Lexer& lexer, const Token& directive,
                                               const TextParser& parse) {
  SourcePosition where = lexer.position(directive);
  auto target = lexer.next_value();
  if (!target) return fail(target.error());
  if (target->kind != TokenKind::kWord && target->kind != TokenKind::kString) {
    return fail(where.error("$INCLUDE needs a file or folder name on the same line"));
  }
  auto end = lexer.next();
  if (!end) return fail(end.error());
  if (end->kind != TokenKind::kEndOfLine) {
    return fail(lexer.position(*end).error("expected end of line after the $INCLUDE target"));
  }
  auto paths = resolve_include(target->text, include_kind(directive), lexer.file_name(), where);
  if (!paths) return fail(paths.error());
  for (const std::string& path : *paths) {
    auto done = parse_file(path, where, parse);
    if (!done) return done;
  }
  return {};
}

}  // namespace rw::config
