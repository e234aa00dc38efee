#include "gateway/duplicate_cache.h"

#include <vector>

#include <gtest/gtest.h>

#include "base/random.h"

namespace rw::gateway {
namespace {

RequestKey key_for(std::uint16_t port, std::uint8_t identifier, std::uint8_t auth_byte = 0) {
  RequestKey key;
  key.from.address = {127, 0, 0, 1};
  key.from.port = port;
  key.identifier = identifier;
  key.authenticator.fill(auth_byte);
  return key;
}

std::vector<std::uint8_t> to_vector(Bytes bytes) { return {bytes.begin(), bytes.end()}; }

const Instant kStart{1'000'000'000};

TEST(DuplicateCache, NewRequestIsInProgressThenAnswered) {
  DuplicateCache cache({});
  const RequestKey key = key_for(1000, 7);
  EXPECT_EQ(cache.begin(kStart, key).state, DuplicateCache::State::kNew);
  EXPECT_EQ(cache.begin(kStart, key).state, DuplicateCache::State::kInProgress);
  const std::vector<std::uint8_t> reply{2, 7, 0, 20, 1, 2, 3};
  cache.complete(kStart, key, reply);
  const auto again = cache.begin(kStart + Duration::seconds(1), key);
  ASSERT_EQ(again.state, DuplicateCache::State::kAnswered);
  EXPECT_EQ(to_vector(again.reply), reply);
  EXPECT_EQ(cache.counters().answered_hits, 1u);
  EXPECT_EQ(cache.counters().in_progress_hits, 1u);
}

TEST(DuplicateCache, DifferentAuthenticatorOrPortIsANewRequest) {
  DuplicateCache cache({});
  ASSERT_EQ(cache.begin(kStart, key_for(1000, 7, 1)).state, DuplicateCache::State::kNew);
  cache.complete(kStart, key_for(1000, 7, 1), std::vector<std::uint8_t>{1});
  EXPECT_EQ(cache.begin(kStart, key_for(1000, 7, 2)).state, DuplicateCache::State::kNew);
  EXPECT_EQ(cache.begin(kStart, key_for(1001, 7, 1)).state, DuplicateCache::State::kNew);
  RequestKey other_listener = key_for(1000, 7, 1);
  other_listener.listener = Listener::kAccounting;
  EXPECT_EQ(cache.begin(kStart, other_listener).state, DuplicateCache::State::kNew);
}

TEST(DuplicateCache, AnsweredEntryExpiresAfterWindow) {
  DuplicateCache cache({.window = Duration::seconds(5)});
  const RequestKey key = key_for(1000, 1);
  ASSERT_EQ(cache.begin(kStart, key).state, DuplicateCache::State::kNew);
  cache.complete(kStart, key, std::vector<std::uint8_t>{9});
  EXPECT_EQ(cache.begin(kStart + Duration::milliseconds(4999), key).state, DuplicateCache::State::kAnswered);
  EXPECT_EQ(cache.begin(kStart + Duration::seconds(5), key).state, DuplicateCache::State::kNew);
}

TEST(DuplicateCache, AbandonedRequestIsProcessedAgain) {
  DuplicateCache cache({});
  const RequestKey key = key_for(1000, 1);
  ASSERT_EQ(cache.begin(kStart, key).state, DuplicateCache::State::kNew);
  cache.abandon(key);
  EXPECT_EQ(cache.in_progress_size(), 0u);
  EXPECT_EQ(cache.begin(kStart, key).state, DuplicateCache::State::kNew);
}

TEST(DuplicateCache, InProgressBoundDropsNewRequests) {
  DuplicateCache cache({.in_progress_max = 2});
  EXPECT_EQ(cache.begin(kStart, key_for(1, 1)).state, DuplicateCache::State::kNew);
  EXPECT_EQ(cache.begin(kStart, key_for(2, 1)).state, DuplicateCache::State::kNew);
  EXPECT_EQ(cache.begin(kStart, key_for(3, 1)).state, DuplicateCache::State::kFull);
  EXPECT_EQ(cache.counters().full_drops, 1u);
}

TEST(DuplicateCache, EntryBoundEvictsOldestFirst) {
  DuplicateCache cache({.answered_max = 3});
  for (std::uint16_t port = 1; port <= 4; ++port) {
    ASSERT_EQ(cache.begin(kStart, key_for(port, 1)).state, DuplicateCache::State::kNew);
    cache.complete(kStart, key_for(port, 1), std::vector<std::uint8_t>{static_cast<std::uint8_t>(port)});
  }
  EXPECT_EQ(cache.answered_size(), 3u);
  EXPECT_EQ(cache.counters().evicted_early, 1u);
  EXPECT_EQ(cache.begin(kStart, key_for(1, 1)).state, DuplicateCache::State::kNew);
  const auto kept = cache.begin(kStart, key_for(4, 1));
  ASSERT_EQ(kept.state, DuplicateCache::State::kAnswered);
  EXPECT_EQ(kept.reply[0], 4);
}

TEST(DuplicateCache, ByteBoundEvictsAndRepliesNeverWrap) {
  DuplicateCache cache({.reply_bytes_max = 100});
  for (std::uint8_t i = 0; i < 20; ++i) {
    const RequestKey key = key_for(1000, i);
    ASSERT_EQ(cache.begin(kStart, key).state, DuplicateCache::State::kNew);
    cache.complete(kStart, key, std::vector<std::uint8_t>(30, i));
    const auto hit = cache.begin(kStart, key);
    ASSERT_EQ(hit.state, DuplicateCache::State::kAnswered);
    EXPECT_EQ(to_vector(hit.reply), std::vector<std::uint8_t>(30, i));
  }
  EXPECT_LE(cache.answered_size(), 3u);
  EXPECT_GT(cache.counters().evicted_early, 0u);
}

TEST(DuplicateCache, ReplyLargerThanRingIsNotCached) {
  DuplicateCache cache({.reply_bytes_max = 16});
  const RequestKey key = key_for(1000, 1);
  ASSERT_EQ(cache.begin(kStart, key).state, DuplicateCache::State::kNew);
  cache.complete(kStart, key, std::vector<std::uint8_t>(17, 1));
  EXPECT_EQ(cache.counters().reply_too_large, 1u);
  EXPECT_EQ(cache.begin(kStart, key).state, DuplicateCache::State::kNew);
}

// A seeded random workload against a simple model: every answered key within
// the window and not evicted returns its own reply; the index stays consistent
// through interleaved inserts, abandons, completions and expiry.
TEST(DuplicateCache, RandomWorkloadMatchesModel) {
  SeededRandom random(7);
  DuplicateCache cache({.window = Duration::seconds(2),
                        .answered_max = 64,
                        .reply_bytes_max = 1024,
                        .in_progress_max = 16,
                        .hash_seed = 99});
  Instant now = kStart;
  for (int step = 0; step < 20000; ++step) {
    now = now + Duration::milliseconds(static_cast<std::int64_t>(random.below(5)));
    const RequestKey key =
        key_for(static_cast<std::uint16_t>(random.below(50)), static_cast<std::uint8_t>(random.below(4)));
    const auto lookup = cache.begin(now, key);
    if (lookup.state == DuplicateCache::State::kAnswered) {
      ASSERT_FALSE(lookup.reply.empty());
      EXPECT_EQ(lookup.reply[0], key.from.port & 0xff);
      EXPECT_EQ(lookup.reply[1], key.identifier);
    } else if (lookup.state == DuplicateCache::State::kNew) {
      if (random.below(4) == 0) {
        cache.abandon(key);
      } else {
        std::vector<std::uint8_t> reply(2 + random.below(60), 0xee);
        reply[0] = static_cast<std::uint8_t>(key.from.port);
        reply[1] = key.identifier;
        cache.complete(now, key, reply);
      }
    }
    ASSERT_LE(cache.answered_size(), 64u);
    ASSERT_LE(cache.in_progress_size(), 16u);
  }
}

}  // namespace
}  // namespace rw::gateway
