// DuplicateCache: RFC 5080 §2.2.2 duplicate detection with fixed memory.
#include "gateway/duplicate_cache.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "base/assert.h"

namespace rw::gateway {
namespace {

constexpr std::size_t kNotFound = static_cast<std::size_t>(-1);

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdULL;
  return h ^ (h >> 32);
}

std::uint64_t load_u64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

DuplicateCache::DuplicateCache(const Options& options) : options_(options) {
  RW_ASSERT(options.answered_max > 0 && options.in_progress_max > 0);
  RW_ASSERT(options.in_progress_max < (std::size_t{1} << 31));
  const std::size_t refs = options.answered_max + options.in_progress_max;
  const std::size_t index_size = std::bit_ceil(refs * 2);
  index_.assign(index_size, kEmpty);
  index_mask_ = index_size - 1;
  answered_.resize(options.answered_max);
  reply_bytes_.resize(options.reply_bytes_max);
  in_progress_.resize(options.in_progress_max);
  for (std::uint32_t i = 0; i < in_progress_.size(); ++i) in_progress_[i].next_free = i + 1;
  free_in_progress_ = 0;
}

std::uint64_t DuplicateCache::hash(const RequestKey& key) const {
  std::uint64_t h = options_.hash_seed;
  h = mix(h, load_u64(key.from.address.data()));
  h = mix(h, load_u64(key.from.address.data() + 8));
  h = mix(h, std::uint64_t{key.from.port} << 16 | std::uint64_t{key.identifier} << 8 |
                 std::uint64_t{key.from.is_v6} << 1 | static_cast<std::uint64_t>(key.listener));
  h = mix(h, load_u64(key.authenticator.data()));
  h = mix(h, load_u64(key.authenticator.data() + 8));
  return h;
}

const RequestKey& DuplicateCache::key_of(Ref ref) const {
  if (ref & kInProgressTag) return in_progress_[static_cast<std::size_t>(ref & ~kInProgressTag)].key;
  // Answered references store sequence + 1 so that 0 stays "empty".
  return answered_[static_cast<std::size_t>((ref - 1) % answered_.size())].key;
}

std::size_t DuplicateCache::find_slot(const RequestKey& key, std::uint64_t key_hash) const {
  for (std::size_t slot = key_hash & index_mask_;; slot = (slot + 1) & index_mask_) {
    const Ref ref = index_[slot];
    if (ref == kEmpty) return kNotFound;
    if (key_of(ref) == key) return slot;
  }
}

void DuplicateCache::insert_ref(std::uint64_t key_hash, Ref ref) {
  std::size_t slot = key_hash & index_mask_;
  while (index_[slot] != kEmpty) slot = (slot + 1) & index_mask_;
  index_[slot] = ref;
}

// Backward-shift deletion keeps linear probing free of tombstones.
void DuplicateCache::erase_slot(std::size_t slot) {
  std::size_t hole = slot;
  for (std::size_t next = (hole + 1) & index_mask_; index_[next] != kEmpty; next = (next + 1) & index_mask_) {
    const std::size_t home = hash(key_of(index_[next])) & index_mask_;
    // Move `next` into the hole unless its home lies cyclically in (hole, next].
    const bool home_after_hole = ((next - home) & index_mask_) < ((next - hole) & index_mask_);
    if (!home_after_hole) {
      index_[hole] = index_[next];
      hole = next;
    }
  }
  index_[hole] = kEmpty;
}

void DuplicateCache::evict_oldest_answered() {
  RW_ASSERT(answered_tail_ < answered_head_);
  const Answered& oldest = answered_[answered_tail_ % answered_.size()];
  const std::size_t slot = find_slot(oldest.key);
  RW_ASSERT(slot != kNotFound);
  erase_slot(slot);
  bytes_tail_ = oldest.reply_start + oldest.reply_length;
  ++answered_tail_;
}

DuplicateCache::Lookup DuplicateCache::begin(Instant now, const RequestKey& key) {
  expire(now);
  const std::uint64_t key_hash = hash(key);
  const std::size_t slot = find_slot(key, key_hash);
  if (slot != kNotFound) {
    const Ref ref = index_[slot];
    if (ref & kInProgressTag) {
      ++counters_.in_progress_hits;
      return {State::kInProgress, {}};
    }
    const Answered& entry = answered_[static_cast<std::size_t>((ref - 1) % answered_.size())];
    ++counters_.answered_hits;
    const std::size_t start = static_cast<std::size_t>(entry.reply_start % reply_bytes_.size());
    return {State::kAnswered, Bytes(reply_bytes_.data() + start, entry.reply_length)};
  }
  if (in_progress_count_ == in_progress_.size()) {
    ++counters_.full_drops;
    return {State::kFull, {}};
  }
  const std::uint32_t index = free_in_progress_;
  InProgress& pending = in_progress_[index];
  free_in_progress_ = pending.next_free;
  pending.key = key;
  pending.used = true;
  ++in_progress_count_;
  insert_ref(key_hash, kInProgressTag | index);
  return {State::kNew, {}};
}

void DuplicateCache::abandon(const RequestKey& key) {
  const std::size_t slot = find_slot(key);
  if (slot == kNotFound || !(index_[slot] & kInProgressTag)) return;
  abandon_slot(slot);
}

void DuplicateCache::abandon_slot(std::size_t slot) {
  const auto index = static_cast<std::uint32_t>(index_[slot] & ~kInProgressTag);
  erase_slot(slot);
  in_progress_[index].used = false;
  in_progress_[index].next_free = free_in_progress_;
  free_in_progress_ = index;
  --in_progress_count_;
}

void DuplicateCache::complete(Instant now, const RequestKey& key, Bytes reply) {
  const std::uint64_t key_hash = hash(key);
  const std::size_t slot = find_slot(key, key_hash);
  if (slot == kNotFound || !(index_[slot] & kInProgressTag)) return;
  abandon_slot(slot);
  const std::size_t capacity = reply_bytes_.size();
  if (reply.size() > capacity) {
    ++counters_.reply_too_large;
    return;
  }
  // A reply never wraps around the end of the byte ring: skip to its start.
  std::uint64_t start = bytes_head_;
  if (start % capacity + reply.size() > capacity) start += capacity - start % capacity;
  while (answered_tail_ < answered_head_ && (answered_head_ - answered_tail_ == answered_.size() ||
                                             start + reply.size() - bytes_tail_ > capacity)) {
    evict_oldest_answered();
    ++counters_.evicted_early;
  }
  if (answered_tail_ == answered_head_) bytes_tail_ = start;
  if (!reply.empty()) std::memcpy(reply_bytes_.data() + start % capacity, reply.data(), reply.size());
  bytes_head_ = start + reply.size();
  const std::uint64_t sequence = answered_head_++;
  answered_[sequence % answered_.size()] = {key, now, start, static_cast<std::uint32_t>(reply.size())};
  insert_ref(key_hash, sequence + 1);
}

void DuplicateCache::expire(Instant now) {
  while (answered_tail_ < answered_head_ &&
         now - answered_[answered_tail_ % answered_.size()].completed_at >= options_.window) {
    evict_oldest_answered();
  }
}

}  // namespace rw::gateway
