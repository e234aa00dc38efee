// The audit log's verifier. nlohmann-json parses each line with exceptions
// off (docs/style.md §5): a line that does not parse is a finding.
#include "audit/verify.h"

#include <array>
#include <span>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/result.h"

namespace rw::audit {

using Json = nlohmann::ordered_json;

enum class LineKind : std::uint8_t { kDecision, kGap, kHeader };

struct ParsedLine {
  LineKind kind = LineKind::kDecision;
  std::uint64_t sequence = 0;
  SealedLine sealed;
  // kHeader:
  std::string chain{};
  HeaderReason reason = HeaderReason::kNew;
  std::optional<Head> previous{};
  // kGap:
  std::uint64_t lost = 0;
};

namespace {

constexpr std::array<std::string_view, 10> kDecisionKeys = {
    "seq", "time", "client", "identity", "method", "decision", "rule", "reason", "prev", "hash"};

bool has_keys(const Json& object, std::span<const std::string_view> keys) {
  if (object.size() != keys.size()) return false;
  std::size_t i = 0;
  for (const auto& item : object.items()) {
    if (item.key() != keys[i++]) return false;
  }
  return true;
}

bool is_text(const Json& object, const char* key) {
  const auto found = object.find(key);
  return found != object.end() && found->is_string();
}

bool valid_decision(const Json& object) {
  if (!has_keys(object, kDecisionKeys)) return false;
  const Json& client = object["client"];
  constexpr std::array<std::string_view, 2> kClientKeys = {"name", "address"};
  // Lines of a tenant's writer name the tenant too (docs/operations.md "Audit log").
  constexpr std::array<std::string_view, 3> kTenantClientKeys = {"name", "address", "tenant"};
  if (!client.is_object() || !is_text(client, "name") || !is_text(client, "address")) return false;
  if (!has_keys(client, kClientKeys) && !(has_keys(client, kTenantClientKeys) && is_text(client, "tenant")))
    return false;
  for (const char* key : {"identity", "method", "rule", "reason"}) {
    if (!is_text(object, key)) return false;
  }
  const Json& decision = object["decision"];
  return decision == "accept" || decision == "reject";
}

// The header object: {"format":1,"chain":...,"reason":...,"previous":null|{"seq":N,"hash":...}}.
bool read_header(const Json& header, std::string& chain, HeaderReason& reason,
                 std::optional<Head>& previous) {
  constexpr std::array<std::string_view, 4> kKeys = {"format", "chain", "reason", "previous"};
  if (!header.is_object() || !has_keys(header, kKeys)) return false;
  if (!header["format"].is_number_unsigned() || header["format"].get<std::uint64_t>() != kFormatVersion)
    return false;
  if (!header["chain"].is_string() || !header["reason"].is_string()) return false;
  chain = header["chain"].get<std::string>();
  if (chain != "sha256" && chain != "hmac-sha256") return false;
  const std::optional<HeaderReason> parsed = parse_header_reason(header["reason"].get<std::string>());
  if (!parsed) return false;
  reason = *parsed;
  const Json& before = header["previous"];
  if (before.is_null()) return true;
  constexpr std::array<std::string_view, 2> kPrevious = {"seq", "hash"};
  if (!before.is_object() || !has_keys(before, kPrevious) || !before["seq"].is_number_unsigned() ||
      !before["hash"].is_string())
    return false;
  const std::optional<Hash> hash = parse_hex(before["hash"].get<std::string>());
  if (!hash) return false;
  previous = Head{.sequence = before["seq"].get<std::uint64_t>(), .hash = *hash};
  return true;
}

// Parses one line (without its '\n'): the problem, or the line.
Result<ParsedLine, Problem> parse_line(std::string_view text) {
  if (text.size() > kLineBytesMax) return fail(Problem::kLineTooLong);
  const Json object = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded() || !object.is_object()) return fail(Problem::kBadJson);
  const std::optional<SealedLine> sealed = split_sealed(text);
  if (!sealed || object.size() < 4) return fail(Problem::kNotAuditLine);
  const auto first = object.begin();
  const auto second = std::next(first);
  if (first.key() != "seq" || !first->is_number_unsigned() || second.key() != "time" || !second->is_string())
    return fail(Problem::kNotAuditLine);
  ParsedLine line{.sequence = first->get<std::uint64_t>(), .sealed = *sealed};
  if (line.sequence == 0) return fail(Problem::kNotAuditLine);
  const std::string_view third = std::next(second).key();
  if (third == "gap") {
    constexpr std::array<std::string_view, 5> kKeys = {"seq", "time", "gap", "prev", "hash"};
    if (!has_keys(object, kKeys) || !object["gap"].is_number_unsigned()) return fail(Problem::kNotAuditLine);
    line.kind = LineKind::kGap;
    line.lost = object["gap"].get<std::uint64_t>();
  } else if (third == "header") {
    constexpr std::array<std::string_view, 5> kKeys = {"seq", "time", "header", "prev", "hash"};
    if (!has_keys(object, kKeys) || !read_header(object["header"], line.chain, line.reason, line.previous))
      return fail(Problem::kNotAuditLine);
    line.kind = LineKind::kHeader;
  } else if (!valid_decision(object)) {
    return fail(Problem::kNotAuditLine);
  }
  return line;
}

std::string short_hash(const Hash& hash) { return to_hex(hash).substr(0, 16); }

std::string head_text(const Head& head) {
  return fmt::format("sequence {} hash {}", head.sequence, short_hash(head.hash));
}

}  // namespace

