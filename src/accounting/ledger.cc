// The accounting state machine: apply in log order, de-duplication, sessions,
// export cursor (docs/accounting.md).
#include "accounting/ledger.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "base/assert.h"
#include "base/random.h"

namespace rw::accounting {

namespace {

std::optional<std::uint32_t> find_u32(const Record& record, std::uint8_t type) {
  auto value = record.find(type);
  return value ? radius::integer_value(*value) : std::nullopt;
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

// Framed-IP-Address when 4 octets (RFC 2865 §5.8), Framed-IPv6-Prefix when
// its Prefix-Length fits its 2-18 octets (RFC 3162 §2.3): a malformed value is
// not kept, so a snapshot holds only what a Disconnect-Request can carry.
std::vector<std::uint8_t> framed_ip_address(const Record& record) {
  auto value = record.find(radius::attr::kFramedIpAddress);
  if (!value || value->size() != 4) return {};
  return {value->begin(), value->end()};
}

std::vector<std::uint8_t> framed_ipv6_prefix(const Record& record) {
  auto value = record.find(radius::attr::kFramedIpv6Prefix);
  if (!value || !valid_framed_ipv6_prefix(*value)) return {};
  return {value->begin(), value->end()};
}

// RFC 2869 §5.1-5.2: Gigawords count the 2^32 overflows of Octets.
std::uint64_t octets(const Record& record, std::uint8_t octets_type, std::uint8_t gigawords_type) {
  const std::uint64_t low = find_u32(record, octets_type).value_or(0);
  const std::uint64_t high = find_u32(record, gigawords_type).value_or(0);
  return high << 32 | low;
}

// a + b, saturating at the int64 bounds (b >= 0): deadlines from untrusted
// stamps and intervals stay ordered instead of wrapping.
std::int64_t plus_saturating(std::int64_t a, std::int64_t b) {
  return a > std::numeric_limits<std::int64_t>::max() - b ? std::numeric_limits<std::int64_t>::max() : a + b;
}

// Fixed part of a session in a snapshot: key, status, two indices, two
// times, session time, two counters, interval, seen time, eight text lengths.
constexpr std::size_t kSessionFixedBytes = 16 + 4 + 8 * 2 + 8 * 2 + 4 + 8 * 2 + 4 + 8 + 8;

// The bytes, eight at a time, each word mixed into the seeded state.
std::size_t seeded_hash(std::uint64_t seed, const void* data, std::size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::uint64_t state = seed ^ size;
  for (; size >= 8; size -= 8, bytes += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, bytes, 8);
    state = mix64(state ^ word);
  }
  std::uint64_t tail = 0;
  if (size != 0) std::memcpy(&tail, bytes, size);
  return mix64(state ^ tail ^ 0x9e3779b97f4a7c15);
}

// The NAS address as the NAS index's key: its 4 or 16 octets, or empty.
std::string address_key(const std::vector<std::uint8_t>& address) { return {address.begin(), address.end()}; }

}  // namespace

std::size_t SeededHash::operator()(const Digest16& key) const noexcept {
  return seeded_hash(seed, key.bytes.data(), key.bytes.size());
}

std::size_t SeededHash::operator()(std::string_view text) const noexcept {
  return seeded_hash(seed, text.data(), text.size());
}

bool valid_framed_ipv6_prefix(Bytes value) {
  return value.size() >= 2 && value.size() <= 18 && value[1] <= 128 &&
         value.size() - 2 >= (value[1] + 7u) / 8;
}

std::size_t encoded_size(const Session& session) {
  return kSessionFixedBytes + session.client.size() + session.nas_address.size() +
         session.nas_identifier.size() + session.user_name.size() + session.acct_session_id.size() +
         session.calling_station_id.size() + session.framed_ip_address.size() +
         session.framed_ipv6_prefix.size();
}

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
    case SnapshotError::kWindowOrder:
      return "window keys out of order";
  }
  return "unknown";
}

