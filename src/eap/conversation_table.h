// The table of EAP conversations between round trips: a fixed number of
// slots, each with a generation that changes whenever its conversation ends,
// and idle expiry in least-recently-used order (RFC 3579 §2.6.1 asks that a
// State not outlive its conversation). A conversation is taken out while a
// request works on it and put back (or ended) after, so that the work runs
// outside whatever lock the caller holds. Pure and single-threaded: the
// gateway shards it and puts each shard under a mutex
// (gateway/eap_conversations.h). O(1) per operation; allocates only at
// construction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/time.h"
#include "eap/conversation.h"

namespace rw::eap {

// Where a conversation sits: the slot and which use of it.
struct SlotRef {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;

  friend bool operator==(const SlotRef&, const SlotRef&) = default;
};

// Why take() found no conversation to hand over.
enum class TakeError : std::uint8_t {
  kUnknown,  // No such slot, or the slot's conversation ended, expired or was replaced.
  kExpired,  // The conversation was idle past the timeout: it ends now.
  kBusy,     // Another request works on it now.
  kCount,
};
[[nodiscard]] std::string_view to_string(TakeError error);

class ConversationTable {
 public:
  // Requires: 1 <= capacity < 2^24, idle_timeout > 0.
  ConversationTable(std::size_t capacity, Duration idle_timeout);

  // Holds `conversation` from `now` on. Expires idle ones first; nothing
  // when every slot is still in use, and `conversation` is then left to the
  // caller (who refuses it: existing ones are never evicted for it).
  [[nodiscard]] std::optional<SlotRef> insert(Instant now, std::unique_ptr<Conversation>&& conversation);

  // Hands over the conversation `ref` names, which then counts as busy until
  // put_back() or end(). One idle past its timeout at `now` is expired
  // instead (kExpired).
  [[nodiscard]] Result<std::unique_ptr<Conversation>, TakeError> take(Instant now, SlotRef ref);

  // Returns a taken conversation; its idle time starts again at `now`.
  // Requires: `ref` was taken and not yet put back or ended.
  void put_back(Instant now, SlotRef ref, std::unique_ptr<Conversation> conversation);

  // Ends a taken conversation: the slot is free and its generation moves on,
  // so `ref` (and its State) names nothing any more. Requires: as put_back.
  void end(SlotRef ref);

  // Ends every conversation idle for idle_timeout or more at `now` (taken
  // ones are not idle); returns how many.
  std::size_t expire(Instant now);

  // Conversations held, taken ones included.
  [[nodiscard]] std::size_t size() const { return used_; }
  // Conversations ended by expiry since construction, by expire(), insert()
  // or take().
  [[nodiscard]] std::uint64_t expired_total() const { return expired_total_; }
  [[nodiscard]] std::size_t capacity() const { return slots_.size(); }
  [[nodiscard]] Duration idle_timeout() const { return idle_timeout_; }

 private:
  static constexpr std::uint32_t kNone = 0xFFFFFFFF;

  struct Slot {
    std::unique_ptr<Conversation> conversation;  // Null while free or taken.
    std::uint32_t generation = 0;
    bool used = false;
    bool taken = false;
    Instant last_active{};
    std::uint32_t prev = kNone;  // The idle list (least recently used first), or the free list.
    std::uint32_t next = kNone;
  };

  void unlink_idle(std::uint32_t index);
  void append_idle(std::uint32_t index);
  void release(std::uint32_t index);

  std::vector<Slot> slots_;
  Duration idle_timeout_;
  std::size_t used_ = 0;
  std::uint64_t expired_total_ = 0;
  std::uint32_t free_ = kNone;  // Singly linked through `next`.
  std::uint32_t idle_head_ = kNone;
  std::uint32_t idle_tail_ = kNone;
};

}  // namespace rw::eap