std::string_view to_string(Problem problem) {
  switch (problem) {
    case Problem::kBadJson:
      return "bad JSON";
    case Problem::kNotAuditLine:
      return "not an audit line";
    case Problem::kLineTooLong:
      return "line too long";
    case Problem::kEdited:
      return "edited";
    case Problem::kMissingLines:
      return "missing lines";
    case Problem::kOutOfOrder:
      return "out of order";
    case Problem::kChainBroken:
      return "chain broken";
    case Problem::kTornLine:
      return "torn line";
    case Problem::kNoHeader:
      return "no header";
    case Problem::kContinuity:
      return "wrong header continuity";
    case Problem::kNeedsKey:
      return "needs the key";
    case Problem::kNotKeyed:
      return "not keyed";
    case Problem::kEmptyFile:
      return "empty file";
  }
  return "unknown";
}

std::string Finding::to_string() const {
  return fmt::format("{}:{}: {}: {}", file, line, audit::to_string(problem), detail);
}

std::string Note::to_string() const { return fmt::format("{}:{}: {}", file, line, text); }

void Verifier::problem(Problem problem, std::string detail) {
  if (result_.problems.size() >= kFindingsMax) {
    ++result_.problems_not_listed;
    return;
  }
  result_.problems.push_back(
      Finding{.file = file_, .line = line_number_, .problem = problem, .detail = std::move(detail)});
}

void Verifier::note(std::string text) {
  if (result_.notes.size() < kFindingsMax)
    result_.notes.push_back(Note{.file = file_, .line = line_number_, .text = std::move(text)});
}

void Verifier::on_file(std::string_view name, std::string_view bytes) {
  file_ = std::string(name);
  line_number_ = 0;
  // Until a header names the mode, hashes are checked with what was given.
  file_key_ = key_ ? *key_ : ChainKey();
  if (bytes.empty()) {
    problem(Problem::kEmptyFile, "the file holds no line");
    return;
  }
  std::size_t at = 0;
  while (at < bytes.size()) {
    ++line_number_;
    const std::size_t end = bytes.find('\n', at);
    if (end == std::string_view::npos) {
      ++result_.lines;
      torn_ = Finding{.file = file_,
                      .line = line_number_,
                      .problem = Problem::kTornLine,
                      .detail = fmt::format("the last line ends without a newline after {} bytes: cut short",
                                            bytes.size() - at)};
      return;
    }
    on_line(bytes.substr(at, end - at), line_number_ == 1);
    // A torn line before this file is explained only by this file's header.
    if (line_number_ == 1) report_torn();
    at = end + 1;
  }
}

void Verifier::on_line(std::string_view text, bool first_of_file) {
  ++result_.lines;
  Result<ParsedLine, Problem> parsed = parse_line(text);
  if (!parsed) {
    problem(parsed.error(), parsed.error() == Problem::kLineTooLong
                                ? fmt::format("{} bytes (at most {})", text.size(), kLineBytesMax)
                                : std::string("the line is not what the server writes"));
    resync_ = true;
    return;
  }
  const ParsedLine& line = *parsed;
  if (line.kind == LineKind::kHeader) {
    on_header(line, first_of_file);
  } else if (first_of_file) {
    problem(Problem::kNoHeader, "the file's first line is not a header: its beginning was cut off");
  }
  if (file_key_ && file_key_->link(line.sealed.prev, line.sealed.body) != line.sealed.hash) {
    problem(Problem::kEdited,
            fmt::format("sequence {}: the line's bytes do not match its hash", line.sequence));
  }
  const bool behind = check_link(line);
  if (line.kind == LineKind::kGap) {
    result_.lost_in_gaps += line.lost;
    note(fmt::format("gap: {} decision(s) not written by the server (its queue was full)", line.lost));
  }
  // A line moved back from later in the file leaves the head where it was,
  // so that the line after it is checked against the highest one (a swap
  // is two findings, not three).
  if (!behind) last_ = Head{.sequence = line.sequence, .hash = line.sealed.hash};
  resync_ = false;
}

