// Pins keys stored as quotients (CompactIntHash, base/compact_int_hash.h): the hash gives each
// key back from the parts the table keeps, and every path that needs a stored key (iteration,
// SCAN, capture, eviction, far deadlines, growth, splits, refits) gets the right one.
// cache_differential_test runs the same Cache against a model for a million operations.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "chronocache/base/compact_int_hash.h"
#include "chronocache/cache.h"
#include "chronocache/capture.h"
#include "chronocache/clock/manual_clock.h"
#include "chronocache/policy/lru.h"
#include "chronocache/policy/ttl_only.h"
#include "chronocache/sharded_cache.h"

#include <gtest/gtest.h>

namespace chronocache {
namespace {

using namespace std::chrono_literals;
using Hash = CompactIntHash<int>;
using CompactCache = Cache<int, int, TtlOnly, ManualClock, Hash>;

// Keys whose hashes share their top 9 bits: they all land in one segment of the 512 a table
// starts with, which then splits as a large table's segments do (past ~15 k entries).
std::vector<int> keys_of_one_segment(std::size_t n) {
  std::vector<int> keys(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t u = (std::uint64_t{0x0AB} << 23) | ((i * 0x2F0B3ULL) & 0x7FFFFF);
    keys[i] = Hash::key_of(u << 32);
  }
  return keys;
}

TEST(CompactIntHash, EveryKeyComesBackFromItsPrefixQuotientAndTag) {
  std::vector<int> keys = {
      0, 1, -1, 42, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()};
  std::mt19937 rng(7);
  for (int i = 0; i < 200'000; ++i) keys.push_back(static_cast<int>(rng()));
  for (const int key : keys) {
    const std::uint64_t h = Hash()(key);
    ASSERT_EQ(Hash::key_of(h), key);
    ASSERT_EQ(Hash::rehash(static_cast<std::uint32_t>(h >> (64 - Hash::kPrefixBits)),
                           Hash::quotient(h), static_cast<std::uint8_t>(h & 0x7F)),
              h)
        << key;
  }
}

// Keys that differ only in their high bits (multiples of 4096) must not share a tag or a
// ShardedCache shard (bits 32..43): the hash's xorshift brings high bits down.
TEST(CompactIntHash, KeysThatDifferInHighBitsSpreadOverTagsAndShards) {
  std::set<std::uint64_t> tags;
  std::set<std::uint64_t> shards;
  for (int i = 0; i < 4096; ++i) {
    const std::uint64_t h = Hash()(i * 4096);
    tags.insert(h & 0x7F);
    shards.insert((h >> 32) & 0xFFF);
  }
  EXPECT_EQ(tags.size(), 128u);
  EXPECT_GT(shards.size(), 2000u);  // 4 096 keys in 4 096 shards: ~2 590 expected at random
}

TEST(CompactKeys, GrowthAndSplitsKeepEveryKeyAndIterationGivesThemBack) {
  CompactCache cache;
  const std::vector<int> keys = keys_of_one_segment(60'000);
  for (const int key : keys) ASSERT_EQ(cache.put(key, key / 3, 1h), PutOutcome::kInserted);
  for (const int key : keys) ASSERT_EQ(cache.get(key), key / 3) << key;

  std::map<int, int> seen;
  cache.for_each_live(cache.clock().now(),
                      [&](int key, int value, TimePoint) { seen.emplace(key, value); });
  ASSERT_EQ(seen.size(), keys.size());
  for (const int key : keys) ASSERT_EQ(seen.at(key), key / 3);

  std::set<int> scanned;
  std::uint64_t cursor = 0;
  do {
    cursor = cache.scan(cursor, 1000, cache.clock().now(),
                        [&](int key, int value) { scanned.insert(key + 0 * value); });
  } while (cursor != 0);
  EXPECT_EQ(scanned.size(), keys.size());

  // A mass delete, then segments shrunk and refitted: the survivors move again.
  for (std::size_t i = 0; i < keys.size(); i += 3) ASSERT_TRUE(cache.erase(keys[i]));
  cache.reclaim_expired(std::size_t{1} << 30);
  cache.shrink_loose_segments(std::numeric_limits<std::size_t>::max());
  for (std::size_t i = 0; i < keys.size(); ++i)
    ASSERT_EQ(cache.get(keys[i]), i % 3 == 0 ? std::nullopt : std::optional<int>(keys[i] / 3));
}

TEST(CompactKeys, FarDeadlinesFollowTheirKeysThroughGrowth) {
  CompactCache cache;
  const TimePoint far = cache.clock().now() + std::chrono::days(400);
  const std::vector<int> keys = keys_of_one_segment(20'000);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto ttl = i % 100 == 0 ? std::chrono::hours(24 * 400) : std::chrono::hours(1);
    ASSERT_EQ(cache.put(keys[i], 1, ttl), PutOutcome::kInserted);
  }
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(cache.deadline(keys[i]), i % 100 == 0 ? far : cache.clock().now() + 1h);
  }
  cache.clock().advance(std::chrono::days(200));  // past the window: a rebase, far ones move in
  ASSERT_EQ(cache.get(keys[0]), 1);
  ASSERT_EQ(cache.get(keys[1]), std::nullopt);
  EXPECT_EQ(cache.deadline(keys[100]), far);
}

TEST(CompactKeys, LruEvictsTheKeyItNames) {
  Cache<int, int, Lru, ManualClock, Hash> cache({.max_entries = 1000});
  for (int key = -500; key < 500; ++key) ASSERT_EQ(cache.put(key, key, 1h), PutOutcome::kInserted);
  for (int key = -499; key < 500; ++key) ASSERT_EQ(cache.get(key), key);  // -500 is the oldest
  std::optional<int> victim;
  ASSERT_TRUE(cache.evict_one(cache.clock().now(), [&](int key, int) { victim = key; }));
  EXPECT_EQ(victim, -500);
  EXPECT_EQ(cache.get(-500), std::nullopt);
}

class CollectingSink final : public CaptureSink<int, int> {
 public:
  void capture(const int& key, const int& value, TimePoint) override {
    EXPECT_TRUE(entries.emplace(key, value).second) << "handed over twice: " << key;
  }
  std::map<int, int> entries;
};

TEST(CompactKeys, ACaptureHandsOverEveryKeyWhileTheTableSplits) {
  CompactCache cache;
  const std::vector<int> keys = keys_of_one_segment(40'000);
  for (std::size_t i = 0; i < 10'000; ++i)
    ASSERT_EQ(cache.put(keys[i], 7, 1h), PutOutcome::kInserted);
  CollectingSink sink;
  cache.begin_capture(sink, cache.clock().now());
  for (std::size_t i = 10'000; i < keys.size(); ++i) {  // growth hands segments over first
    ASSERT_EQ(cache.put(keys[i], 8, 1h), PutOutcome::kInserted);
    if (i % 64 == 0) cache.capture_step(256);
  }
  while (!cache.capture_step(1 << 20)) {
  }
  ASSERT_EQ(sink.entries.size(), 10'000u);
  for (std::size_t i = 0; i < 10'000; ++i) EXPECT_EQ(sink.entries.at(keys[i]), 7);
}

// An upsert hands the stored key back by value.
TEST(CompactKeys, AnUpsertSeesTheStoredKey) {
  CompactCache cache;
  ASSERT_EQ(cache.put(-123456, 5, 1h), PutOutcome::kInserted);
  int seen = 0;
  const TimePoint now = cache.clock().now();
  cache.upsert_prehashed(-123456, Hashed{cache.hash_of(-123456)}, now, Access::kRead,
                         [&](auto& entry) {
                           seen = entry.key();
                           return entry.assign(6, entry.deadline());
                         });
  EXPECT_EQ(seen, -123456);
  EXPECT_EQ(cache.get(-123456), 6);
}

// 11 bytes a slot (2 of key, 4 of value, 4 of deadline, 1 control byte), in a table that grows
// by a tenth: 11.8-12.6 bytes an entry from 1 M to 12 M entries, 14.6 at worst (at 720 k, where
// segments move from the heap to whole pages), where the default table's 13-byte slots take
// 14-17.4 (measured by sampling memory_bytes() every 20 011 inserts up to 12 M).
TEST(CompactKeys, ATableOfAMillionTakesAtMostFifteenBytesAnEntry) {
  CompactCache cache;
  std::size_t worst_per_mille = 0;
  for (int key = 0; key < 1'000'000; ++key) {
    ASSERT_EQ(cache.put(key, key, 1h), PutOutcome::kInserted);
    if (key >= 100'000 && key % 10'007 == 0)
      worst_per_mille =
          std::max<std::size_t>(worst_per_mille, cache.memory_bytes() * 1000 / (key + 1));
  }
  EXPECT_LE(worst_per_mille, 15'000u);
  EXPECT_LT(cache.memory_bytes(), 13'000'000u);
  EXPECT_EQ(cache.get(999'999), 999'999);
}

TEST(CompactKeys, AShardedCacheOfCompactKeysFindsEveryKey) {
  ShardedCache<int, int, TtlOnly, ManualClock, Hash> cache({}, 16);
  std::mt19937 rng(3);
  std::vector<int> keys(50'000);
  for (int& key : keys) key = static_cast<int>(rng());
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (const int key : keys) ASSERT_EQ(cache.put(key, key ^ 1, 1h), PutOutcome::kInserted);
  for (const int key : keys) ASSERT_EQ(cache.get(key), key ^ 1);
  EXPECT_EQ(cache.size(), keys.size());
}

}  // namespace
}  // namespace chronocache
