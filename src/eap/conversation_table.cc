// ConversationTable: slots, generations, and the least-recently-used idle list.
#include "eap/conversation_table.h"

#include "base/assert.h"

namespace rw::eap {

std::string_view to_string(TakeError error) {
  switch (error) {
    case TakeError::kUnknown:
      return "unknown";
    case TakeError::kExpired:
      return "expired";
    case TakeError::kBusy:
      return "busy";
    case TakeError::kCount:
      break;
  }
  return "unknown";
}

ConversationTable::ConversationTable(std::size_t capacity, Duration idle_timeout)
    : slots_(capacity), idle_timeout_(idle_timeout) {
  RW_ASSERT(capacity >= 1 && capacity < (std::size_t{1} << 24));
  RW_ASSERT(idle_timeout.ns > 0);
  for (std::size_t i = capacity; i-- > 0;) {
    slots_[i].next = free_;
    free_ = static_cast<std::uint32_t>(i);
  }
}

void ConversationTable::unlink_idle(std::uint32_t index) {
  Slot& slot = slots_[index];
  (slot.prev == kNone ? idle_head_ : slots_[slot.prev].next) = slot.next;
  (slot.next == kNone ? idle_tail_ : slots_[slot.next].prev) = slot.prev;
  slot.prev = slot.next = kNone;
}

void ConversationTable::append_idle(std::uint32_t index) {
  Slot& slot = slots_[index];
  slot.prev = idle_tail_;
  slot.next = kNone;
  (idle_tail_ == kNone ? idle_head_ : slots_[idle_tail_].next) = index;
  idle_tail_ = index;
}

void ConversationTable::release(std::uint32_t index) {
  Slot& slot = slots_[index];
  slot.conversation.reset();
  slot.used = false;
  slot.taken = false;
  ++slot.generation;  // Every State minted for the ended use now names nothing.
  slot.prev = kNone;
  slot.next = free_;
  free_ = index;
  --used_;
}

std::optional<SlotRef> ConversationTable::insert(Instant now, std::unique_ptr<Conversation>&& conversation) {
  RW_ASSERT(conversation != nullptr);
  if (free_ == kNone) expire(now);
  if (free_ == kNone) return std::nullopt;
  const std::uint32_t index = free_;
  Slot& slot = slots_[index];
  free_ = slot.next;
  slot.conversation = std::move(conversation);
  slot.used = true;
  slot.taken = false;
  slot.last_active = now;
  append_idle(index);
  ++used_;
  return SlotRef{.slot = index, .generation = slot.generation};
}

Result<std::unique_ptr<Conversation>, TakeError> ConversationTable::take(Instant now, SlotRef ref) {
  if (ref.slot >= slots_.size()) return fail(TakeError::kUnknown);
  Slot& slot = slots_[ref.slot];
  if (!slot.used || slot.generation != ref.generation) return fail(TakeError::kUnknown);
  if (slot.taken) return fail(TakeError::kBusy);
  if (now - slot.last_active >= idle_timeout_) {
    unlink_idle(ref.slot);
    release(ref.slot);
    ++expired_total_;
    return fail(TakeError::kExpired);
  }
  unlink_idle(ref.slot);
  slot.taken = true;
  return std::move(slot.conversation);
}

void ConversationTable::put_back(Instant now, SlotRef ref, std::unique_ptr<Conversation> conversation) {
  RW_ASSERT(ref.slot < slots_.size() && conversation != nullptr);
  Slot& slot = slots_[ref.slot];
  RW_ASSERT(slot.used && slot.taken && slot.generation == ref.generation);
  slot.conversation = std::move(conversation);
  slot.taken = false;
  slot.last_active = now;
  append_idle(ref.slot);
}

void ConversationTable::end(SlotRef ref) {
  RW_ASSERT(ref.slot < slots_.size());
  Slot& slot = slots_[ref.slot];
  RW_ASSERT(slot.used && slot.taken && slot.generation == ref.generation);
  release(ref.slot);
}

std::size_t ConversationTable::expire(Instant now) {
  std::size_t expired = 0;
  while (idle_head_ != kNone && now - slots_[idle_head_].last_active >= idle_timeout_) {
    const std::uint32_t index = idle_head_;
    unlink_idle(index);
    release(index);
    ++expired;
  }
  expired_total_ += expired;
  return expired;
}

}  // namespace rw::eap
