// Tests of TicketSlots: tickets name one use of one slot of one worker.
#include "gateway/ticket_slots.h"

#include <gtest/gtest.h>

#include <vector>

namespace rw::gateway {
namespace {

TEST(TicketSlots, AnAnswerFindsItsUseAndNoOther) {
  TicketSlots<int> slots;
  slots.reset(3, 2);
  const Ticket first = slots.next_ticket();
  int& a = slots.acquire();
  a = 10;
  EXPECT_EQ(ticket_worker(first), 3);
  EXPECT_EQ(slots.find(first), &a);
  EXPECT_EQ(slots.find(make_ticket(4, ticket_slot(first), ticket_generation(first))),
            nullptr);                                    // other worker
  EXPECT_EQ(slots.find(make_ticket(3, 7, 0)), nullptr);  // out of range
  EXPECT_EQ(slots.find(slots.next_ticket()), nullptr);   // not in use
  slots.release(a);
  EXPECT_EQ(slots.find(first), nullptr);  // stale: that use ended
  const Ticket again = slots.next_ticket();
  EXPECT_EQ(ticket_slot(again), ticket_slot(first));  // the freed slot comes back first
  EXPECT_NE(ticket_generation(again), ticket_generation(first));
  int& b = slots.acquire();
  EXPECT_EQ(b, 10);  // the value is reused as its last use left it
  EXPECT_EQ(slots.find(again), &b);
  EXPECT_EQ(slots.find(first), nullptr);
}

TEST(TicketSlots, FillsUpAndVisitsWhatIsUsedWhileReleasing) {
  TicketSlots<int> slots;
  slots.reset(0, 3);
  for (int i = 0; i < 3; ++i) slots.acquire() = i;
  EXPECT_TRUE(slots.full());
  EXPECT_EQ(slots.used(), 3u);
  std::vector<int> seen;
  slots.for_each_used([&](int& value) {
    seen.push_back(value);
    if (value != 1) slots.release(value);
  });
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(slots.used(), 1u);
  EXPECT_FALSE(slots.full());
  seen.clear();
  slots.for_each_used([&](int& value) { seen.push_back(value); });
  EXPECT_EQ(seen, (std::vector<int>{1}));
}

}  // namespace
}  // namespace rw::gateway