Ledger::Ledger(LedgerLimits limits, std::uint64_t index_seed)
    : limits_(limits),
      known_(0, SeededHash{index_seed}),
      index_seed_(index_seed),
      index_(index_seed),
      open_by_user_(0, SeededHash{index_seed}) {
  // Keeps expiry_of() far from overflow (config caps it lower).
  RW_ASSERT(limits_.session_expiry_multiple <= 1000 && limits_.clock_step_max_ms >= 0);
}

void Ledger::reserve_key_index() {
  const std::size_t bound = limits_.held_records_max + limits_.exported_keys_max;
  known_.reserve(bound + bound / 8);
  const std::size_t sessions =
      std::min(limits_.sessions_max, limits_.sessions_bytes_max / kSessionFixedBytes);
  index_.slots.reserve(sessions + sessions / 8);
  open_by_user_.reserve(sessions + sessions / 8);
}

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
  // Time first: sessions that expired by this entry's stamp close before its
  // records apply, so a late record of one opens it afresh.
  advance_clock(decoded->leader_unix_ms);
  if (index_.stale) rebuild_session_index();
  expire_sessions();
  switch (decoded->type) {
    case EntryType::kRecords:
      apply_records(index, decoded->records, result);
      break;
    case EntryType::kBarrier:
      trim_window();
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
    update_sessions(index, record);
    held_bytes_ += encoded_size(record);
    held_.push_back({index, std::move(record)});
  }
  trim_window();
}

void Ledger::advance_clock(std::optional<std::int64_t> leader_unix_ms) {
  // Version 1 entries carry no stamp, and a stamp behind the clock (a leader
  // whose clock is late) leaves it: the clock never goes back.
  if (!leader_unix_ms || *leader_unix_ms <= clock_unix_ms_) return;
  // The first stamp sets it; after that, one entry moves it at most
  // clock_step_max_ms, so a leader's clock jump (or one bad stamp) ages the
  // window and the sessions by steps, not at once. Both are positive here:
  // no overflow.
  if (clock_unix_ms_ <= 0) {
    clock_unix_ms_ = *leader_unix_ms;
    return;
  }
  clock_unix_ms_ += std::min(*leader_unix_ms - clock_unix_ms_, limits_.clock_step_max_ms);
}

void Ledger::apply_cursor(std::uint64_t exported_through, ApplyResult& result) {
  // A stale exporter (an old leader's) may send a lower cursor: no-op.
  if (exported_through <= exported_through_) {
    trim_window();
    return;
  }
  exported_through_ = exported_through;
  while (!held_.empty() && held_.front().index <= exported_through) {
    const Record& record = held_.front().record;
    held_bytes_ -= encoded_size(record);
    window_.push_back({record.key, clock_unix_ms_, held_.front().index});
    held_.pop_front();
    ++result.records_exported;
    ++counters_.records_exported;
  }
  trim_window();
}

void Ledger::trim_window() {
  // Keys are in log order, and both their export times and indices ascend.
  const std::int64_t oldest_kept = minus_ms(clock_unix_ms_, limits_.exported_keys_age_ms);
  while (!window_.empty()) {
    const WindowKey& front = window_.front();
    const bool aged =
        front.exported_unix_ms < oldest_kept &&
        last_applied_ - std::min(last_applied_, front.index) >= limits_.exported_keys_min_entries;
    if (window_.size() <= limits_.exported_keys_max && !aged) break;
    known_.erase(front.key);
    window_.pop_front();
  }
}

std::int64_t Ledger::expiry_of(const Session& session) const {
  const std::int64_t interval_s =
      session.interim_interval_s != 0 ? session.interim_interval_s : limits_.session_default_interim_s;
  return plus_saturating(session.seen_unix_ms, interval_s * limits_.session_expiry_multiple * 1000);
}

void Ledger::expire_sessions() {
  // Every session whose deadline has come has an entry at or before it
  // (SessionSlot::expiry), so this closes exactly the sessions
  // expiry_of() puts at or before the clock, whatever the entries' history.
  auto& expiry = index_.expiry;
  while (!expiry.empty() && expiry.begin()->first <= clock_unix_ms_) {
    auto slot = index_.slots.find(expiry.begin()->second);
    RW_ASSERT(slot != index_.slots.end());
    const std::int64_t deadline = expiry_of(slot->second.session->second);
    if (deadline <= clock_unix_ms_) {
      close_session(slot);
      ++counters_.sessions_expired;
      continue;
    }
    // Records came since the entry was queued: it moves to the real deadline.
    requeue_expiry(slot->second, deadline);
  }
}

