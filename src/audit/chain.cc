// The audit line format and chain; the layout is drawn in docs/operations.md
// "Audit log".
#include "audit/chain.h"

#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <chrono>

#include <fmt/format.h>

#include "base/assert.h"
#include "base/utf8.h"

namespace rw::audit {
namespace {

constexpr std::string_view kHexDigits = "0123456789abcdef";
// `,"prev":"` + 64 + `","hash":"` + 64 + `"}`.
constexpr std::string_view kPrevKey = ",\"prev\":\"";
constexpr std::string_view kHashKey = "\",\"hash\":\"";
constexpr std::size_t kSealBytes = kPrevKey.size() + 64 + kHashKey.size() + 64 + 2;

void append_hex_byte(std::string& out, std::uint8_t byte) {
  out += kHexDigits[byte >> 4];
  out += kHexDigits[byte & 0x0f];
}

}  // namespace

std::string to_hex(const Hash& hash) {
  std::string out;
  out.reserve(2 * hash.size());
  for (std::uint8_t byte : hash) append_hex_byte(out, byte);
  return out;
}

std::optional<Hash> parse_hex(std::string_view text) {
  if (text.size() != 2 * kHashBytes) return std::nullopt;
  Hash hash{};
  for (std::size_t i = 0; i < text.size(); ++i) {
    const std::size_t digit = kHexDigits.find(text[i]);
    if (digit == std::string_view::npos) return std::nullopt;
    hash[i / 2] = static_cast<std::uint8_t>(hash[i / 2] << 4 | digit);
  }
  return hash;
}

ChainKey ChainKey::keyed(std::string key) {
  RW_ASSERT(!key.empty());
  ChainKey chain;
  chain.key_ = std::move(key);
  return chain;
}

Hash ChainKey::link(const Hash& prev, std::string_view body) const {
  std::string input;
  input.reserve(prev.size() + body.size());
  input.append(reinterpret_cast<const char*>(prev.data()), prev.size());
  input.append(body);
  const auto* bytes = reinterpret_cast<const unsigned char*>(input.data());
  Hash out{};
  if (is_keyed()) {
    unsigned int length = 0;
    const unsigned char* mac = HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()), bytes,
                                    input.size(), out.data(), &length);
    RW_ASSERT(mac != nullptr && length == out.size());
  } else {
    SHA256(bytes, input.size(), out.data());
  }
  return out;
}

std::string_view to_string(HeaderReason reason) {
  switch (reason) {
    case HeaderReason::kNew:
      return "new";
    case HeaderReason::kRotated:
      return "rotated";
    case HeaderReason::kTornTail:
      return "torn_tail";
  }
  return "unknown";
}

std::optional<HeaderReason> parse_header_reason(std::string_view text) {
  for (HeaderReason reason : {HeaderReason::kNew, HeaderReason::kRotated, HeaderReason::kTornTail}) {
    if (to_string(reason) == text) return reason;
  }
  return std::nullopt;
}

std::string utc_text(std::int64_t unix_ms) {
  using namespace std::chrono;
  std::int64_t day = unix_ms / 86'400'000;
  std::int64_t ms_of_day = unix_ms % 86'400'000;
  if (ms_of_day < 0) {
    ms_of_day += 86'400'000;
    --day;
  }
  const year_month_day date{sys_days{days{day}}};
  const std::int64_t seconds = ms_of_day / 1000;
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", static_cast<int>(date.year()),
                     static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()), seconds / 3600,
                     seconds / 60 % 60, seconds % 60, ms_of_day % 1000);
}

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  for (std::size_t at = 0; at < text.size();) {
    const auto byte = static_cast<std::uint8_t>(text[at]);
    if (byte == '"' || byte == '\\') {
      out += '\\';
      out += static_cast<char>(byte);
      ++at;
    } else if (byte < 0x20 || byte == 0x7f) {
      // NUL and the other controls: RFC 8259 §7 requires the escape for
      // < 0x20; DEL is escaped too so that no terminal control reaches a pager.
      out += "\\u00";
      append_hex_byte(out, byte);
      ++at;
    } else if (const std::size_t length = utf8_sequence(text, at); length > 0) {
      out.append(text.substr(at, length));
      at += length;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD for a byte outside well-formed UTF-8.
      ++at;
    }
  }
  out += '"';
}

std::string Chain::begin(std::int64_t unix_ms) const {
  return fmt::format("{{\"seq\":{},\"time\":\"{}\"", head_.sequence + 1, utc_text(unix_ms));
}

std::string Chain::seal(std::string body) {
  const Hash hash = key_.link(head_.hash, body);
  body.reserve(body.size() + kSealBytes + 1);
  body += kPrevKey;
  body += to_hex(head_.hash);
  body += kHashKey;
  body += to_hex(hash);
  body += "\"}\n";
  head_ = Head{.sequence = head_.sequence + 1, .hash = hash};
  return body;
}

std::string Chain::decision(const DecisionRecord& record) {
  std::string body = begin(record.unix_ms);
  body += ",\"client\":{\"name\":";
  append_json_string(body, record.client);
  body += ",\"address\":";
  append_json_string(body, record.address);
  if (!record.tenant.empty()) {
    body += ",\"tenant\":";
    append_json_string(body, record.tenant);
  }
  body += "},\"identity\":";
  append_json_string(body, record.identity);
  body += ",\"method\":";
  append_json_string(body, record.method);
  body += record.accepted ? ",\"decision\":\"accept\",\"rule\":" : ",\"decision\":\"reject\",\"rule\":";
  append_json_string(body, record.rule);
  body += ",\"reason\":";
  append_json_string(body, record.reason);
  return seal(std::move(body));
}

std::string Chain::gap(std::int64_t unix_ms, std::uint64_t lost) {
  return seal(begin(unix_ms) + fmt::format(",\"gap\":{}", lost));
}

std::string Chain::header(std::int64_t unix_ms, HeaderReason reason) {
  std::string body = begin(unix_ms);
  body += fmt::format(",\"header\":{{\"format\":{},\"chain\":\"{}\",\"reason\":\"{}\",\"previous\":",
                      kFormatVersion, key_.name(), to_string(reason));
  if (head_.sequence == 0) {
    body += "null}";
  } else {
    body += fmt::format("{{\"seq\":{},\"hash\":\"{}\"}}}}", head_.sequence, to_hex(head_.hash));
  }
  return seal(std::move(body));
}

std::optional<SealedLine> split_sealed(std::string_view line) {
  if (line.size() < kSealBytes + 1) return std::nullopt;
  const std::string_view seal = line.substr(line.size() - kSealBytes);
  if (!seal.starts_with(kPrevKey) || !seal.ends_with("\"}")) return std::nullopt;
  if (seal.substr(kPrevKey.size() + 64, kHashKey.size()) != kHashKey) return std::nullopt;
  const std::optional<Hash> prev = parse_hex(seal.substr(kPrevKey.size(), 64));
  const std::optional<Hash> hash = parse_hex(seal.substr(kPrevKey.size() + 64 + kHashKey.size(), 64));
  if (!prev || !hash) return std::nullopt;
  return SealedLine{.body = line.substr(0, line.size() - kSealBytes), .prev = *prev, .hash = *hash};
}

}  // namespace rw::audit
