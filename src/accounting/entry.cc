// Encoding and strict decoding of log entries and records
// (docs/wire_formats.md "Log entry" and "Record").
#include "accounting/entry.h"

#include "accounting/big_endian.h"
#include "base/assert.h"

namespace rw::accounting {

namespace {

void put_header(std::vector<std::uint8_t>& out, EntryType type, std::optional<std::int64_t> leader_unix_ms) {
  out.push_back(kEntryMagic0);
  out.push_back(kEntryMagic1);
  out.push_back(leader_unix_ms ? kEntryVersion : kEntryVersion1);
  out.push_back(static_cast<std::uint8_t>(type));
  if (leader_unix_ms) append_u64(out, static_cast<std::uint64_t>(*leader_unix_ms));
}

std::size_t header_length(std::optional<std::int64_t> leader_unix_ms) {
  return leader_unix_ms ? kEntryHeaderLength : kEntryHeaderLength1;
}

std::vector<std::uint8_t> encode_u64_entry(EntryType type, std::uint64_t value,
                                           std::optional<std::int64_t> leader_unix_ms) {
  std::vector<std::uint8_t> out;
  out.reserve(kEntryHeaderLength + 8);
  put_header(out, type, leader_unix_ms);
  append_u64(out, value);
  return out;
}

// RFC 2865 §5: Type, Length (>= 2, counting both octets), Value.
bool whole_tlvs(Bytes attributes) {
  std::size_t at = 0;
  while (at < attributes.size()) {
    if (attributes.size() - at < 2) return false;
    const std::size_t length = attributes[at + 1];
    if (length < 2 || length > attributes.size() - at) return false;
    at += length;
  }
  return true;
}

// The content checks of a record's attribute list, after whole_tlvs.
std::optional<EntryError> check_attributes(const Record& record) {
  bool status_ok = false;
  bool session_ok = false;
  bool status_seen = false;
  for (const radius::Attribute& attribute : record.attribute_range()) {
    switch (attribute.type) {
      case radius::attr::kMessageAuthenticator:
      case radius::attr::kProxyState:
        return EntryError::kForbiddenAttribute;
      case radius::attr::kAcctStatusType:
        // The first one counts, as Packet::find_u32 reads it in make_record.
        if (!status_seen) {
          status_seen = true;
          ByteReader reader(attribute.value);
          std::uint32_t value = 0;
          status_ok = attribute.value.size() == 4 && reader.read_u32(value) && value == record.status_type;
        }
        break;
      case radius::attr::kAcctSessionId:
        if (!attribute.value.empty()) session_ok = true;
        break;
      default:
        break;
    }
  }
  if (!status_ok) return EntryError::kStatusTypeMismatch;
  if (!session_ok) return EntryError::kNoSessionId;
  return std::nullopt;
}

bool read_key(ByteReader& reader, Digest16& key) {
  Bytes bytes = reader.read_bytes(kKeyLength);
  if (bytes.size() != kKeyLength) return false;
  std::copy(bytes.begin(), bytes.end(), key.bytes.begin());
  return true;
}

Result<Entry, EntryError> decode_records_body(ByteReader& reader, std::size_t total) {
  Entry entry;
  entry.type = EntryType::kRecords;
  std::uint32_t count = 0;
  if (!reader.read_u32(count)) return fail(EntryError::kTruncated);
  if (count == 0) return fail(EntryError::kEmptyBatch);
  if (count > kEntryRecordsMax) return fail(EntryError::kTooManyRecords);
  // Each record takes at least its length prefix and fixed part.
  if (count > total / (2 + kRecordFixedLength)) return fail(EntryError::kTruncated);
  entry.records.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint16_t length = 0;
    if (!reader.read_u16(length)) return fail(EntryError::kTruncated);
    if (length > kRecordLengthMax) return fail(EntryError::kRecordTooLong);
    Bytes body = reader.read_bytes(length);
    if (reader.failed()) return fail(EntryError::kTruncated);
    auto record = decode_record(body);
    if (!record) return fail(record.error());
    entry.records.push_back(std::move(*record));
  }
  return entry;
}

}  // namespace

std::string_view to_string(EntryType type) {
  switch (type) {
    case EntryType::kRecords:
      return "records";
    case EntryType::kBarrier:
      return "barrier";
    case EntryType::kExportCursor:
      return "export-cursor";
  }
  return "unknown";
}

