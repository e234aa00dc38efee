// The replicated log entry: a versioned envelope carrying a batch of
// records, a barrier, or the exporter's cursor. Byte layouts are drawn in
// docs/wire_formats.md ("Log entry", "Record"); decoding is strict and every
// refusal has a named reason. Pure: no I/O, no clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "accounting/record.h"
#include "base/bytes.h"
#include "base/result.h"

namespace rw::accounting {

inline constexpr std::uint8_t kEntryMagic0 = 'R';
inline constexpr std::uint8_t kEntryMagic1 = 'A';
inline constexpr std::uint8_t kEntryVersion = 1;
inline constexpr std::size_t kEntryHeaderLength = 4;
// Most records in one entry, and most bytes of one entry: batching is the
// throughput lever, but one entry is applied on the raft loop in one go.
inline constexpr std::size_t kEntryRecordsMax = 4096;
inline constexpr std::size_t kEntryBytesMax = 4 << 20;
// Longest attribute list of a record: a 4096-octet packet's attributes.
inline constexpr std::size_t kRecordAttributesMax = radius::kMaxPacketLength - radius::kHeaderLength;
// Fixed part of an encoded record (docs/wire_formats.md "Record").
inline constexpr std::size_t kRecordFixedLength = 16 + 16 + 4 + 8 + 8 + 1 + 2;
inline constexpr std::size_t kRecordLengthMax = kRecordFixedLength + kClientNameMax + kRecordAttributesMax;

enum class EntryType : std::uint8_t {
  kRecords = 1,       // a batch of records
  kBarrier = 2,       // no-op, committed by a new leader (docs/consensus.md)
  kExportCursor = 3,  // "exported through log index N" (docs/design.md invariant 3)
};
std::string_view to_string(EntryType type);

// Why bytes are not a valid entry or record. Every member refuses the same
// bytes for the same reason, so an undecodable entry is skipped identically
// everywhere (docs/consensus.md trap 7).
enum class EntryError : std::uint8_t {
  kTruncated,            // ends inside a field
  kBadMagic,             // does not start with "RA"
  kUnsupportedVersion,   // version byte is not 1
  kUnknownType,          // type byte not in EntryType
  kTrailingBytes,        // bytes after the last field
  kTooLarge,             // more than kEntryBytesMax
  kEmptyBatch,           // a kRecords entry with no record
  kTooManyRecords,       // more than kEntryRecordsMax records
  kRecordTooLong,        // record length above kRecordLengthMax
  kAttributesTooLong,    // attribute list above kRecordAttributesMax
  kMalformedAttributes,  // attribute list is not whole TLVs of length >= 2
  kForbiddenAttribute,   // Message-Authenticator or Proxy-State in a record
  kStatusTypeMismatch,   // Acct-Status-Type absent, not 4 octets or unequal to the field
  kNoSessionId,          // Acct-Session-Id absent or empty
  kKeyMismatch,          // record key is not the one its attributes give (validate only)
  kCursorNotBehind,      // an export cursor at or past its own entry (apply only)
};
inline constexpr std::size_t kEntryErrorCount = 16;
std::string_view to_string(EntryError error);

// A decoded entry. Only the fields of its type are meaningful.
struct Entry {
  EntryType type = EntryType::kBarrier;
  std::vector<Record> records;         // kRecords
  std::uint64_t barrier_term = 0;      // kBarrier: the term of the leader that wrote it
  std::uint64_t exported_through = 0;  // kExportCursor: highest exported log index

  friend bool operator==(const Entry&, const Entry&) = default;
};

// --- Records -----------------------------------------------------------

// The encoded size of a record. Requires: client within kClientNameMax and
// attributes within kRecordAttributesMax.
[[nodiscard]] std::size_t encoded_size(const Record& record);
// Appends the record's encoding (without a length prefix) to `out`.
// Requires: as encoded_size.
void encode_record(const Record& record, std::vector<std::uint8_t>& out);
// Decodes one record body with the structural checks above; it does not
// recompute the key (validate_record does).
[[nodiscard]] Result<Record, EntryError> decode_record(Bytes body);
// decode_record plus the record key recomputed and compared.
[[nodiscard]] Result<Record, EntryError> validate_record(Bytes body);

// --- Entries -----------------------------------------------------------

// Builds a kRecords entry record by record, off the packet path. add()
// refuses (returns false) a record that would pass kEntryRecordsMax or
// `bytes_max`; the caller then finishes this entry and starts another.
class EntryBuilder {
 public:
  explicit EntryBuilder(std::size_t bytes_max = kEntryBytesMax);

  [[nodiscard]] bool add(const Record& record);
  // Appends an already encoded record body (as received from a gateway).
  // Requires: validate_record(body) succeeded.
  [[nodiscard]] bool add_encoded(Bytes body);

  [[nodiscard]] std::size_t record_count() const { return count_; }
  [[nodiscard]] std::size_t size() const { return bytes_.size(); }
  [[nodiscard]] bool empty() const { return count_ == 0; }
  // Returns the entry and starts an empty one. Requires: !empty().
  [[nodiscard]] std::vector<std::uint8_t> finish();

 private:
  void start();

  std::size_t bytes_max_;
  std::size_t count_ = 0;
  std::vector<std::uint8_t> bytes_;
};

[[nodiscard]] std::vector<std::uint8_t> encode_records_entry(std::span<const Record> records);
[[nodiscard]] std::vector<std::uint8_t> encode_barrier_entry(std::uint64_t term);
[[nodiscard]] std::vector<std::uint8_t> encode_export_cursor_entry(std::uint64_t exported_through);
// Encodes any entry; encode_entry(decode_entry(b)) == b for every valid b.
[[nodiscard]] std::vector<std::uint8_t> encode_entry(const Entry& entry);

// Strict decode of an entry (structure of every record; keys not recomputed).
[[nodiscard]] Result<Entry, EntryError> decode_entry(Bytes bytes);

// Submit-time validation (docs/consensus.md trap 7): decode_entry plus every
// record's key recomputed. An entry that passes here is applied without a
// skip on every member.
[[nodiscard]] Result<EntryType, EntryError> validate_entry(Bytes bytes);

}  // namespace rw::accounting
