// Pins Lru's victim order through Cache (policy/lru.h): the least recently used entry goes first,
// where "use" is a get hit or an overwrite, and the order survives every table relocation.
#include "chronocache/policy/lru.h"

#include <chrono>
#include <cstddef>
#include <list>
#include <optional>
#include <random>
#include <unordered_map>
#include <vector>

#include "chronocache/cache.h"
#include "chronocache/clock/manual_clock.h"
#include "testing/held.h"

#include <gtest/gtest.h>

namespace chronocache {
namespace {

using namespace std::chrono_literals;
using test_support::held;

using LruCache = Cache<int, int, Lru, ManualClock>;

// The reference: a list from most to least recent.
class LruModel {
 public:
  explicit LruModel(std::size_t max_entries) : max_entries_(max_entries) {}

  // Returns the evicted key, if any.
  std::optional<int> put(int key) {
    if (touch(key)) return std::nullopt;
    std::optional<int> victim;
    if (order_.size() == max_entries_) {
      victim = order_.back();
      where_.erase(order_.back());
      order_.pop_back();
    }
    order_.push_front(key);
    where_[key] = order_.begin();
    return victim;
  }
  bool touch(int key) {
    const auto it = where_.find(key);
    if (it == where_.end()) return false;
    order_.splice(order_.begin(), order_, it->second);
    return true;
  }
  void erase(int key) {
    const auto it = where_.find(key);
    order_.erase(it->second);
    where_.erase(it);
  }
  bool contains(int key) const { return where_.contains(key); }
  std::size_t size() const { return order_.size(); }

