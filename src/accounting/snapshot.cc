// Canonical snapshot bytes of the ledger and their strict restore
// (docs/wire_formats.md "Snapshot"). Every section is in an order fixed by
// the log or by key, never by a hash table, so equal ledgers give equal bytes.

// SHA256_Init/Update/Final are deprecated in OpenSSL 3 (see checksum_of).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <openssl/sha.h>

#include <algorithm>
#include <array>

#include "accounting/big_endian.h"
#include "accounting/ledger.h"
#include "base/assert.h"

namespace rw::accounting {

namespace {

constexpr std::array<std::uint8_t, 4> kSnapshotMagic = {'R', 'W', 'L', 'S'};
// Version 2 adds window key indices, session intervals and seen times, and
// the sessions_expired counter; version 3 adds the sessions'
// Calling-Station-Id, Framed-IP-Address and Framed-IPv6-Prefix. Snapshots of
// versions 1 and 2 (written before) still restore.
constexpr std::uint8_t kSnapshotVersion = 3;
constexpr std::uint8_t kSnapshotVersion2 = 2;
constexpr std::uint8_t kSnapshotVersion1 = 1;
constexpr std::size_t kChecksumLength = SHA256_DIGEST_LENGTH;
// Smallest encodings, to refuse counts the remaining bytes cannot hold.
constexpr std::size_t kHeldRecordMin = 8 + 2 + kRecordFixedLength;
constexpr std::size_t kWindowKeyLength1 = kKeyLength + 8;
constexpr std::size_t kWindowKeyLength = kWindowKeyLength1 + 8;
constexpr std::size_t kSessionMin1 = kKeyLength + 4 + 8 * 4 + 4 + 8 * 2 + 5;
constexpr std::size_t kSessionMin2 = kSessionMin1 + 4 + 8;
constexpr std::size_t kSessionMin = kSessionMin2 + 3;
constexpr std::size_t kSessionTextMax = 255;

// SHA-256 of `bytes` through the low-level calls, which take no lock: the
// one-shot SHA256() fetches the algorithm through EVP under a lock of the
// library's, and a member's snapshot may be written in a forked child, which
// must not wait for a lock another thread of the parent held at the fork
// (docs/consensus.md "Snapshots in a child process"). Same digest.
std::array<std::uint8_t, kChecksumLength> checksum_of(const std::uint8_t* bytes, std::size_t size) {
  SHA256_CTX context;
  SHA256_Init(&context);
  SHA256_Update(&context, bytes, size);
  std::array<std::uint8_t, kChecksumLength> digest{};
  SHA256_Final(digest.data(), &context);
  return digest;
}

// Appends to a buffer it borrows.
class Writer {
 public:
  explicit Writer(std::vector<std::uint8_t>& out) : out_(out) {}
  void u8(std::uint8_t value) { out_.push_back(value); }
  void u16(std::uint16_t value) { append_u16(out_, value); }
  void u32(std::uint32_t value) { append_u32(out_, value); }
  void u64(std::uint64_t value) { append_u64(out_, value); }
  void i64(std::int64_t value) { u64(static_cast<std::uint64_t>(value)); }
  void bytes(Bytes value) { out_.insert(out_.end(), value.begin(), value.end()); }
  // A text of at most 255 bytes with a one-byte length.
  void text(Bytes value) {
    RW_ASSERT(value.size() <= kSessionTextMax);
    u8(static_cast<std::uint8_t>(value.size()));
    bytes(value);
  }
  std::vector<std::uint8_t>& out() { return out_; }

