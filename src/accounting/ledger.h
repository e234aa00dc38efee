// The replicated accounting state (the Raft state machine): records held
// until exported, the de-duplication window, the live session table and the
// export cursor. Pure and deterministic (docs/style.md §6): apply() depends only
// on the ledger and the entry; snapshots are canonical bytes. Semantics in
// docs/accounting.md, layouts in docs/wire_formats.md, bounds in
// docs/limits.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "accounting/entry.h"
#include "accounting/record.h"
#include "base/bytes.h"
#include "base/result.h"

namespace rw::accounting {

// Bounds of the ledger. All but the held_* bounds shape replicated state and
// must be equal on every member, or their snapshots differ. The held_*
// bounds are enforced at submission through accepting(): apply() never
// refuses a committed entry. Defaults and what happens at each bound:
// docs/limits.md.
struct LedgerLimits {
  // Unexported records: at either bound accepting() turns false and the
  // member stops taking new submissions (it never drops a record). With the
  // session and window bounds they bound the snapshot, which libraft builds
  // on its loop thread (docs/consensus.md trap 8): the defaults keep a
  // snapshot at the bounds near 40 MB, well under the 300 ms election
  // timeout on the reference machine (docs/accounting.md, "Snapshot at the bounds").
  std::size_t held_records_max = 64'000;
  std::size_t held_bytes_max = std::size_t{16} << 20;
  // Live sessions, by count and by their encoded bytes (encoded_size): a
  // Start or Interim-Update of a new session past either bound is stored as
  // a record but not tracked (counted).
  std::size_t sessions_max = 1'000'000;
  std::size_t sessions_bytes_max = std::size_t{16} << 20;
  // The de-duplication window beyond held records: keys of exported records
  // are remembered while fewer than exported_keys_max are kept, and while
  // younger than exported_keys_age_ms by the log clock or fewer than
  // exported_keys_min_entries log indices behind the last applied entry.
  std::size_t exported_keys_max = 128'000;
  std::int64_t exported_keys_age_ms = 15 * 60 * 1000;
  std::uint64_t exported_keys_min_entries = 10'000;
  // The log clock follows the leaders' stamps, but one entry moves it
  // forward by at most this much, so one absurd stamp cannot age everything.
  std::int64_t clock_step_max_ms = 10'000;
  // A session with no record for session_expiry_multiple times its
  // Acct-Interim-Interval (session_default_interim_s when its records carry
  // none) by the log clock is closed. 0: sessions never expire.
  std::uint32_t session_expiry_multiple = 3;
  std::uint32_t session_default_interim_s = 3600;
};

// A record the ledger holds: unexported, with the log index of its entry.
struct HeldRecord {
  std::uint64_t index = 0;
  Record record;

  friend bool operator==(const HeldRecord&, const HeldRecord&) = default;
};

// One open session of the live session table.
struct Session {
  SessionKey key;
  std::string client;                     // NAS shortname
  std::vector<std::uint8_t> nas_address;  // NAS-IP-Address (4) or NAS-IPv6-Address (16) or empty
  std::string nas_identifier;             // NAS-Identifier, or empty
  std::string user_name;                  // User-Name, or empty
  std::string acct_session_id;            // Acct-Session-Id
  // What a Disconnect- or CoA-Request names the session by (RFC 5176 §3);
  // like the texts above, taken from the record that opens the session.
  std::string calling_station_id;                // Calling-Station-Id (the MAC), or empty
  std::vector<std::uint8_t> framed_ip_address;   // Framed-IP-Address (4), or empty
  std::vector<std::uint8_t> framed_ipv6_prefix;  // Framed-IPv6-Prefix value (RFC 3162 §2.3, 2-18), or empty
  std::uint32_t last_status_type = 0;            // Start or Interim-Update
  std::uint64_t opened_index = 0;                // log index of the record that opened it
  std::uint64_t updated_index = 0;               // log index of its latest record
  std::int64_t started_unix_ms = 0;      // event time of Start (Interim: event minus Acct-Session-Time)
  std::int64_t updated_unix_ms = 0;      // event time of its latest record
  std::uint32_t session_time_s = 0;      // Acct-Session-Time of its latest record
  std::uint64_t input_octets = 0;        // Acct-Input-Octets + 2^32 * Acct-Input-Gigawords (RFC 2869 §5.1)
  std::uint64_t output_octets = 0;       // Acct-Output-Octets + 2^32 * Acct-Output-Gigawords
  std::uint32_t interim_interval_s = 0;  // Acct-Interim-Interval of its latest record, 0 if none
  std::int64_t seen_unix_ms = 0;         // the log clock when its latest record was applied

