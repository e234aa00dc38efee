// The tokenizer shared by the FreeRADIUS-format `users` and `clients.conf`
// readers, and the `$INCLUDE` resolution they share. Tokens carry their line
// and column so that every error reads `file:line:col: message`
// (docs/design.md invariant 5). The syntax follows FreeRADIUS 3.2; the
// differences are listed in docs/users_and_clients.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace rw::config {

// Where a FreeRADIUS-format text file is wrong: "file:line:col: message".
// Lines and columns count from 1; a column counts bytes (a tab is one).
struct SourceError {
  std::string file;
  int line = 0;
  int column = 0;
  std::string message;

  [[nodiscard]] std::string to_string() const;
};

// A position in a source file; `file` points into a string owned by the
// reader that produced it.
struct SourcePosition {
  std::string_view file;
  int line = 0;
  int column = 0;

  [[nodiscard]] SourceError error(std::string message) const;
};

enum class TokenKind : std::uint8_t {
  kWord,        // A bare word: names, numbers, addresses, `$INCLUDE`.
  kString,      // A quoted string; `text` holds it unescaped.
  kOperator,    // One of := == = += -= != > >= < <= =~ !~ =* !*
  kOpenBrace,   // {
  kCloseBrace,  // }
  kComma,       // ,
  kEndOfLine,   // The end of a line that held at least one token.
  kEndOfText,
};

std::string_view to_string(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::kEndOfText;
  // Words and operators as written; strings unescaped (see Lexer).
  std::string text;
  // For strings: the characters between the quotes as written, escapes
  // untouched except that \" (or \' in single quotes) is unescaped. Regular
  // expressions use this form so that `\.` reaches the regex compiler.
  std::string raw;
  char quote = 0;  // '"' or '\'' for strings, 0 otherwise.
  int line = 0;
  int column = 0;
  bool starts_line = false;  // The first token on its line.
  bool indented = false;     // Its line begins with a space or a tab.
};

// Limits that keep a hostile or broken file from exhausting memory.
inline constexpr std::size_t kTokenBytesMax = 8192;

// Splits text into tokens. Comments run from `#` (outside quotes) to the end
// of the line. Double-quoted strings understand \\ \" \' \n \r \t and \NNN
// (three octal digits); any other backslash pair is kept as written, as
// FreeRADIUS does. Single-quoted strings understand only \\ and \'.
// Back-quoted strings (program execution in FreeRADIUS) are refused. A
// string never spans lines. Blank and comment-only lines produce no tokens.
//
// The lexer borrows `text` and `file_name`; both must outlive it.
class Lexer {
 public:
  Lexer(std::string_view text, std::string_view file_name);

  // Returns the next token, or an error for an unterminated string, an
  // over-long token, a NUL byte or a back-quoted string.
  [[nodiscard]] Result<Token, SourceError> next();
  // Returns the next token without consuming it.
  [[nodiscard]] Result<Token, SourceError> peek();
  // Like next(), for the value after an operator: a bare word runs to the
  // next blank, comma, brace, quote or comment, and operator characters
  // inside it do not end it (a secret such as `c2VjcmV0==`).
  // Requires: no token is peeked.
  [[nodiscard]] Result<Token, SourceError> next_value();

  [[nodiscard]] std::string_view file_name() const { return file_name_; }
  [[nodiscard]] SourcePosition position(const Token& token) const {
    return {file_name_, token.line, token.column};
  }

 private:
  [[nodiscard]] Result<Token, SourceError> scan();
  void skip_blanks_and_comments();
  [[nodiscard]] Result<Token, SourceError> scan_string(Token token);
  [[nodiscard]] Result<Token, SourceError> scan_word(Token token);
  [[nodiscard]] std::size_t operator_length_at(std::size_t at) const;
  [[nodiscard]] SourceError error_here(std::string message) const;

  std::string_view text_;
  std::string_view file_name_;
  std::size_t offset_ = 0;
  int line_ = 1;
  std::size_t line_start_ = 0;
  bool line_has_token_ = false;
  std::optional<Token> peeked_;
  bool value_mode_ = false;
};

// Whether a token is the `$INCLUDE` directive (or `$-INCLUDE`, which tolerates
// a missing target). Case-insensitive, as in FreeRADIUS.
enum class IncludeKind : std::uint8_t { kNone, kRequired, kOptional };
IncludeKind include_kind(const Token& token);

// Bounds on `$INCLUDE`.
struct IncludeLimits {
  int depth_max = 8;                         // Nested includes.
  std::size_t files_max = 4096;              // Files read in total.
  std::size_t file_bytes_max = 64u << 20;    // One file.
  std::size_t total_bytes_max = 256u << 20;  // All files together.
};

// Reads source files for a reader that follows `$INCLUDE`, enforcing
// IncludeLimits and refusing include cycles. Reading config files is the one
// I/O the config folder does (common brief). A reader built with
// `allow_files = false` refuses every include (used for in-memory parsing
// and fuzzing).
class SourceFiles {
 public:
  SourceFiles(bool allow_files, IncludeLimits limits) : allow_files_(allow_files), limits_(limits) {}

  // Reads `path` whole. `where` is the $INCLUDE that asked for it (for the
  // error position), or nullopt for the top-level file.
  [[nodiscard]] Result<std::string, SourceError> read(const std::string& path,
                                                      const std::optional<SourcePosition>& where);

  // Resolves the target of an `$INCLUDE` written at `where` in
  // `including_file`: a relative target is relative to the including file's
  // folder; a folder yields its regular files in name order, skipping names
  // that start with '.', end in '~' or contain characters outside
  // [A-Za-z0-9_.-] (editor and package-manager leftovers), as FreeRADIUS
  // does. An optional include of a missing target yields nothing.
  [[nodiscard]] Result<std::vector<std::string>, SourceError> resolve_include(std::string_view target,
                                                                              IncludeKind kind,
                                                                              std::string_view including_file,
                                                                              const SourcePosition& where);

  // Parses the text of one file; `file_name` stays valid as long as this
  // SourceFiles does.
  using TextParser =
      std::function<Result<void, SourceError>(std::string_view text, std::string_view file_name)>;

  // Reads `path` and hands its text to `parse`, refusing nesting past
  // depth_max and include cycles. `where` is the $INCLUDE that asked for
  // it, or nullopt for the top-level file.
  [[nodiscard]] Result<void, SourceError> parse_file(const std::string& path,
                                                     const std::optional<SourcePosition>& where,
                                                     const TextParser& parse);

  // Finishes an `$INCLUDE` directive whose first token `directive` was just
  // read from `lexer`: reads the target and the end of the line, then
  // parses every file it names, in order.
  [[nodiscard]] Result<void, SourceError> include(Lexer& lexer, const Token& directive,
                                                  const TextParser& parse);

  // Keeps a file name for the life of this object and returns a view of it
  // that stays valid, for SourcePosition and Lexer.
  std::string_view remember(std::string name);

 private:
  [[nodiscard]] Result<void, SourceError> enter(const std::string& path, const SourcePosition& where);
  void leave();

  bool allow_files_;
  IncludeLimits limits_;
  std::vector<std::string> open_;  // The include stack, canonical paths.
  std::deque<std::string> names_;  // A deque never moves its elements.
  std::size_t files_read_ = 0;
  std::size_t bytes_read_ = 0;
};

}  // namespace rw::config