void Verifier::on_header(const ParsedLine& line, bool first_of_file) {
  if (!first_of_file) problem(Problem::kContinuity, "a header in the middle of a file");
  const bool keyed = line.chain == "hmac-sha256";
  if (keyed && !key_) {
    problem(Problem::kNeedsKey, "the chain is HMAC-SHA256: give --key to check its hashes");
    file_key_.reset();
  } else if (!keyed && key_) {
    problem(Problem::kNotKeyed,
            "a key was given but this chain is plain SHA-256, which anyone can recompute");
    file_key_ = ChainKey();
  }
  const Hash expected_prev = line.previous ? line.previous->hash : Hash{};
  const std::uint64_t expected_sequence = line.previous ? line.previous->sequence + 1 : 1;
  if (line.sealed.prev != expected_prev || line.sequence != expected_sequence) {
    problem(Problem::kContinuity, "the header's prev and seq do not follow the previous head it names");
  }
  if (last_ && !resync_) {
    if (!line.previous) {
      problem(Problem::kContinuity,
              fmt::format("the header starts a new chain but follows {}", head_text(*last_)));
    } else if (*line.previous != *last_) {
      problem(Problem::kContinuity,
              fmt::format("the header names {} as the previous head, but the line before "
                          "it is {}",
                          head_text(*line.previous), head_text(*last_)));
    }
  }
  if (torn_ && line.reason == HeaderReason::kTornTail) {
    note(fmt::format("the server restarted after a torn last line ({}:{}); the chain goes on", torn_->file,
                     torn_->line));
    torn_.reset();
  }
}

bool Verifier::check_link(const ParsedLine& line) {
  if (!last_ || resync_ || line.kind == LineKind::kHeader) return false;
  const std::uint64_t expected = last_->sequence + 1;
  if (line.sequence > expected) {
    problem(Problem::kMissingLines, fmt::format("the sequence jumps from {} to {}: {} line(s) missing",
                                                last_->sequence, line.sequence, line.sequence - expected));
  } else if (line.sequence < expected) {
    problem(Problem::kOutOfOrder, fmt::format("sequence {} follows sequence {}: lines reordered or inserted",
                                              line.sequence, last_->sequence));
    return line.sequence < last_->sequence;
  } else if (line.sealed.prev != last_->hash) {
    problem(Problem::kChainBroken,
            fmt::format("sequence {}: prev is not the hash of the line before ({}): a line was replaced",
                        line.sequence, head_text(*last_)));
  }
  return false;
}

void Verifier::report_torn() {
  if (!torn_) return;
  if (result_.problems.size() < kFindingsMax) {
    result_.problems.push_back(*torn_);
  } else {
    ++result_.problems_not_listed;
  }
  torn_.reset();
}

Verification Verifier::finish() {
  report_torn();
  result_.head = last_;
  return std::move(result_);
}

Tail inspect_tail(std::string_view bytes, bool whole, const ChainKey& key) {
  Tail tail;
  tail.empty = bytes.empty();
  if (!whole) {
    const std::size_t first_end = bytes.find('\n');
    bytes = first_end == std::string_view::npos ? std::string_view() : bytes.substr(first_end + 1);
  }
  const bool ends_whole = bytes.ends_with('\n');
  std::size_t end = ends_whole ? bytes.size() - 1 : bytes.rfind('\n');
  bool last = true;
  while (end != std::string_view::npos && end > 0) {
    const std::size_t start = bytes.rfind('\n', end - 1);
    const std::size_t from = start == std::string_view::npos ? 0 : start + 1;
    const std::string_view text = bytes.substr(from, end - from);
    Result<ParsedLine, Problem> parsed = parse_line(text);
    if (parsed && key.link(parsed->sealed.prev, parsed->sealed.body) == parsed->sealed.hash) {
      tail.clean = last && ends_whole;
      tail.last_good = Head{.sequence = parsed->sequence, .hash = parsed->sealed.hash};
      return tail;
    }
    last = false;
    if (start == std::string_view::npos) break;
    end = start;
  }
  return tail;
}

}  // namespace rw::audit