std::string_view to_string(EntryError error) {
  switch (error) {
    case EntryError::kTruncated:
      return "truncated";
    case EntryError::kBadMagic:
      return "bad magic";
    case EntryError::kUnsupportedVersion:
      return "unsupported version";
    case EntryError::kUnknownType:
      return "unknown entry type";
    case EntryError::kTrailingBytes:
      return "trailing bytes";
    case EntryError::kTooLarge:
      return "entry too large";
    case EntryError::kEmptyBatch:
      return "empty batch";
    case EntryError::kTooManyRecords:
      return "too many records";
    case EntryError::kRecordTooLong:
      return "record too long";
    case EntryError::kAttributesTooLong:
      return "attributes too long";
    case EntryError::kMalformedAttributes:
      return "malformed attributes";
    case EntryError::kForbiddenAttribute:
      return "Message-Authenticator or Proxy-State in a record";
    case EntryError::kStatusTypeMismatch:
      return "Acct-Status-Type missing or mismatched";
    case EntryError::kNoSessionId:
      return "no Acct-Session-Id";
    case EntryError::kKeyMismatch:
      return "record key mismatch";
    case EntryError::kCursorNotBehind:
      return "export cursor not behind its entry";
  }
  return "unknown";
}

std::size_t encoded_size(const Record& record) {
  return kRecordFixedLength + record.client.size() + record.attributes.size();
}

void encode_record(const Record& record, std::vector<std::uint8_t>& out) {
  RW_ASSERT(record.client.size() <= kClientNameMax);
  RW_ASSERT(record.attributes.size() <= kRecordAttributesMax);
  out.insert(out.end(), record.key.bytes.begin(), record.key.bytes.end());
  out.insert(out.end(), record.session.bytes.begin(), record.session.bytes.end());
  append_u32(out, record.status_type);
  append_u64(out, static_cast<std::uint64_t>(record.received_unix_ms));
  append_u64(out, static_cast<std::uint64_t>(record.event_unix_ms));
  out.push_back(static_cast<std::uint8_t>(record.client.size()));
  out.insert(out.end(), record.client.begin(), record.client.end());
  append_u16(out, static_cast<std::uint16_t>(record.attributes.size()));
  out.insert(out.end(), record.attributes.begin(), record.attributes.end());
}

Result<Record, EntryError> decode_record(Bytes body) {
  if (body.size() > kRecordLengthMax) return fail(EntryError::kRecordTooLong);
  ByteReader reader(body);
  Record record;
  std::uint64_t received = 0;
  std::uint64_t event = 0;
  std::uint8_t client_length = 0;
  if (!read_key(reader, record.key) || !read_key(reader, record.session) ||
      !reader.read_u32(record.status_type) || !reader.read_u64(received) || !reader.read_u64(event) ||
      !reader.read_u8(client_length)) {
    return fail(EntryError::kTruncated);
  }
  record.received_unix_ms = static_cast<std::int64_t>(received);
  record.event_unix_ms = static_cast<std::int64_t>(event);
  Bytes client = reader.read_bytes(client_length);
  std::uint16_t attributes_length = 0;
  if (reader.failed() || !reader.read_u16(attributes_length)) return fail(EntryError::kTruncated);
  if (attributes_length > kRecordAttributesMax) return fail(EntryError::kAttributesTooLong);
  Bytes attributes = reader.read_bytes(attributes_length);
  if (reader.failed()) return fail(EntryError::kTruncated);
  if (reader.remaining() != 0) return fail(EntryError::kTrailingBytes);
  if (!whole_tlvs(attributes)) return fail(EntryError::kMalformedAttributes);
  record.client.assign(as_chars(client));
  record.attributes.assign(attributes.begin(), attributes.end());
  if (auto error = check_attributes(record)) return fail(*error);
  return record;
}

Result<Record, EntryError> validate_record(Bytes body) {
  auto record = decode_record(body);
  if (!record) return record;
  if (compute_record_key(record->attributes, record->client) != record->key)
    return fail(EntryError::kKeyMismatch);
  return record;
}

EntryBuilder::EntryBuilder(std::size_t bytes_max, std::optional<std::int64_t> leader_unix_ms)
    : bytes_max_(bytes_max), leader_unix_ms_(leader_unix_ms) {
  RW_ASSERT(bytes_max_ >= kEntryHeaderLength + 4 + 2 + kRecordLengthMax && bytes_max_ <= kEntryBytesMax);
  start();
}

void EntryBuilder::start() {
  count_ = 0;
  bytes_.clear();
  put_header(bytes_, EntryType::kRecords, leader_unix_ms_);
  append_u32(bytes_, 0);  // The count, filled by finish().
}

bool EntryBuilder::add(const Record& record) {
  const std::size_t length = encoded_size(record);
  if (count_ == kEntryRecordsMax || bytes_.size() + 2 + length > bytes_max_) return false;
  append_u16(bytes_, static_cast<std::uint16_t>(length));
  encode_record(record, bytes_);
  ++count_;
  return true;
}

bool EntryBuilder::add_encoded(Bytes body) {
  RW_ASSERT(body.size() <= kRecordLengthMax);
  if (count_ == kEntryRecordsMax || bytes_.size() + 2 + body.size() > bytes_max_) return false;
  append_u16(bytes_, static_cast<std::uint16_t>(body.size()));
  bytes_.insert(bytes_.end(), body.begin(), body.end());
  ++count_;
  return true;
}