  friend bool operator==(const Session&, const Session&) = default;
};

// Replicated counters: equal on members that applied the same entries.
struct LedgerCounters {
  std::uint64_t records_applied = 0;         // new records stored
  std::uint64_t records_duplicate = 0;       // records whose key was known: no-ops
  std::uint64_t records_exported = 0;        // records dropped by export cursors
  std::uint64_t entries_skipped = 0;         // undecodable entries (docs/consensus.md trap 7)
  std::uint64_t sessions_untracked = 0;      // new sessions past sessions_max
  std::uint64_t sessions_closed_by_nas = 0;  // closed by Accounting-On/Off
  std::uint64_t sessions_expired = 0;        // closed for lack of records (session_expiry_multiple)

  friend bool operator==(const LedgerCounters&, const LedgerCounters&) = default;
};

// What apply() did with one entry. The member acknowledges both new and
// duplicate keys: either way the event is committed.
struct ApplyResult {
  // The entry's type, or nothing when it was skipped.
  std::optional<EntryType> type;
  // Why the entry was skipped (undecodable, or a cursor not behind it).
  std::optional<EntryError> skipped;
  std::vector<RecordKey> new_keys;        // stored by this entry, in entry order
  std::vector<RecordKey> duplicate_keys;  // already known: nothing changed
  std::size_t records_exported = 0;       // dropped by an export cursor
};

// Why snapshot bytes were refused by restore().
enum class SnapshotError : std::uint8_t {
  kTruncated,           // ends inside a field
  kBadMagic,            // not "RWLS"
  kUnsupportedVersion,  // version byte is not 1, 2 or 3
  kBadChecksum,         // SHA-256 trailer does not match
  kReservedNotZero,     // reserved header bytes set
  kBadRecord,           // a held record does not decode
  kRecordOrder,         // held record indices not ascending, or outside (exported, applied]
  kDuplicateKey,        // one key held twice, or held and in the window
  kBadSession,          // a session does not decode
  kSessionOrder,        // sessions not strictly ascending by key
  kTrailingBytes,       // bytes between the last section and the trailer
  kWindowOrder,         // window keys not in log order, or past the export cursor
};
inline constexpr std::size_t kSnapshotErrorCount = 12;

// The bytes a session takes in a snapshot (docs/wire_formats.md
// "Snapshot"): what LedgerLimits::sessions_bytes_max counts.
[[nodiscard]] std::size_t encoded_size(const Session& session);
// Whether a Framed-IPv6-Prefix value is well formed (RFC 3162 §2.3):
// Reserved, Prefix-Length (0-128) and at least the prefix's octets, 2-18 in all.
[[nodiscard]] bool valid_framed_ipv6_prefix(Bytes value);
std::string_view to_string(SnapshotError error);

// A hash of record and session keys and of texts from NAS data, with a seed
// (Ledger::seed_indexes): with a fixed hash a NAS could choose keys or
// names that all fall in one bucket. The ledger's lookups only: nothing
// replicated depends on it.
struct SeededHash {
  std::uint64_t seed = 0;
  using is_transparent = void;
  std::size_t operator()(const Digest16& key) const noexcept;
  std::size_t operator()(std::string_view text) const noexcept;
};

// The state machine. Not thread-safe: the consensus layer owns it on its
// loop thread; readers (admin API) take copies there.
class Ledger {
 public:
  // `index_seed` seeds the hash of the indexes NAS data fills (see
  // seed_indexes); tests and the simulator leave it 0.
  explicit Ledger(LedgerLimits limits = {}, std::uint64_t index_seed = 0);

  // Applies the entry committed at `index`, in log order. Never fails: an
  // undecodable entry is counted and skipped identically on every member.
  // Requires: index > last_applied_index().
  ApplyResult apply(std::uint64_t index, Bytes entry);

  // Canonical bytes of the whole state (docs/wire_formats.md "Snapshot"):
  // equal ledgers give equal bytes.
  [[nodiscard]] std::vector<std::uint8_t> snapshot() const;
  // The same bytes appended to `out`, which keeps its capacity: the member
  // serialises every snapshot into one warm buffer (docs/consensus.md trap 8).
  void snapshot_into(std::vector<std::uint8_t>& out) const;
  // At least the size of snapshot() now (it reserves this much).
  [[nodiscard]] std::size_t snapshot_size_bound() const;
  // Rebuilds a ledger from snapshot bytes, checking everything; its indexes
  // are built once, with `index_seed`.
  [[nodiscard]] static Result<Ledger, SnapshotError> restore(Bytes snapshot, LedgerLimits limits = {},
                                                             std::uint64_t index_seed = 0);

