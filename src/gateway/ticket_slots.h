// TicketSlots: a fixed table of requests waiting for an answer from another
// thread, each named by a Ticket (worker, slot, generation). A slot's
// generation moves on when it is released, so an answer for an earlier use
// of the slot is recognised as stale. The request handler's one pending
// table (gateway/pending_request.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/assert.h"
#include "gateway/datagram.h"

namespace rw::gateway {

template <typename T>
class TicketSlots {
 public:
  // `size` free slots (at most 65536: a Ticket's slot is 16 bits) of
  // `worker`'s handler. Values are default-constructed once and reused: a
  // value's buffers keep their capacity from one use to the next.
  void reset(std::uint16_t worker, std::size_t size) {
    RW_ASSERT(size <= 65536);
    worker_ = worker;
    values_.assign(size, T{});
    slots_.assign(size, Slot{});
    for (std::size_t i = 0; i < size; ++i) slots_[i].next_free = static_cast<std::uint32_t>(i + 1);
    free_ = 0;
    used_ = 0;
  }

  [[nodiscard]] bool full() const { return free_ >= slots_.size(); }
  [[nodiscard]] std::size_t used() const { return used_; }

  // The ticket the next acquire() will hand out; the table must not be full.
  [[nodiscard]] Ticket next_ticket() const {
    RW_ASSERT(!full());
    return make_ticket(worker_, static_cast<std::uint16_t>(free_), slots_[free_].generation);
  }
  // Takes the slot next_ticket() named; its value is as its last release left it.
  T& acquire() {
    RW_ASSERT(!full());
    const std::uint32_t index = free_;
    Slot& slot = slots_[index];
    free_ = slot.next_free;
    slot.used = true;
    ++used_;
    return values_[index];
  }
  // The value a ticket names while that use lasts; null when the ticket is
  // another worker's, out of range, or of a use already released.
  [[nodiscard]] T* find(Ticket ticket) {
    const std::size_t index = ticket_slot(ticket);
    if (ticket_worker(ticket) != worker_ || index >= slots_.size()) return nullptr;
    const Slot& slot = slots_[index];
    if (!slot.used || slot.generation != ticket_generation(ticket)) return nullptr;
    return &values_[index];
  }
  // The ticket of the use `value` (a reference from acquire, find or
  // for_each_used) is in now.
  [[nodiscard]] Ticket ticket_of(const T& value) const {
    const auto index = static_cast<std::size_t>(&value - values_.data());
    RW_ASSERT(index < slots_.size() && slots_[index].used);
    return make_ticket(worker_, static_cast<std::uint16_t>(index), slots_[index].generation);
  }
  // Frees the slot of `value` (a reference from acquire, find or
  // for_each_used); answers still on their way for this use are now stale.
  void release(T& value) {
    const auto index = static_cast<std::size_t>(&value - values_.data());
    RW_ASSERT(index < slots_.size() && slots_[index].used);
    Slot& slot = slots_[index];
    slot.used = false;
    ++slot.generation;
    slot.next_free = free_;
    free_ = static_cast<std::uint32_t>(index);
    --used_;
  }
  // Calls f(value) for each slot in use; f may release it. Bounded by the
  // table's size.
  template <typename F>
  void for_each_used(F f) {
    if (used_ == 0) return;
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].used) f(values_[i]);
    }
  }

 private:
  struct Slot {
    std::uint32_t generation = 0;
    std::uint32_t next_free = 0;
    bool used = false;
  };
  std::uint16_t worker_ = 0;
  std::vector<T> values_;
  std::vector<Slot> slots_;
  std::uint32_t free_ = 0;
  std::size_t used_ = 0;
};

}  // namespace rw::gateway