 private:
  std::vector<std::uint8_t>& out_;
};

bool read_i64(ByteReader& reader, std::int64_t& out) {
  std::uint64_t value = 0;
  if (!reader.read_u64(value)) return false;
  out = static_cast<std::int64_t>(value);
  return true;
}

bool read_digest(ByteReader& reader, Digest16& out) {
  Bytes bytes = reader.read_bytes(kKeyLength);
  if (bytes.size() != kKeyLength) return false;
  std::copy(bytes.begin(), bytes.end(), out.bytes.begin());
  return true;
}

template <class Text>
bool read_text(ByteReader& reader, Text& out) {
  std::uint8_t length = 0;
  if (!reader.read_u8(length)) return false;
  Bytes bytes = reader.read_bytes(length);
  if (reader.failed()) return false;
  out.assign(bytes.begin(), bytes.end());
  return true;
}

void write_session(Writer& writer, const Session& session) {
  writer.bytes(session.key.bytes);
  writer.u32(session.last_status_type);
  writer.u64(session.opened_index);
  writer.u64(session.updated_index);
  writer.i64(session.started_unix_ms);
  writer.i64(session.updated_unix_ms);
  writer.u32(session.session_time_s);
  writer.u64(session.input_octets);
  writer.u64(session.output_octets);
  writer.u32(session.interim_interval_s);
  writer.i64(session.seen_unix_ms);
  writer.text(as_bytes(session.client));
  writer.text(session.nas_address);
  writer.text(as_bytes(session.nas_identifier));
  writer.text(as_bytes(session.user_name));
  writer.text(as_bytes(session.acct_session_id));
  writer.text(as_bytes(session.calling_station_id));
  writer.text(session.framed_ip_address);
  writer.text(session.framed_ipv6_prefix);
}

// Version 1 sessions have no interval and seen time: they get none and the
// restore-time clock, so they expire a full period after an upgrade.
bool read_session(ByteReader& reader, std::uint8_t version, std::int64_t clock_unix_ms, Session& session) {
  if (!(read_digest(reader, session.key) && reader.read_u32(session.last_status_type) &&
        reader.read_u64(session.opened_index) && reader.read_u64(session.updated_index) &&
        read_i64(reader, session.started_unix_ms) && read_i64(reader, session.updated_unix_ms) &&
        reader.read_u32(session.session_time_s) && reader.read_u64(session.input_octets) &&
        reader.read_u64(session.output_octets))) {
    return false;
  }
  session.seen_unix_ms = clock_unix_ms;
  if (version != kSnapshotVersion1 &&
      !(reader.read_u32(session.interim_interval_s) && read_i64(reader, session.seen_unix_ms))) {
    return false;
  }
  if (!(read_text(reader, session.client) && read_text(reader, session.nas_address) &&
        read_text(reader, session.nas_identifier) && read_text(reader, session.user_name) &&
        read_text(reader, session.acct_session_id))) {
    return false;
  }
  // Versions 1 and 2 kept no Calling-Station-Id or framed address: their
  // sessions have none until they close.
  if (version != kSnapshotVersion) return true;
  if (!(read_text(reader, session.calling_station_id) && read_text(reader, session.framed_ip_address) &&
        read_text(reader, session.framed_ipv6_prefix))) {
    return false;
  }
  // Only what apply() keeps (ledger.cc): a 4-octet address, a well-formed prefix.
  return (session.framed_ip_address.empty() || session.framed_ip_address.size() == 4) &&
         (session.framed_ipv6_prefix.empty() || valid_framed_ipv6_prefix(session.framed_ipv6_prefix));
}

void write_counters(Writer& writer, const LedgerCounters& counters) {
  writer.u64(counters.records_applied);
  writer.u64(counters.records_duplicate);
  writer.u64(counters.records_exported);
  writer.u64(counters.entries_skipped);
  writer.u64(counters.sessions_untracked);
  writer.u64(counters.sessions_closed_by_nas);
  writer.u64(counters.sessions_expired);
}

bool read_counters(ByteReader& reader, std::uint8_t version, LedgerCounters& counters) {
  return reader.read_u64(counters.records_applied) && reader.read_u64(counters.records_duplicate) &&
         reader.read_u64(counters.records_exported) && reader.read_u64(counters.entries_skipped) &&
         reader.read_u64(counters.sessions_untracked) && reader.read_u64(counters.sessions_closed_by_nas) &&
         (version == kSnapshotVersion1 || reader.read_u64(counters.sessions_expired));
}

// Reads a section's count, refusing one the remaining bytes cannot hold.
bool read_count(ByteReader& reader, std::size_t element_min, std::uint32_t& count) {
  return reader.read_u32(count) && count <= reader.remaining() / element_min;
}

}  // namespace

std::size_t Ledger::snapshot_size_bound() const {
  // Header and counters, 10 bytes of index and length per held record, the
  // window keys, the sessions' encoded bytes, the trailer.
  return 128 + held_bytes_ + held_.size() * 10 + window_.size() * kWindowKeyLength + sessions_bytes_ +
         kChecksumLength;
}

std::vector<std::uint8_t> Ledger::snapshot() const {
  std::vector<std::uint8_t> out;
  snapshot_into(out);
  return out;
}

void Ledger::snapshot_into(std::vector<std::uint8_t>& out) const {
  const std::size_t start = out.size();
  out.reserve(start + snapshot_size_bound());
  Writer writer(out);
  writer.bytes(kSnapshotMagic);
  writer.u8(kSnapshotVersion);
  writer.u8(0);
  writer.u16(0);
  writer.u64(last_applied_);
  writer.u64(exported_through_);
  writer.i64(clock_unix_ms_);
  write_counters(writer, counters_);

  writer.u32(static_cast<std::uint32_t>(held_.size()));
  for (const HeldRecord& held : held_) {
    writer.u64(held.index);
    writer.u16(static_cast<std::uint16_t>(encoded_size(held.record)));
    encode_record(held.record, out);
  }
  writer.u32(static_cast<std::uint32_t>(window_.size()));
  for (const WindowKey& key : window_) {
    writer.bytes(key.key.bytes);
    writer.i64(key.exported_unix_ms);
    writer.u64(key.index);
  }
  writer.u32(static_cast<std::uint32_t>(sessions_.size()));
  for (const auto& [key, session] : sessions_) write_session(writer, session);

  writer.bytes(checksum_of(out.data() + start, out.size() - start));
}

Result<Ledger, SnapshotError> Ledger::restore(Bytes snapshot, LedgerLimits limits, std::uint64_t index_seed) {
  if (snapshot.size() < kSnapshotMagic.size() + 4 + kChecksumLength) return fail(SnapshotError::kTruncated);
  if (!std::equal(kSnapshotMagic.begin(), kSnapshotMagic.end(), snapshot.begin())) {
    return fail(SnapshotError::kBadMagic);
  }
  const std::uint8_t version = snapshot[4];
  if (version != kSnapshotVersion && version != kSnapshotVersion2 && version != kSnapshotVersion1)
    return fail(SnapshotError::kUnsupportedVersion);
  Bytes body = snapshot.first(snapshot.size() - kChecksumLength);
  const std::array<std::uint8_t, kChecksumLength> checksum = checksum_of(body.data(), body.size());
  if (!std::equal(checksum.begin(), checksum.end(), snapshot.end() - kChecksumLength)) {
    return fail(SnapshotError::kBadChecksum);
  }

  ByteReader reader(body.subspan(5));
  Ledger ledger(limits, index_seed);
  std::uint8_t reserved8 = 0;
  std::uint16_t reserved16 = 0;
  if (!reader.read_u8(reserved8) || !reader.read_u16(reserved16)) return fail(SnapshotError::kTruncated);
  if (reserved8 != 0 || reserved16 != 0) return fail(SnapshotError::kReservedNotZero);
  if (!reader.read_u64(ledger.last_applied_) || !reader.read_u64(ledger.exported_through_) ||
      !read_i64(reader, ledger.clock_unix_ms_) || !read_counters(reader, version, ledger.counters_)) {
    return fail(SnapshotError::kTruncated);
  }

  std::uint32_t count = 0;
  if (!read_count(reader, kHeldRecordMin, count)) return fail(SnapshotError::kTruncated);
  std::uint64_t previous_index = ledger.exported_through_;
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint64_t index = 0;
    std::uint16_t length = 0;
    if (!reader.read_u64(index) || !reader.read_u16(length)) return fail(SnapshotError::kTruncated);
    Bytes body_bytes = reader.read_bytes(length);
    if (reader.failed()) return fail(SnapshotError::kTruncated);
    // Records of one entry share its index; entries are in log order.
    if (index < previous_index || index <= ledger.exported_through_ || index > ledger.last_applied_) {
      return fail(SnapshotError::kRecordOrder);
    }
    previous_index = index;
    auto record = decode_record(body_bytes);
    if (!record) return fail(SnapshotError::kBadRecord);
    if (!ledger.known_.insert(record->key).second) return fail(SnapshotError::kDuplicateKey);
    ledger.held_bytes_ += encoded_size(*record);
    ledger.held_.push_back({index, std::move(*record)});
  }