 private:
  std::size_t max_entries_;
  std::list<int> order_;
  std::unordered_map<int, std::list<int>::iterator> where_;
};

TEST(Lru, EvictsTheLeastRecentlyInserted) {
  LruCache cache({.max_entries = 3});
  for (int key = 1; key <= 4; ++key) cache.put(key, key, 1h);
  EXPECT_EQ(held(cache, {1, 2, 3, 4}), (std::vector<int>{2, 3, 4}));
  cache.put(5, 5, 1h);
  EXPECT_EQ(held(cache, {1, 2, 3, 4, 5}), (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(cache.stats().evicted, 2u);
}

TEST(Lru, AGetHitMakesAnEntryTheMostRecent) {
  LruCache cache({.max_entries = 3});
  for (int key = 1; key <= 3; ++key) cache.put(key, key, 1h);
  EXPECT_EQ(cache.get(1), 1);
  cache.put(4, 4, 1h);
  EXPECT_EQ(held(cache, {1, 2, 3, 4}), (std::vector<int>{1, 3, 4}));
  EXPECT_EQ(cache.get(3), 3);
  cache.put(5, 5, 1h);  // 1 is now the least recent
  EXPECT_EQ(held(cache, {1, 2, 3, 4, 5}), (std::vector<int>{3, 4, 5}));
}

TEST(Lru, AnOverwriteMakesAnEntryTheMostRecent) {
  LruCache cache({.max_entries = 3});
  for (int key = 1; key <= 3; ++key) cache.put(key, key, 1h);
  EXPECT_EQ(cache.put(1, 10, 1h), PutOutcome::kReplaced);
  cache.put(4, 4, 1h);
  EXPECT_EQ(held(cache, {1, 2, 3, 4}), (std::vector<int>{1, 3, 4}));
  EXPECT_EQ(cache.get(1), 10);
}

TEST(Lru, AGetMissIsNotAUse) {
  LruCache cache({.max_entries = 3});
  for (int key = 1; key <= 3; ++key) cache.put(key, key, 1h);
  EXPECT_EQ(cache.get(99), std::nullopt);
  cache.put(4, 4, 1h);
  EXPECT_EQ(cache.get(1), std::nullopt);  // evicted; asking again must not revive or reorder
  cache.put(5, 5, 1h);
  EXPECT_EQ(held(cache, {1, 2, 3, 4, 5}), (std::vector<int>{3, 4, 5}));
}

TEST(Lru, ContainsIsNotAUse) {
  LruCache cache({.max_entries = 3});
  for (int key = 1; key <= 3; ++key) cache.put(key, key, 1h);
  EXPECT_TRUE(cache.contains(1));
  cache.put(4, 4, 1h);
  EXPECT_FALSE(cache.contains(1));
}

TEST(Lru, AnErasedEntryLeavesTheOrder) {
  LruCache cache({.max_entries = 3});
  for (int key = 1; key <= 3; ++key) cache.put(key, key, 1h);
  EXPECT_TRUE(cache.erase(1));
  cache.put(4, 4, 1h);  // room left: no eviction
  EXPECT_EQ(cache.stats().evicted, 0u);
  cache.put(5, 5, 1h);
  EXPECT_EQ(held(cache, {1, 2, 3, 4, 5}), (std::vector<int>{3, 4, 5}));
}

TEST(Lru, AKeyPutAgainAfterExpiryIsNew) {
  LruCache cache({.max_entries = 3});
  cache.put(1, 1, 1s);
  cache.put(2, 2, 1h);
  cache.put(3, 3, 1h);
  cache.clock().advance(1s);
  EXPECT_EQ(cache.put(1, 10, 1h), PutOutcome::kInserted);  // most recent now
  cache.put(4, 4, 1h);
  EXPECT_EQ(held(cache, {1, 2, 3, 4}), (std::vector<int>{1, 3, 4}));
  EXPECT_EQ(cache.stats().expired, 1u);
  EXPECT_EQ(cache.stats().evicted, 1u);
}

TEST(Lru, TheLeastRecentIsEvictedEvenWhenExpiredButCountsAsExpired) {
  LruCache cache({.max_entries = 3});
  cache.put(1, 1, 1h);
  cache.put(2, 2, 1s);
  cache.put(3, 3, 1h);
  (void)cache.get(1);
  cache.clock().advance(1s);
  cache.put(4, 4, 1h);  // victim 2 is the least recent, and expired
  EXPECT_EQ(held(cache, {1, 2, 3, 4}), (std::vector<int>{1, 3, 4}));
  EXPECT_EQ(cache.stats().evicted, 0u);
  EXPECT_EQ(cache.stats().expired, 1u);
}

TEST(Lru, OrderSurvivesReserveRelocatingEveryEntry) {
  LruCache cache({.max_entries = 100});
  LruModel model(100);
  for (int key = 0; key < 100; ++key) {
    cache.put(key, key, 1h);
    model.put(key);
  }
  for (int key = 0; key < 100; key += 3) {
    (void)cache.get(key);
    model.touch(key);
  }
  cache.reserve(100'000);
  for (int key = 100; key < 200; ++key) {
    cache.put(key, key, 1h);
    const std::optional<int> victim = model.put(key);
    ASSERT_TRUE(victim);
    ASSERT_FALSE(cache.contains(*victim)) << "expected " << *victim << " evicted by " << key;
  }
  for (int key = 0; key < 200; ++key) ASSERT_EQ(cache.contains(key), model.contains(key)) << key;
}

// 5000 entries span two segments; 30k inserts with reads, overwrites and erases in between make
// the table rebuild and split many times while the policy holds SlotIds. The survivors, and every
// single victim, must match a plain list.
TEST(Lru, EvictionOrderMatchesAListModelThroughTableGrowth) {
  constexpr std::size_t kMax = 5000;
  LruCache cache({.max_entries = kMax});
  LruModel model(kMax);
  std::mt19937 rng(20240607);
  int next_key = 0;
  for (int op = 0; op < 60'000; ++op) {
    const auto dice = rng() % 100;
    if (dice < 50 || next_key < 100) {
      const int key = next_key++;
      cache.put(key, key, 1h);
      const std::optional<int> victim = model.put(key);
      if (victim) {
        ASSERT_FALSE(cache.contains(*victim)) << "op " << op << ": " << *victim;
      }
    } else if (dice < 80) {
      const int key = next_key - 1 - static_cast<int>(rng() % (kMax + kMax / 4));  // some misses
      ASSERT_EQ(cache.get(key).has_value(), model.touch(key)) << "op " << op << ": get " << key;
    } else if (dice < 95) {
      const int key = next_key - 1 - static_cast<int>(rng() % kMax);
      if (key >= 0 && model.contains(key)) {
        ASSERT_EQ(cache.put(key, -key, 1h), PutOutcome::kReplaced);
        model.touch(key);
      }
    } else {
      const int key = next_key - 1 - static_cast<int>(rng() % kMax);
      if (key >= 0 && model.contains(key)) {
        ASSERT_TRUE(cache.erase(key));
        model.erase(key);
      }
    }
    if (op % 5000 == 4999 || op == 59'999) {
      ASSERT_EQ(cache.size(), model.size());
      for (int key = 0; key < next_key; ++key) {
        ASSERT_EQ(cache.contains(key), model.contains(key)) << "op " << op << ": key " << key;
      }
    }
  }
  EXPECT_GT(next_key, 25'000);
  EXPECT_EQ(cache.size(), kMax);
}

}  // namespace
}  // namespace chronocache