void Ledger::requeue_expiry(SessionSlot& slot, std::int64_t deadline) {
  auto node = index_.expiry.extract(slot.expiry);
  node.key() = deadline;
  // The end as the hint: constant time when it is the latest deadline (the
  // usual case), a walk of the tree otherwise (and after its equals).
  slot.expiry = index_.expiry.insert(index_.expiry.end(), std::move(node));
}

void Ledger::close_session(SlotIt slot) {
  const SessionIt session = slot->second.session;
  const Session& closing = session->second;
  sessions_bytes_ -= encoded_size(closing);
  if (!closing.user_name.empty()) {
    auto user = open_by_user_.find(std::string_view(closing.user_name));
    RW_ASSERT(user != open_by_user_.end() && user->second > 0);
    if (--user->second == 0) open_by_user_.erase(user);
  }
  if (limits_.session_expiry_multiple != 0) index_.expiry.erase(slot->second.expiry);
  // Out of its NAS's sessions: the last one takes its place.
  NasSessions& nas = *slot->second.nas;
  SessionSlot* last = nas.slots.back();
  nas.slots[slot->second.nas_position] = last;
  last->nas_position = slot->second.nas_position;
  nas.slots.pop_back();
  if (nas.slots.empty()) {
    auto client = index_.by_nas.find(std::string_view(closing.client));
    RW_ASSERT(client != index_.by_nas.end());
    client->second.erase(address_key(closing.nas_address));
    if (client->second.empty()) index_.by_nas.erase(client);
  } else if (nas.slots.size() < nas.slots.capacity() / 4 && nas.slots.capacity() > 64) {
    // A NAS that had many sessions and lost most gives the room back.
    nas.slots.shrink_to_fit();
  }
  index_.slots.erase(slot);
  sessions_.erase(session);
}

void Ledger::update_sessions(std::uint64_t index, const Record& record) {
  switch (record.status_type) {
    case status::kStart:
    case status::kInterimUpdate:
      break;
    case status::kStop:
      if (auto closed = index_.slots.find(record.session); closed != index_.slots.end())
        close_session(closed);
      return;
    case status::kAccountingOn:
    case status::kAccountingOff:
      close_nas_sessions(record);
      return;
    default:
      return;
  }
  // A record of a known session finds it by hashing its key: its cost does
  // not grow with the table (docs/accounting.md "Cost against the session table").
  auto slot = index_.slots.find(record.session);
  const bool opens = slot == index_.slots.end();
  SessionIt found;
  if (opens) {
    Session session;
    session.key = record.session;
    session.client = record.client;
    session.nas_address = nas_address(record);
    session.nas_identifier = find_text(record, radius::attr::kNasIdentifier);
    session.user_name = find_text(record, radius::attr::kUserName);
    session.acct_session_id = find_text(record, radius::attr::kAcctSessionId);
    session.calling_station_id = find_text(record, radius::attr::kCallingStationId);
    session.framed_ip_address = framed_ip_address(record);
    session.framed_ipv6_prefix = framed_ipv6_prefix(record);
    session.opened_index = index;
    session.started_unix_ms = record.event_unix_ms;
    if (record.status_type == status::kInterimUpdate) {
      // As FreeRADIUS's interim query does for a missing row: start = now - session time.
      session.started_unix_ms =
          minus_ms(session.started_unix_ms,
                   std::int64_t{find_u32(record, radius::attr::kAcctSessionTime).value_or(0)} * 1000);
    }
    if (sessions_.size() >= limits_.sessions_max ||
        encoded_size(session) >
            limits_.sessions_bytes_max - std::min(limits_.sessions_bytes_max, sessions_bytes_)) {
      ++counters_.sessions_untracked;
      return;
    }
    found = sessions_.emplace(record.session, std::move(session)).first;
  } else {
    found = slot->second.session;
  }
  Session& session = found->second;
  session.last_status_type = record.status_type;
  session.updated_index = index;
  session.updated_unix_ms = record.event_unix_ms;
  session.session_time_s = find_u32(record, radius::attr::kAcctSessionTime).value_or(0);
  session.input_octets = octets(record, radius::attr::kAcctInputOctets, radius::attr::kAcctInputGigawords);
  session.output_octets = octets(record, radius::attr::kAcctOutputOctets, radius::attr::kAcctOutputGigawords);
  session.interim_interval_s = find_u32(record, radius::attr::kAcctInterimInterval).value_or(0);
  session.seen_unix_ms = clock_unix_ms_;
  if (opens) {
    index_session(found);
    return;
  }
  // An update changes none of what the NAS index, the per-user counts and
  // the byte total are keyed on (the client, NAS and user texts are set when
  // the session opens). Its deadline only moves later, unless the record
  // shortened the interval: the expiry entry moves only then.
  if (limits_.session_expiry_multiple == 0) return;
  const std::int64_t deadline = expiry_of(session);
  if (deadline < slot->second.expiry->first) requeue_expiry(slot->second, deadline);
}

