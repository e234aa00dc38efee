// One accounting event as the cluster stores it: built from a validated
// Accounting-Request (RFC 2866) by a pure function, with its record key (one
// key per distinct accounting event, docs/design.md invariant 2) and its session
// key (FreeRADIUS's Acct-Unique-Session-Id). Layouts and the key's exact
// definition are in docs/wire_formats.md; semantics in docs/accounting.md.
#pragma once

#include <array>
#include <bitset>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "radius/dictionary.h"
#include "radius/packet.h"

namespace rw::accounting {

inline constexpr std::size_t kKeyLength = 16;

// Acct-Status-Type values (RFC 2866 §5.1) the ledger acts on. Other values
// (Failed = 15, vendor ones) are stored and listed but leave sessions alone.
namespace status {
inline constexpr std::uint32_t kStart = 1;
inline constexpr std::uint32_t kStop = 2;
inline constexpr std::uint32_t kInterimUpdate = 3;
inline constexpr std::uint32_t kAccountingOn = 7;
inline constexpr std::uint32_t kAccountingOff = 8;
}  // namespace status

// The longest client (NAS) shortname a record carries.
inline constexpr std::size_t kClientNameMax = 255;

// A 16-byte digest naming one thing, ordered bytewise, printable as hex.
struct Digest16 {
  std::array<std::uint8_t, kKeyLength> bytes{};

  // 32 lowercase hex digits.
  [[nodiscard]] std::string hex() const;
  // Bytewise order, as two big-endian 64-bit words: the session table's
  // map compares keys on every lookup, and a library memcmp call per step
  // showed in the apply benchmark.
  friend std::strong_ordering operator<=>(const Digest16& a, const Digest16& b) {
    if (auto order = a.word(0) <=> b.word(0); order != 0) return order;
    return a.word(8) <=> b.word(8);
  }
  friend bool operator==(const Digest16& a, const Digest16& b) {
    return a.word(0) == b.word(0) && a.word(8) == b.word(8);
  }

 private:
  [[nodiscard]] std::uint64_t word(std::size_t at) const {
    std::uint64_t out = 0;
    for (std::size_t i = 0; i < 8; ++i) out = out << 8 | bytes[at + i];
    return out;
  }
};

// One distinct accounting event: the first 16 bytes of SHA-256 over the
// canonical attribute list and the client shortname (docs/wire_formats.md
// "Record key"). A retransmission, a re-send with a new Identifier and a
// larger Acct-Delay-Time, and a gateway re-submission share it.
struct RecordKey : Digest16 {};

// A session: FreeRADIUS's Acct-Unique-Session-Id as 16 bytes; hex() is the
// text FreeRADIUS stores in radacct.acctuniqueid.
struct SessionKey : Digest16 {};

// a - b on Unix milliseconds, wrapping instead of overflowing: the fields
// come from untrusted entries, and apply must stay defined on every input.
[[nodiscard]] inline std::int64_t minus_ms(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}

// One accounting event. Owns its bytes: make_record allocates them, while
// fill_record reuses a kept record's (the gateway's packet path).
struct Record {
  RecordKey key;
  SessionKey session;
  std::uint32_t status_type = 0;  // Acct-Status-Type
  // When the gateway received the request (its clock, Unix ms).
  std::int64_t received_unix_ms = 0;
  // When the event happened: Event-Timestamp (RFC 2869 §5.3) when present,
  // otherwise received time minus Acct-Delay-Time (RFC 2866 §5.2).
  std::int64_t event_unix_ms = 0;
  std::string client;  // the client (NAS) shortname from clients.conf
  // The request's attributes in wire order, raw TLVs (vendor attributes
  // untouched), without Message-Authenticator and Proxy-State.
  std::vector<std::uint8_t> attributes;

  friend bool operator==(const Record&, const Record&) = default;

