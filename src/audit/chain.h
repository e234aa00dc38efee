// The audit log's line format and its hash chain (docs/operations.md
// "Audit log"): one JSON object per line in a fixed key order, each line
// ending in `"prev"` (the previous line's hash) and `"hash"` = H(prev ||
// the line's bytes before `,"prev"`), H being SHA-256 or, with a key,
// HMAC-SHA256. Pure: the writer thread (gateway_shell/audit_log) and the
// verifier (audit/verify.h) share it; no clock, no files.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/bytes.h"

namespace rw::audit {

inline constexpr std::size_t kHashBytes = 32;
using Hash = std::array<std::uint8_t, kHashBytes>;

// Lowercase hex of `hash` (64 characters).
[[nodiscard]] std::string to_hex(const Hash& hash);
// The hash of 64 lowercase hex digits; nothing on anything else.
[[nodiscard]] std::optional<Hash> parse_hex(std::string_view text);

// H of the chain: SHA-256 when no key is given (anyone who edits the file
// can recompute it: it detects accidents and careless edits), HMAC-SHA256
// with the key (nobody without the key can rewrite the chain).
class ChainKey {
 public:
  // SHA-256.
  ChainKey() = default;
  // HMAC-SHA256 under `key`. Requires: key not empty.
  [[nodiscard]] static ChainKey keyed(std::string key);

  [[nodiscard]] bool is_keyed() const { return !key_.empty(); }
  // "sha256" or "hmac-sha256", as headers name it.
  [[nodiscard]] std::string_view name() const { return is_keyed() ? "hmac-sha256" : "sha256"; }
  // H(prev || body).
  [[nodiscard]] Hash link(const Hash& prev, std::string_view body) const;

 private:
  std::string key_;
};

// The last line of a chain: its sequence number and hash. The start of a
// chain is sequence 0 with the all-zero hash.
struct Head {
  std::uint64_t sequence = 0;
  Hash hash{};
  friend bool operator==(const Head&, const Head&) = default;
};

// One Access-Request decision, as a line says it. Views are borrowed for
// the call; any bytes are accepted (they are escaped into valid UTF-8).
struct DecisionRecord {
  std::int64_t unix_ms = 0;   // When it was decided (UTC).
  std::string_view client;    // The client entry's shortname.
  std::string_view address;   // The NAS's source address, as text.
  std::string_view tenant{};  // The client's tenant; empty: none written (lines before tenants).
  std::string_view identity;  // The User-Name as the NAS sent it.
  std::string_view method;    // PAP, CHAP, MS-CHAPv2, MAB, EAP, none.
  bool accepted = false;      // "accept" or "reject".
  std::string_view rule;      // What decided: "users-file:line", or the reason's name.
  std::string_view reason;    // The reason's name as /metrics shows it.
};

// Why a file's first line (its header) was written.
enum class HeaderReason : std::uint8_t {
  kNew,       // No earlier file: the chain starts here.
  kRotated,   // The previous file reached rotate_bytes.
  kTornTail,  // At start the previous file's last line was torn or did not
              // verify; the chain goes on from its last good line.
};
[[nodiscard]] std::string_view to_string(HeaderReason reason);
[[nodiscard]] std::optional<HeaderReason> parse_header_reason(std::string_view text);

// The version of the line format that headers carry.
inline constexpr int kFormatVersion = 1;
// Longer lines are refused by the verifier (a decision line is well below:
// a User-Name is at most 253 octets, at most 6 characters each escaped).
inline constexpr std::size_t kLineBytesMax = 16 * 1024;

// UTC milliseconds as "2026-12-02T13:05:01.123Z".
[[nodiscard]] std::string utc_text(std::int64_t unix_ms);
// Appends `text` as a JSON string: quotes, backslashes and control
// characters escaped, bytes that are not well-formed UTF-8 replaced by
// U+FFFD (NAS data is hostile; the log stays valid JSON).
void append_json_string(std::string& out, std::string_view text);

// The writer's side of one chain: turns records into whole lines (with the
// final '\n'), each linked to the one before. Not thread-safe: one writer.
class Chain {
 public:
  // Continues after `head` (sequence 0: a new chain).
  Chain(ChainKey key, Head head) : key_(std::move(key)), head_(head) {}

  [[nodiscard]] std::string decision(const DecisionRecord& record);
  // A line saying `lost` decisions were not written (the queue was full).
  [[nodiscard]] std::string gap(std::int64_t unix_ms, std::uint64_t lost);
  // The first line of a file: names the chain's mode and, unless the chain
  // starts here, the head the previous file ended at.
  [[nodiscard]] std::string header(std::int64_t unix_ms, HeaderReason reason);

  [[nodiscard]] const Head& head() const { return head_; }
  [[nodiscard]] const ChainKey& key() const { return key_; }

 private:
  // Appends the chain fields to `body` and moves the head.
  std::string seal(std::string body);
  std::string begin(std::int64_t unix_ms) const;

  ChainKey key_;
  Head head_;
};

// A whole line split at its chain fields: the bytes H covers, and the
// `prev` and `hash` they carry. Nothing when the line (without its '\n')
// does not end in `,"prev":"<64 hex>","hash":"<64 hex>"}`.
struct SealedLine {
  std::string_view body;
  Hash prev{};
  Hash hash{};
};
[[nodiscard]] std::optional<SealedLine> split_sealed(std::string_view line);

}  // namespace rw::audit
