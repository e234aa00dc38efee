// The audit log's verifier (`radiusward audit verify`, docs/operations.md
// "Audit log"): reads one file or several in chain order and names every
// line where the chain breaks and why, and the tail check the writer runs
// when it reopens a file. Pure: bytes in, findings out; any bytes are
// accepted (audit_verify_fuzz).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "audit/chain.h"

namespace rw::audit {

// What is wrong at a line. Every value breaks `intact()`.
enum class Problem : std::uint8_t {
  kBadJson,       // Not a JSON object (or not UTF-8): written by something else, or damaged.
  kNotAuditLine,  // JSON, but not an audit line (keys, their order, types, chain fields).
  kLineTooLong,   // Longer than kLineBytesMax.
  kEdited,        // Its hash does not match its bytes: changed after it was written.
  kMissingLines,  // The sequence jumps forward: lines were deleted.
  kOutOfOrder,    // The sequence goes back or repeats: lines were reordered or inserted.
  kChainBroken,   // `prev` is not the hash of the line before: that line was replaced.
  kTornLine,      // The last line of the last file is cut short (no newline).
  kNoHeader,      // A file's first line is not a header.
  kContinuity,    // A header that does not name the head the line before it ended at.
  kNeedsKey,      // The chain is HMAC-SHA256 and no key was given: hashes not checked.
  kNotKeyed,      // A key was given but the file's chain is plain SHA-256.
  kEmptyFile,     // A file without a line.
};
[[nodiscard]] std::string_view to_string(Problem problem);

struct Finding {
  std::string file;
  std::size_t line = 0;  // 1-based.
  Problem problem = Problem::kBadJson;
  std::string detail;
  // "FILE:LINE: problem: detail".
  [[nodiscard]] std::string to_string() const;
};

// Something the server wrote that is not tampering: a gap (decisions it
// could not queue), a torn tail it restarted after.
struct Note {
  std::string file;
  std::size_t line = 0;
  std::string text;
  [[nodiscard]] std::string to_string() const;
};

inline constexpr std::size_t kFindingsMax = 1000;

struct Verification {
  std::uint64_t lines = 0;
  std::optional<Head> head;       // The last line that parsed; none without one.
  std::vector<Finding> problems;  // The first kFindingsMax.
  std::size_t problems_not_listed = 0;
  std::vector<Note> notes;         // The first kFindingsMax.
  std::uint64_t lost_in_gaps = 0;  // Decisions gap lines say were not written.
  [[nodiscard]] bool intact() const { return problems.empty() && problems_not_listed == 0; }
};

// One line as the verifier reads it (verify.cc).
struct ParsedLine;

// Verifies files fed in chain order (oldest first). Without a key, plain
// SHA-256 chains are checked and keyed ones only for their sequence and
// links (kNeedsKey); with a key, HMAC-SHA256 chains are checked and plain
// ones reported (kNotKeyed), since anyone could have recomputed them.
class Verifier {
 public:
  explicit Verifier(std::optional<ChainKey> key) : key_(std::move(key)) {}

  void on_file(std::string_view name, std::string_view bytes);
  [[nodiscard]] Verification finish();

 private:
  void on_line(std::string_view line, bool first_of_file);
  void on_header(const ParsedLine& line, bool first_of_file);
  // Whether the line is behind the head (moved back from later).
  bool check_link(const ParsedLine& line);
  void report_torn();
  void problem(Problem problem, std::string detail);
  void note(std::string text);

  std::optional<ChainKey> key_;
  std::optional<ChainKey> file_key_;  // H of the file being read; none: unchecked.
  std::string file_;
  std::size_t line_number_ = 0;
  bool resync_ = false;          // The line before did not parse: take the next as it is.
  std::optional<Finding> torn_;  // The last file ended torn; a torn_tail header may explain it.
  std::optional<Head> last_;
  Verification result_;
};

// What the writer finds at the end of an existing file when it starts.
struct Tail {
  bool empty = true;  // The file holds no byte.
  // The last line is whole, is an audit line and its hash holds under the key.
  bool clean = false;
  std::optional<Head> last_good;  // The last such line, if any.
};

// Inspects the end of a file: `bytes` is the whole file, or its last bytes
// when `whole` is false (the first, partial line is then skipped).
[[nodiscard]] Tail inspect_tail(std::string_view bytes, bool whole, const ChainKey& key);

}  // namespace rw::audit
