// Duplicate detection for requests (RFC 5080 §2.2.2): a retransmission — the
// same source address and port, Identifier and Request Authenticator — gets
// the identical reply from the cache, and a duplicate of a request still in
// progress is not processed twice. One cache per worker; not thread-safe.
//
// Memory is fixed at construction: answered entries and their reply bytes
// live in two rings that advance together in completion order, so expiry and
// eviction are FIFO and nothing is allocated per request.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/bytes.h"
#include "base/time.h"
#include "gateway/datagram.h"

namespace rw::gateway {

// What identifies a request for duplicate detection.
struct RequestKey {
  Endpoint from;
  Listener listener = Listener::kAuthentication;
  std::uint8_t identifier = 0;
  std::array<std::uint8_t, 16> authenticator{};

  friend bool operator==(const RequestKey&, const RequestKey&) = default;
};

class DuplicateCache {
 public:
  struct Options {
    Duration window = Duration::seconds(5);  // How long an answered reply is kept.
    std::size_t answered_max = 65536;        // Answered entries kept at most.
    std::size_t reply_bytes_max = 8 << 20;   // Bytes of cached replies at most.
    std::size_t in_progress_max = 16384;     // Requests in progress at most.
    std::uint64_t hash_seed = 0;             // From a CSPRNG in production.
  };

  enum class State : std::uint8_t {
    kNew,         // Not seen: now recorded as in progress; process it.
    kInProgress,  // A duplicate of a request still being processed: drop it.
    kAnswered,    // A retransmission: send `reply` again.
    kFull,        // Too many requests in progress: drop it (the NAS retries).
  };

  struct Lookup {
    State state = State::kNew;
    Bytes reply;  // For kAnswered; valid until the next non-const call.
  };

  struct Counters {
    std::uint64_t answered_hits = 0;
    std::uint64_t in_progress_hits = 0;
    std::uint64_t full_drops = 0;
    std::uint64_t evicted_early = 0;    // Answered entries evicted before their window ended.
    std::uint64_t reply_too_large = 0;  // Replies larger than the byte ring; not cached.
  };

  explicit DuplicateCache(const Options& options);

  // Looks `key` up at `now`; a new key is recorded as in progress.
  [[nodiscard]] Lookup begin(Instant now, const RequestKey& key);

  // Records the reply of an in-progress request; a retransmission within the
  // window gets exactly these bytes. Does nothing for an unknown key.
  void complete(Instant now, const RequestKey& key, Bytes reply);

  // Forgets an in-progress request that was dropped without a reply, so that
  // a retransmission is processed afresh.
  void abandon(const RequestKey& key);

  // Removes answered entries older than the window. Bounded by the number of
  // expired entries.
  void expire(Instant now);

  [[nodiscard]] std::size_t answered_size() const { return answered_head_ - answered_tail_; }
  [[nodiscard]] std::size_t in_progress_size() const { return in_progress_count_; }
  [[nodiscard]] const Counters& counters() const { return counters_; }

 private:
  struct Answered {
    RequestKey key;
    Instant completed_at;
    std::uint64_t reply_start = 0;  // Position in the byte ring (monotonic).
    std::uint32_t reply_length = 0;
  };
  struct InProgress {
    RequestKey key;
    std::uint32_t next_free = 0;
    bool used = false;
  };
  // An index slot: 0 is empty; otherwise a tagged reference.
  using Ref = std::uint64_t;
  static constexpr Ref kEmpty = 0;
  static constexpr Ref kInProgressTag = Ref{1} << 63;

  [[nodiscard]] std::uint64_t hash(const RequestKey& key) const;
  [[nodiscard]] const RequestKey& key_of(Ref ref) const;
  // Index slot or npos. `key_hash` is hash(key), passed when the caller
  // needs it twice (a lookup, then an insert).
  [[nodiscard]] std::size_t find_slot(const RequestKey& key) const { return find_slot(key, hash(key)); }
  [[nodiscard]] std::size_t find_slot(const RequestKey& key, std::uint64_t key_hash) const;
  void insert_ref(std::uint64_t key_hash, Ref ref);
  void erase_slot(std::size_t slot);
  // Frees the in-progress entry `slot` refers to.
  void abandon_slot(std::size_t slot);
  void evict_oldest_answered();

  Options options_;
  std::vector<Ref> index_;  // Open addressing, linear probing, power-of-two size.
  std::size_t index_mask_ = 0;
  std::vector<Answered> answered_;  // Ring by sequence number.
  std::uint64_t answered_head_ = 0;
  std::uint64_t answered_tail_ = 0;
  std::vector<std::uint8_t> reply_bytes_;  // Ring by monotonic byte position.
  std::uint64_t bytes_head_ = 0;
  std::uint64_t bytes_tail_ = 0;
  std::vector<InProgress> in_progress_;
  std::uint32_t free_in_progress_ = 0;
  std::size_t in_progress_count_ = 0;
  Counters counters_;
};

}  // namespace rw::gateway