  // Sizes the key index (every held and window key) once for the bounds,
  // with an eighth more for records committed past them, so that it never
  // rehashes on the apply path: a rehash relinks every key at once, and it
  // falls at the same log index on every member (docs/accounting.md "The
  // key index, sized once"). The member calls it on its ledger once built
  // or restored; ledgers built by the thousand (tests, fuzzers) need not.
  // It sizes the session index by key and the per-user counts the same
  // way, for as many sessions as the session bounds let in (sessions_max,
  // and sessions_bytes_max over the smallest encoded session).
  void reserve_key_index();
  // Seeds the hash of the indexes that NAS data fills (the key index, and
  // the sessions by key, by NAS and by user): the member draws the seed
  // from its CSPRNG at start, so that no NAS can know which bucket its
  // records or sessions fall in (docs/security.md "Hostile NAS data in the
  // member's indexes"), and passes it to the constructor and restore() so
  // that the indexes are built once. Unseeded (tests, the simulator) the
  // seed is 0. This rebuilds the indexes with a new seed; the ledger's
  // state and results do not change.
  void seed_indexes(std::uint64_t seed);
  // The buckets now of the key index, the session index by key and the
  // per-user counts (for tests).
  [[nodiscard]] std::size_t key_index_buckets() const { return known_.bucket_count(); }
  [[nodiscard]] std::size_t session_index_buckets() const { return index_.slots.bucket_count(); }
  [[nodiscard]] std::size_t user_index_buckets() const { return open_by_user_.bucket_count(); }

  // --- Admission (the member's submission side) ---
  // False when held records or bytes reached their bound: stop taking new
  // submissions until the exporter catches up.
  [[nodiscard]] bool accepting() const;
  [[nodiscard]] std::size_t headroom_records() const;
  [[nodiscard]] std::size_t headroom_bytes() const;
  // Whether a key is in the de-duplication window (held or recently exported).
  [[nodiscard]] bool knows(const RecordKey& key) const { return known_.contains(key); }

  // --- Accessors for the admin API and the exporter ---
  [[nodiscard]] std::uint64_t last_applied_index() const { return last_applied_; }
  [[nodiscard]] std::uint64_t exported_through() const { return exported_through_; }
  // Unexported records in log order.
  [[nodiscard]] const std::deque<HeldRecord>& records() const { return held_; }
  [[nodiscard]] std::size_t held_bytes() const { return held_bytes_; }
  // Open sessions ordered by key.
  [[nodiscard]] const std::map<SessionKey, Session>& sessions() const { return sessions_; }
  // Open sessions whose User-Name is exactly `user_name` (byte for byte):
  // what Simultaneous-Use counts (docs/authentication.md). Served from an
  // index derived from the session table, kept by apply() and rebuilt by
  // restore(); it is not part of the snapshot bytes. An empty name counts 0.
  [[nodiscard]] std::uint32_t open_sessions_of(std::string_view user_name) const;
  // Distinct User-Names with open sessions (the index's size, for tests and figures).
  [[nodiscard]] std::size_t users_with_sessions() const { return open_by_user_.size(); }
  [[nodiscard]] std::size_t window_keys() const { return window_.size(); }
  [[nodiscard]] std::size_t sessions_bytes() const { return sessions_bytes_; }
  // The log clock: the leaders' stamps, clamped (docs/accounting.md "The log clock").
  [[nodiscard]] std::int64_t clock_unix_ms() const { return clock_unix_ms_; }
  [[nodiscard]] const LedgerCounters& counters() const { return counters_; }
  [[nodiscard]] const LedgerLimits& limits() const { return limits_; }

  // Equal state: same snapshot bytes (limits are configuration, not state).
  friend bool operator==(const Ledger& a, const Ledger& b);