std::vector<std::uint8_t> EntryBuilder::finish() {
  RW_ASSERT(count_ > 0);
  for (int i = 0; i < 4; ++i) {
    bytes_[header_length(leader_unix_ms_) + static_cast<std::size_t>(i)] =
        static_cast<std::uint8_t>(count_ >> (24 - 8 * i));
  }
  std::vector<std::uint8_t> out = std::move(bytes_);
  bytes_ = {};
  start();
  return out;
}

std::vector<std::uint8_t> encode_records_entry(std::span<const Record> records,
                                               std::optional<std::int64_t> leader_unix_ms) {
  RW_ASSERT(!records.empty() && records.size() <= kEntryRecordsMax);
  std::vector<std::uint8_t> out;
  std::size_t total = header_length(leader_unix_ms) + 4;
  for (const Record& record : records) total += 2 + encoded_size(record);
  RW_ASSERT(total <= kEntryBytesMax);
  out.reserve(total);
  put_header(out, EntryType::kRecords, leader_unix_ms);
  append_u32(out, static_cast<std::uint32_t>(records.size()));
  for (const Record& record : records) {
    append_u16(out, static_cast<std::uint16_t>(encoded_size(record)));
    encode_record(record, out);
  }
  return out;
}

std::vector<std::uint8_t> encode_barrier_entry(std::uint64_t term,
                                               std::optional<std::int64_t> leader_unix_ms) {
  return encode_u64_entry(EntryType::kBarrier, term, leader_unix_ms);
}

std::vector<std::uint8_t> encode_export_cursor_entry(std::uint64_t exported_through,
                                                     std::optional<std::int64_t> leader_unix_ms) {
  return encode_u64_entry(EntryType::kExportCursor, exported_through, leader_unix_ms);
}

std::vector<std::uint8_t> encode_entry(const Entry& entry) {
  switch (entry.type) {
    case EntryType::kRecords:
      return encode_records_entry(entry.records, entry.leader_unix_ms);
    case EntryType::kBarrier:
      return encode_barrier_entry(entry.barrier_term, entry.leader_unix_ms);
    case EntryType::kExportCursor:
      return encode_export_cursor_entry(entry.exported_through, entry.leader_unix_ms);
  }
  RW_ASSERT(false);
  return {};
}

Result<Entry, EntryError> decode_entry(Bytes bytes) {
  if (bytes.size() > kEntryBytesMax) return fail(EntryError::kTooLarge);
  ByteReader reader(bytes);
  std::uint8_t magic0 = 0;
  std::uint8_t magic1 = 0;
  std::uint8_t version = 0;
  std::uint8_t type = 0;
  if (!reader.read_u8(magic0) || !reader.read_u8(magic1)) return fail(EntryError::kTruncated);
  if (magic0 != kEntryMagic0 || magic1 != kEntryMagic1) return fail(EntryError::kBadMagic);
  if (!reader.read_u8(version)) return fail(EntryError::kTruncated);
  if (version != kEntryVersion && version != kEntryVersion1) return fail(EntryError::kUnsupportedVersion);
  if (!reader.read_u8(type)) return fail(EntryError::kTruncated);
  std::optional<std::int64_t> leader_unix_ms;
  if (version == kEntryVersion) {
    std::uint64_t stamp = 0;
    if (!reader.read_u64(stamp)) return fail(EntryError::kTruncated);
    leader_unix_ms = static_cast<std::int64_t>(stamp);
  }

  Entry entry;
  switch (static_cast<EntryType>(type)) {
    case EntryType::kRecords: {
      auto records = decode_records_body(reader, bytes.size());
      if (!records) return records;
      entry = std::move(*records);
      break;
    }
    case EntryType::kBarrier:
      entry.type = EntryType::kBarrier;
      if (!reader.read_u64(entry.barrier_term)) return fail(EntryError::kTruncated);
      break;
    case EntryType::kExportCursor:
      entry.type = EntryType::kExportCursor;
      if (!reader.read_u64(entry.exported_through)) return fail(EntryError::kTruncated);
      break;
    default:
      return fail(EntryError::kUnknownType);
  }
  if (reader.remaining() != 0) return fail(EntryError::kTrailingBytes);
  entry.leader_unix_ms = leader_unix_ms;
  return entry;
}

Result<EntryType, EntryError> validate_entry(Bytes bytes) {
  auto entry = decode_entry(bytes);
  if (!entry) return fail(entry.error());
  for (const Record& record : entry->records) {
    if (compute_record_key(record.attributes, record.client) != record.key)
      return fail(EntryError::kKeyMismatch);
  }
  return entry->type;
}

}  // namespace rw::accounting
