#include "eap/conversation_table.h"

#include <gtest/gtest.h>

namespace rw::eap {
namespace {

const Instant kStart{1'000'000'000};
const Duration kIdle = Duration::seconds(30);

std::unique_ptr<Conversation> conversation(std::string owner = "nas") {
  return std::make_unique<Conversation>(ConversationOptions{}, std::move(owner));
}

TEST(ConversationTable, TakeHandsOverAndPutBackReturns) {
  ConversationTable table(4, kIdle);
  auto ref = table.insert(kStart, conversation("a"));
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(table.size(), 1u);
  auto taken = table.take(kStart, *ref);
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ((*taken)->owner(), "a");
  // Busy while taken: a second request for it (another worker) waits its turn.
  auto again = table.take(kStart, *ref);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error(), TakeError::kBusy);
  table.put_back(kStart, *ref, std::move(*taken));
  EXPECT_TRUE(table.take(kStart, *ref).has_value());
}

TEST(ConversationTable, RefusesTheStateOfAnEndedConversation) {
  ConversationTable table(1, kIdle);
  auto ref = table.insert(kStart, conversation());
  auto taken = table.take(kStart, *ref);
  ASSERT_TRUE(taken.has_value());
  table.end(*ref);
  EXPECT_EQ(table.size(), 0u);
  // Replayed after the end, and after the slot was used again.
  EXPECT_EQ(table.take(kStart, *ref).error(), TakeError::kUnknown);
  auto reused = table.insert(kStart, conversation());
  ASSERT_TRUE(reused.has_value());
  EXPECT_EQ(reused->slot, ref->slot);
  EXPECT_NE(reused->generation, ref->generation);
  EXPECT_EQ(table.take(kStart, *ref).error(), TakeError::kUnknown);
  EXPECT_TRUE(table.take(kStart, *reused).has_value());
}

TEST(ConversationTable, RefusesSlotsOutOfRange) {
  ConversationTable table(2, kIdle);
  EXPECT_EQ(table.take(kStart, SlotRef{.slot = 2}).error(), TakeError::kUnknown);
  EXPECT_EQ(table.take(kStart, SlotRef{.slot = 0xFFFFFFFF}).error(), TakeError::kUnknown);
  EXPECT_EQ(table.take(kStart, SlotRef{.slot = 0}).error(), TakeError::kUnknown);
}

TEST(ConversationTable, RefusesNewConversationsAtTheBoundWithoutEvicting) {
  ConversationTable table(3, kIdle);
  std::vector<SlotRef> refs;
  for (int i = 0; i < 3; ++i) refs.push_back(*table.insert(kStart, conversation()));
  auto refused = conversation("d");
  EXPECT_FALSE(table.insert(kStart + Duration::seconds(29), std::move(refused)).has_value());
  ASSERT_NE(refused, nullptr) << "a refused conversation stays with the caller";
  EXPECT_EQ(refused->owner(), "d");
  EXPECT_EQ(table.size(), 3u);
  for (const SlotRef& ref : refs) {
    auto taken = table.take(kStart + Duration::seconds(29), ref);
    ASSERT_TRUE(taken.has_value());
    table.put_back(kStart + Duration::seconds(29), ref, std::move(*taken));
  }
}

TEST(ConversationTable, ExpiresIdleConversationsInOrder) {
  ConversationTable table(4, kIdle);
  const SlotRef first = *table.insert(kStart, conversation());
  const SlotRef second = *table.insert(kStart + Duration::seconds(10), conversation());
  const SlotRef third = *table.insert(kStart + Duration::seconds(20), conversation());
  // Touching the first makes it the most recently used.
  auto taken = table.take(kStart + Duration::seconds(25), first);
  table.put_back(kStart + Duration::seconds(25), first, std::move(*taken));

  EXPECT_EQ(table.expire(kStart + Duration::seconds(39)), 0u);
  EXPECT_EQ(table.expire(kStart + Duration::seconds(40)), 1u);  // second
  EXPECT_EQ(table.take(kStart + Duration::seconds(40), second).error(), TakeError::kUnknown);
  EXPECT_EQ(table.expire(kStart + Duration::seconds(50)), 1u);  // third
  EXPECT_EQ(table.expire(kStart + Duration::seconds(54)), 0u);
  EXPECT_EQ(table.expire(kStart + Duration::seconds(55)), 1u);  // first
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.expired_total(), 3u);
  (void)third;
}

TEST(ConversationTable, TakeExpiresAnIdleConversation) {
  ConversationTable table(2, kIdle);
  const SlotRef ref = *table.insert(kStart, conversation());
  auto expired = table.take(kStart + kIdle, ref);
  ASSERT_FALSE(expired.has_value());
  EXPECT_EQ(expired.error(), TakeError::kExpired);
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.expired_total(), 1u);
  EXPECT_EQ(table.take(kStart + kIdle, ref).error(), TakeError::kUnknown);
}

TEST(ConversationTable, ATakenConversationDoesNotExpire) {
  ConversationTable table(1, kIdle);
  const SlotRef ref = *table.insert(kStart, conversation());
  auto taken = table.take(kStart, ref);
  EXPECT_EQ(table.expire(kStart + Duration::seconds(300)), 0u);
  table.put_back(kStart + Duration::seconds(300), ref, std::move(*taken));
  EXPECT_EQ(table.expire(kStart + Duration::seconds(329)), 0u);
  EXPECT_EQ(table.expire(kStart + Duration::seconds(330)), 1u);
}

TEST(ConversationTable, InsertAtTheBoundFirstExpiresIdleOnes) {
  ConversationTable table(2, kIdle);
  (void)*table.insert(kStart, conversation());
  const SlotRef kept = *table.insert(kStart + Duration::seconds(20), conversation());
  EXPECT_TRUE(table.insert(kStart + Duration::seconds(30), conversation()).has_value());
  EXPECT_EQ(table.size(), 2u);
  EXPECT_EQ(table.expired_total(), 1u);
  EXPECT_TRUE(table.take(kStart + Duration::seconds(30), kept).has_value());
}

TEST(ConversationTable, NamesEveryTakeError) {
  for (std::size_t i = 0; i < static_cast<std::size_t>(TakeError::kCount); ++i) {
    EXPECT_FALSE(to_string(static_cast<TakeError>(i)).empty());
  }
  EXPECT_EQ(to_string(TakeError::kBusy), "busy");
}

}  // namespace
}  // namespace rw::eap