 private:
  struct WindowKey {
    RecordKey key;
    std::int64_t exported_unix_ms = 0;  // the log clock when it was exported
    std::uint64_t index = 0;            // the log index of its record's entry
  };
  struct NasSessions;
  // Where an open session is in the derived indexes.
  struct SessionSlot {
    std::map<SessionKey, Session>::iterator session;
    // Its entry in SessionIndex::expiry, queued at or before
    // expiry_of(session). An Interim-Update leaves it unless the deadline
    // moved earlier; expire_sessions() moves an entry found early to the
    // real deadline. Unset when sessions never expire.
    std::multimap<std::int64_t, SessionKey>::iterator expiry;
    NasSessions* nas = nullptr;    // the sessions of its NAS
    std::size_t nas_position = 0;  // its place in nas->slots
  };
  // The open sessions of one NAS (client and NAS address), in no order.
  struct NasSessions {
    std::vector<SessionSlot*> slots;
  };
  using NasByAddress = std::unordered_map<std::string, NasSessions, SeededHash, std::equal_to<>>;
  // The session indexes derived from sessions_ that point into its nodes
  // (never in a snapshot; docs/accounting.md "Cost against the session
  // table"). A moved ledger keeps them (the map's nodes move with it); a
  // copied one must not, so a copy starts stale and apply() rebuilds it from
  // its own table first.
  struct SessionIndex {
    SessionIndex() = default;
    explicit SessionIndex(std::uint64_t seed) : slots(0, SeededHash{seed}), by_nas(0, SeededHash{seed}) {}
    SessionIndex(const SessionIndex&) : stale(true) {}
    SessionIndex& operator=(const SessionIndex&) {
      slots.clear();
      by_nas.clear();
      expiry.clear();
      stale = true;
      return *this;
    }
    SessionIndex(SessionIndex&&) noexcept = default;
    SessionIndex& operator=(SessionIndex&&) noexcept = default;
    ~SessionIndex() = default;

    // Every open session by its key: what a record of a known session
    // needs, at a cost that does not grow with the table.
    std::unordered_map<SessionKey, SessionSlot, SeededHash> slots;
    // Client, then NAS address (its bytes): what an Accounting-On/Off closes.
    std::unordered_map<std::string, NasByAddress, SeededHash, std::equal_to<>> by_nas;
    // Queued deadline to key, earliest first, and in the order queued among
    // equal deadlines. Deadlines mostly arrive in ascending order (the log
    // clock only goes forward), so an entry is queued at the end in
    // constant time, and a slot keeps its entry's iterator to remove it.
    std::multimap<std::int64_t, SessionKey> expiry;
    bool stale = false;
  };
  using SessionIt = std::map<SessionKey, Session>::iterator;
  using SlotIt = std::unordered_map<SessionKey, SessionSlot, SeededHash>::iterator;

  void advance_clock(std::optional<std::int64_t> leader_unix_ms);
  void apply_records(std::uint64_t index, std::vector<Record>& records, ApplyResult& result);
  void apply_cursor(std::uint64_t exported_through, ApplyResult& result);
  void update_sessions(std::uint64_t index, const Record& record);
  void close_nas_sessions(const Record& record);
  void expire_sessions();
  void close_session(SlotIt slot);
  // Moves a session's expiry entry to `deadline`.
  void requeue_expiry(SessionSlot& slot, std::int64_t deadline);
  [[nodiscard]] std::int64_t expiry_of(const Session& session) const;
  // Keep the derived state (index_, open_by_user_, sessions_bytes_) equal
  // to what sessions_ gives: index_session() for a session just placed in
  // sessions_, close_session() to remove one.
  void index_session(SessionIt session);
  void place_session(SessionIt session);
  void rebuild_session_index();
  void trim_window();

  LedgerLimits limits_;
  std::uint64_t last_applied_ = 0;
  std::uint64_t exported_through_ = 0;
  std::int64_t clock_unix_ms_ = 0;
  std::deque<HeldRecord> held_;
  std::size_t held_bytes_ = 0;
  // Exported keys still remembered, oldest first (log order).
  std::deque<WindowKey> window_;
  // Every key held or in window_: membership only, never iterated.
  std::unordered_set<RecordKey, SeededHash> known_;
  std::map<SessionKey, Session> sessions_;
  std::uint64_t index_seed_ = 0;
  SessionIndex index_;
  // Derived from sessions_ too (never in a snapshot): open sessions per
  // non-empty User-Name, a name whose count reaches 0 erased; the sessions'
  // encoded bytes.
  std::unordered_map<std::string, std::uint32_t, SeededHash, std::equal_to<>> open_by_user_;
  std::size_t sessions_bytes_ = 0;
  LedgerCounters counters_;
};

}  // namespace rw::accounting
