// The accounting state machine: apply in log order, de-duplication, sessions,
// export cursor (docs/accounting.md).
#include "accounting/ledger.h"

#include <algorithm>

#include "base/assert.h"

namespace rw::accounting {

namespace {

std::optional<std::uint32_t> find_u32(const Record& record, std::uint8_t type) {
  auto value = record.find(type);
  if (!value || value->size() != 4) return std::nullopt;
  return static_cast<std::uint32_t>((*value)[0]) << 24 | static_cast<std::uint32_t>((*value)[1]) << 16 |
         static_cast<std::uint32_t>((*value)[2]) << 8 | (*value)[3];
}

std::string find_text(const Record& record, std::uint8_t type) {
  auto value = record.find(type);
  return value ? std::string(as_chars(*value)) : std::string();
}

// NAS-IP-Address (RFC 2865 §5.4), else NAS-IPv6-Address (RFC 3162 §2.1).
std::vector<std::uint8_t> nas_address(const Record& record) {
  auto value = record.find(radius::attr::kNasIpAddress);
  if (!value) value = record.find(radius::attr::kNasIpv6Address);
  if (!value) return {};
  return {value->begin(), value->end()};
}

// RFC 2869 §5.1-5.2: Gigawords count the 2^32 overflows of Octets.
std::uint64_t octets(const Record& record, std::uint8_t octets_type, std::uint8_t gigawords_type) {
  const std::uint64_t low = find_u32(record, octets_type).value_or(0);
  const std::uint64_t high = find_u32(record, gigawords_type).value_or(0);
  return high << 32 | low;
}

}  // namespace

std::string_view to_string(SnapshotError error) {
  switch (error) {
    case SnapshotError::kTruncated:
      return "truncated";
    case SnapshotError::kBadMagic:
      return "bad magic";
    case SnapshotError::kUnsupportedVersion:
      return "unsupported version";
    case SnapshotError::kBadChecksum:
      return "bad checksum";
    case SnapshotError::kReservedNotZero:
      return "reserved bytes not zero";
    case SnapshotError::kBadRecord:
      return "bad record";
    case SnapshotError::kRecordOrder:
      return "records out of order";
    case SnapshotError::kDuplicateKey:
      return "duplicate key";
    case SnapshotError::kBadSession:
      return "bad session";
    case SnapshotError::kSessionOrder:
      return "sessions out of order";
    case SnapshotError::kTrailingBytes:
      return "trailing bytes";
  }
  return "unknown";
}

Ledger::Ledger(LedgerLimits limits) : limits_(limits) {}

ApplyResult Ledger::apply(std::uint64_t index, Bytes entry) {
  RW_ASSERT(index > last_applied_);
  last_applied_ = index;
  ApplyResult result;
  auto decoded = decode_entry(entry);
  if (!decoded) {
    ++counters_.entries_skipped;
    result.skipped = decoded.error();
    return result;
  }
  switch (decoded->type) {
    case EntryType::kRecords:
      apply_records(index, decoded->records, result);
      break;
    case EntryType::kBarrier:
      break;
    case EntryType::kExportCursor:
      // The exporter can only have exported entries before this one.
      if (decoded->exported_through >= index) {
        ++counters_.entries_skipped;
        result.skipped = EntryError::kCursorNotBehind;
        return result;
      }
      apply_cursor(decoded->exported_through, result);
      break;
  }
  result.type = decoded->type;
  return result;
}

void Ledger::apply_records(std::uint64_t index, std::vector<Record>& records, ApplyResult& result) {
  result.new_keys.reserve(records.size());
  for (Record& record : records) {
    if (!known_.insert(record.key).second) {
      ++counters_.records_duplicate;
      result.duplicate_keys.push_back(record.key);
      continue;
    }
    ++counters_.records_applied;
    result.new_keys.push_back(record.key);
    newest_received_unix_ms_ = std::max(newest_received_unix_ms_, record.received_unix_ms);
    update_sessions(index, record);
    held_bytes_ += encoded_size(record);
    held_.push_back({index, std::move(record)});
  }
  trim_window();
}

void Ledger::apply_cursor(std::uint64_t exported_through, ApplyResult& result) {
  // A stale exporter (an old leader's) may send a lower cursor: no-op.
  if (exported_through <= exported_through_) return;
  exported_through_ = exported_through;
  while (!held_.empty() && held_.front().index <= exported_through) {
    const Record& record = held_.front().record;
    held_bytes_ -= encoded_size(record);
    window_.push_back({record.key, record.received_unix_ms});
    held_.pop_front();
    ++result.records_exported;
    ++counters_.records_exported;
  }
  trim_window();
}

void Ledger::trim_window() {
  const std::int64_t oldest_kept = minus_ms(newest_received_unix_ms_, limits_.exported_keys_age_ms);
  while (!window_.empty() &&
         (window_.size() > limits_.exported_keys_max || window_.front().received_unix_ms < oldest_kept)) {
    known_.erase(window_.front().key);
    window_.pop_front();
  }
}

void Ledger::update_sessions(std::uint64_t index, const Record& record) {
  switch (record.status_type) {
    case status::kStart:
    case status::kInterimUpdate:
      break;
    case status::kStop:
      if (auto closed = sessions_.find(record.session); closed != sessions_.end()) {
        unindex_session(closed->second);
        sessions_.erase(closed);
      }
      return;
    case status::kAccountingOn:
    case status::kAccountingOff:
      close_nas_sessions(record);
      return;
    default:
      return;
  }
  auto found = sessions_.lower_bound(record.session);
  if (found == sessions_.end() || found->first != record.session) {
    if (sessions_.size() >= limits_.sessions_max) {
      ++counters_.sessions_untracked;
      return;
    }
    Session session;
    session.key = record.session;
    session.client = record.client;
    session.nas_address = nas_address(record);
    session.nas_identifier = find_text(record, radius::attr::kNasIdentifier);
    session.user_name = find_text(record, radius::attr::kUserName);
    session.acct_session_id = find_text(record, radius::attr::kAcctSessionId);
    session.opened_index = index;
    session.started_unix_ms = record.event_unix_ms;
    if (record.status_type == status::kInterimUpdate) {
      // As FreeRADIUS's interim query does for a missing row: start = now - session time.
      session.started_unix_ms =
          minus_ms(session.started_unix_ms,
                   std::int64_t{find_u32(record, radius::attr::kAcctSessionTime).value_or(0)} * 1000);
    }
    found = sessions_.emplace_hint(found, record.session, std::move(session));
    index_session(found->second);
  }
  Session& session = found->second;
  session.last_status_type = record.status_type;
  session.updated_index = index;
  session.updated_unix_ms = record.event_unix_ms;
  session.session_time_s = find_u32(record, radius::attr::kAcctSessionTime).value_or(0);
  session.input_octets = octets(record, radius::attr::kAcctInputOctets, radius::attr::kAcctInputGigawords);
  session.output_octets = octets(record, radius::attr::kAcctOutputOctets, radius::attr::kAcctOutputGigawords);
}

void Ledger::close_nas_sessions(const Record& record) {
  // RFC 2866 §5.1: Accounting-On/Off mean the NAS's sessions are over. The
  // NAS is the client plus the identity attributes the On/Off carries.
  const std::vector<std::uint8_t> address = nas_address(record);
  const auto identifier = record.find(radius::attr::kNasIdentifier);
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    const Session& session = it->second;
    const bool same_nas = session.client == record.client &&
                          (address.empty() || session.nas_address == address) &&
                          (!identifier || as_chars(*identifier) == session.nas_identifier);
    if (same_nas) {
      unindex_session(session);
      it = sessions_.erase(it);
      ++counters_.sessions_closed_by_nas;
    } else {
      ++it;
    }
  }
}