  // The attributes, walkable like a packet's. Requires: well-formed TLVs
  // (make_record and decode_record guarantee it).
  [[nodiscard]] radius::AttributeRange attribute_range() const {
    return {Bytes(attributes), 0, attributes.size()};
  }
  // The first attribute of `type`, if any.
  [[nodiscard]] std::optional<Bytes> find(std::uint8_t type) const;
};

// Why an Accounting-Request cannot become a record. The gateway drops the
// request and counts it by reason.
enum class RecordError : std::uint8_t {
  kNotAccountingRequest,  // code is not Accounting-Request
  kNoStatusType,          // Acct-Status-Type absent or not 4 octets (RFC 2866 §5.1)
  kNoSessionId,           // Acct-Session-Id absent or empty (RFC 2866 §5.5)
  kClientNameTooLong,     // shortname longer than kClientNameMax
};
inline constexpr std::size_t kRecordErrorCount = 4;
std::string_view to_string(RecordError error);

// How the session key is computed: a list of parts, each the first present
// of its alternatives, formatted as FreeRADIUS's xlat prints them and joined
// with ','; the session key is MD5 of that text. Plus FreeRADIUS's Class
// shortcut: when the first Class starts with `class_prefix` followed by 32
// hex digits, the key is MD5 of "<those digits>,<Acct-Session-Id>".
// Immutable once built; shares the dictionary it was resolved against.
class KeyRecipe {
 public:
  // FreeRADIUS 3.2 policy.d/accounting `acct_unique`:
  //   %{md5:%{User-Name},%{Acct-Session-ID},%{%{NAS-IPv6-Address}:-%{NAS-IP-Address}},
  //         %{NAS-Identifier},%{NAS-Port-ID},%{NAS-Port}}
  // with class_value_prefix 'ai:'.
  static KeyRecipe freeradius_default();

  // Parses "User-Name,Acct-Session-Id,NAS-IPv6-Address|NAS-IP-Address,...":
  // parts separated by ',', alternatives by '|', each a dictionary name or a
  // standard attribute number. An empty `class_prefix` disables the Class
  // shortcut. Returns a readable reason on error.
  static Result<KeyRecipe, std::string> parse(std::string_view spec, std::string_view class_prefix,
                                              std::shared_ptr<const radius::Dictionary> dictionary);

  // The session key of a request. Pure; allocates nothing once its
  // per-thread text buffer has grown to the longest text seen.
  [[nodiscard]] SessionKey session_key(const radius::Packet& request) const;
  // The text MD5 is taken of (for tests and traces).
  [[nodiscard]] std::string session_text(const radius::Packet& request) const;
  // The same text appended to `text`.
  void append_session_text(std::string& text, const radius::Packet& request) const;

 private:
  std::shared_ptr<const radius::Dictionary> dictionary_;
  std::vector<std::vector<const radius::AttributeDef*>> parts_;
  std::string class_prefix_;
  // The standard attribute types the text reads (the parts', Class,
  // Acct-Session-Id), noted in one walk of the request.
  std::bitset<256> wanted_;
};

// Builds the record of a validated Accounting-Request (authenticator and
// Message-Authenticator already checked by the gateway). Pure.
[[nodiscard]] Result<Record, RecordError> make_record(const radius::Packet& request,
                                                      std::string_view client_shortname,
                                                      std::int64_t received_unix_ms, const KeyRecipe& recipe);

// make_record into an existing record, reusing the capacity of its client
// and attribute buffers: the gateway's workers keep one record each and
// build every request's record into it without allocating (issue 15). On
// error `record` is left in an unspecified but valid state.
[[nodiscard]] std::optional<RecordError> fill_record(Record& record, const radius::Packet& request,
                                                     std::string_view client_shortname,
                                                     std::int64_t received_unix_ms, const KeyRecipe& recipe);

// The record key of an attribute list (raw TLVs) from `client`. Requires:
// well-formed TLVs. See docs/wire_formats.md "Record key".
[[nodiscard]] RecordKey compute_record_key(Bytes attributes, std::string_view client);

// The record's attributes as (dictionary name, value text) pairs in wire
// order, for `radiusward ctl records`. Unknown attributes are named
// "Attr-N" (or "Vendor-V-Attr-N") with a 0x-hex value; each sub-attribute
// of a Vendor-Specific in the 1,1 format becomes its own pair.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> describe(const Record& record,
                                                                        const radius::Dictionary& dictionary);

}  // namespace rw::accounting
