// EapConversations: shards of the pure conversation table, each under a mutex.
#include "gateway/eap_conversations.h"

#include <algorithm>

#include "base/assert.h"

namespace rw::gateway {

EapConversations::EapConversations(EapTableOptions options, RandomSource& random)
    : codec_(options.gateway_id, random), idle_timeout_(options.idle_timeout) {
  build_shards(options);
}

EapConversations::EapConversations(EapTableOptions options, Bytes key)
    : codec_(options.gateway_id, key), idle_timeout_(options.idle_timeout) {
  build_shards(options);
}

void EapConversations::build_shards(const EapTableOptions& options) {
  RW_ASSERT(options.conversations_max >= 1 && options.conversations_max < (std::size_t{1} << kShardShift));
  capacity_ = options.conversations_max;
  const std::size_t count = std::min(kShardsMax, capacity_);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t share = capacity_ / count + (i < capacity_ % count ? 1 : 0);
    shards_.push_back(std::make_unique<Shard>(share, options.idle_timeout));
  }
}

Result<eap::StateBytes, EapRefusal> EapConversations::insert(
    Instant now, std::unique_ptr<eap::Conversation> conversation) {
  // Round robin over the shards, so that one busy worker does not fill one
  // shard while others stay empty; the next shards when that one is full.
  const std::uint32_t first = next_shard_.fetch_add(1, std::memory_order_relaxed);
  for (std::size_t i = 0; i < shards_.size(); ++i) {
    const auto index = static_cast<std::uint32_t>((first + i) % shards_.size());
    Shard& shard = *shards_[index];
    std::optional<eap::SlotRef> ref;
    {
      const std::lock_guard lock(shard.mutex);
      // A full shard leaves `conversation` here for the next one.
      ref = shard.table.insert(now, std::move(conversation));
    }
    if (ref) {
      started_.fetch_add(1, std::memory_order_relaxed);
      return codec_.mint(index << kShardShift | ref->slot, ref->generation);
    }
  }
  full_.fetch_add(1, std::memory_order_relaxed);
  return fail(EapRefusal::kFull);
}

Result<EapConversations::Held, EapRefusal> EapConversations::take(Instant now, Bytes state) {
  const auto refuse = [&](EapRefusal refusal) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return fail(refusal);
  };
  auto fields = codec_.verify(state);
  if (!fields) {
    return refuse(fields.error() == eap::StateError::kOtherGateway ? EapRefusal::kOtherGateway
                                                                   : EapRefusal::kInvalid);
  }
  const std::uint32_t shard_index = fields->slot >> kShardShift;
  // Only this process mints tags: a verified State names a shard it has.
  RW_ASSERT(shard_index < shards_.size());
  Shard& shard = *shards_[shard_index];
  const eap::SlotRef ref{.slot = fields->slot & ((1u << kShardShift) - 1), .generation = fields->generation};
  Result<std::unique_ptr<eap::Conversation>, eap::TakeError> taken = fail(eap::TakeError::kUnknown);
  {
    const std::lock_guard lock(shard.mutex);
    taken = shard.table.take(now, ref);
  }
  if (!taken) {
    switch (taken.error()) {
      case eap::TakeError::kBusy:
        return fail(EapRefusal::kBusy);
      case eap::TakeError::kExpired:
        return refuse(EapRefusal::kExpired);
      case eap::TakeError::kUnknown:
      case eap::TakeError::kCount:
        break;
    }
    return refuse(EapRefusal::kUnknown);
  }
  Held held{.conversation = std::move(*taken), .shard = shard_index, .ref = ref};
  std::copy(state.begin(), state.end(), held.state.begin());
  return held;
}

void EapConversations::put_back(Instant now, Held held) {
  RW_ASSERT(held.shard < shards_.size());
  Shard& shard = *shards_[held.shard];
  const std::lock_guard lock(shard.mutex);
  shard.table.put_back(now, held.ref, std::move(held.conversation));
}

void EapConversations::end(Held held) {
  RW_ASSERT(held.shard < shards_.size());
  Shard& shard = *shards_[held.shard];
  {
    const std::lock_guard lock(shard.mutex);
    shard.table.end(held.ref);
  }
  // The conversation (and its method's state) is freed here, outside the lock.
}

void EapConversations::expire(Instant now) {
  for (const auto& shard : shards_) {
    const std::lock_guard lock(shard->mutex);
    (void)shard->table.expire(now);
  }
}

EapFigures EapConversations::figures() const {
  EapFigures figures{.started = started_.load(std::memory_order_relaxed),
                     .refused = refused_.load(std::memory_order_relaxed),
                     .full = full_.load(std::memory_order_relaxed)};
  for (const auto& shard : shards_) {
    const std::lock_guard lock(shard->mutex);
    figures.active += shard->table.size();
    figures.expired += shard->table.expired_total();
  }
  return figures;
}

}  // namespace rw::gateway