void Ledger::index_session(const Session& session) {
  if (session.user_name.empty()) return;
  auto found = open_by_user_.find(session.user_name);
  if (found == open_by_user_.end()) {
    open_by_user_.emplace(session.user_name, 1);
    return;
  }
  ++found->second;
}

void Ledger::unindex_session(const Session& session) {
  if (session.user_name.empty()) return;
  auto found = open_by_user_.find(session.user_name);
  RW_ASSERT(found != open_by_user_.end() && found->second > 0);
  if (--found->second == 0) open_by_user_.erase(found);
}

std::uint32_t Ledger::open_sessions_of(std::string_view user_name) const {
  if (user_name.empty()) return 0;
  auto found = open_by_user_.find(user_name);
  return found == open_by_user_.end() ? 0 : found->second;
}

bool Ledger::accepting() const {
  return held_.size() < limits_.held_records_max && held_bytes_ < limits_.held_bytes_max;
}

std::size_t Ledger::headroom_records() const {
  return held_.size() < limits_.held_records_max ? limits_.held_records_max - held_.size() : 0;
}

std::size_t Ledger::headroom_bytes() const {
  return held_bytes_ < limits_.held_bytes_max ? limits_.held_bytes_max - held_bytes_ : 0;
}

bool operator==(const Ledger& a, const Ledger& b) { return a.snapshot() == b.snapshot(); }

}  // namespace rw::accounting