void Ledger::close_nas_sessions(const Record& record) {
  // RFC 2866 §5.1: Accounting-On/Off mean the NAS's sessions are over. The
  // NAS is the client plus the identity attributes the On/Off carries: its
  // address when it has one (else every address of the client), and its
  // NAS-Identifier when it has one. The NAS index makes this the sessions
  // of that client (and address), not a scan of every session.
  auto client = index_.by_nas.find(std::string_view(record.client));
  if (client == index_.by_nas.end()) return;
  const std::vector<std::uint8_t> address = nas_address(record);
  const auto identifier = record.find(radius::attr::kNasIdentifier);
  std::vector<SessionKey> closing;
  const auto collect = [&](const NasSessions& nas) {
    for (const SessionSlot* slot : nas.slots) {
      const Session& session = slot->session->second;
      if (identifier && as_chars(*identifier) != session.nas_identifier) continue;
      closing.push_back(session.key);
    }
  };
  if (!address.empty()) {
    auto nas = client->second.find(std::string_view(address_key(address)));
    if (nas == client->second.end()) return;
    collect(nas->second);
  } else {
    for (const auto& [key, nas] : client->second) collect(nas);
  }
  // Closing may erase the NAS's entry: the keys were taken first.
  for (const SessionKey& key : closing) {
    close_session(index_.slots.find(key));
    ++counters_.sessions_closed_by_nas;
  }
}

void Ledger::index_session(SessionIt session) {
  const Session& opened = session->second;
  sessions_bytes_ += encoded_size(opened);
  if (!opened.user_name.empty()) ++open_by_user_[opened.user_name];
  place_session(session);
}

void Ledger::place_session(SessionIt session) {
  const Session& opened = session->second;
  SessionSlot& slot = index_.slots.try_emplace(session->first).first->second;
  slot.session = session;
  NasByAddress& addresses =
      index_.by_nas.try_emplace(opened.client, 0, SeededHash{index_seed_}).first->second;
  slot.nas = &addresses[address_key(opened.nas_address)];
  slot.nas_position = slot.nas->slots.size();
  slot.nas->slots.push_back(&slot);
  if (limits_.session_expiry_multiple != 0) {
    slot.expiry = index_.expiry.emplace_hint(index_.expiry.end(), expiry_of(opened), session->first);
  }
}

void Ledger::rebuild_session_index() {
  SessionIndex fresh(index_seed_);
  fresh.slots.rehash(index_.slots.bucket_count());
  index_ = std::move(fresh);
  for (auto session = sessions_.begin(); session != sessions_.end(); ++session) place_session(session);
}

void Ledger::seed_indexes(std::uint64_t seed) {
  index_seed_ = seed;
  rebuild_session_index();
  decltype(open_by_user_) users(open_by_user_.bucket_count(), SeededHash{seed});
  users.insert(open_by_user_.begin(), open_by_user_.end());
  open_by_user_ = std::move(users);
  decltype(known_) keys(known_.bucket_count(), SeededHash{seed});
  keys.insert(known_.begin(), known_.end());
  known_ = std::move(keys);
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