  const bool v1 = version == kSnapshotVersion1;
  if (!read_count(reader, v1 ? kWindowKeyLength1 : kWindowKeyLength, count))
    return fail(SnapshotError::kTruncated);
  for (std::uint32_t i = 0; i < count; ++i) {
    // A version 1 key has its record's receive time and no index: index 0
    // leaves only its time and the count to age it.
    WindowKey key;
    if (!read_digest(reader, key.key) || !read_i64(reader, key.exported_unix_ms) ||
        (!v1 && !reader.read_u64(key.index))) {
      return fail(SnapshotError::kTruncated);
    }
    // Version 1 keys carry their record's receive time, which need not grow
    // along the window; the upgrade keeps each at least as late as the one
    // before (so it ages no sooner), which makes the version 2 snapshot it
    // writes one that the check below accepts.
    if (v1 && !ledger.window_.empty())
      key.exported_unix_ms = std::max(key.exported_unix_ms, ledger.window_.back().exported_unix_ms);
    // trim_window() pops from the front: keys must be oldest first.
    if (!v1 &&
        (key.index > ledger.exported_through_ ||
         (!ledger.window_.empty() && (key.index < ledger.window_.back().index ||
                                      key.exported_unix_ms < ledger.window_.back().exported_unix_ms)))) {
      return fail(SnapshotError::kWindowOrder);
    }
    if (!ledger.known_.insert(key.key).second) return fail(SnapshotError::kDuplicateKey);
    ledger.window_.push_back(key);
  }

  const std::size_t session_min = v1                             ? kSessionMin1
                                  : version == kSnapshotVersion2 ? kSessionMin2
                                                                 : kSessionMin;
  if (!read_count(reader, session_min, count)) return fail(SnapshotError::kTruncated);
  for (std::uint32_t i = 0; i < count; ++i) {
    Session session;
    if (!read_session(reader, version, ledger.clock_unix_ms_, session))
      return fail(SnapshotError::kBadSession);
    if (!ledger.sessions_.empty() && !(ledger.sessions_.rbegin()->first < session.key)) {
      return fail(SnapshotError::kSessionOrder);
    }
    const SessionKey key = session.key;
    auto placed = ledger.sessions_.emplace_hint(ledger.sessions_.end(), key, std::move(session));
    // The indexes (per user, per NAS, expiry, bytes) are derived state:
    // rebuilt here, never stored.
    ledger.index_session(placed);
  }
  if (reader.remaining() != 0) return fail(SnapshotError::kTrailingBytes);
  // A window or session table beyond these limits (a peer configured
  // otherwise) is accepted: the limits bound what is added, and the window
  // is trimmed on the next apply.
  return ledger;
}

}  // namespace rw::accounting

#pragma GCC diagnostic pop
