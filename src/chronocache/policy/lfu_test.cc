// Pins Lfu's victim order through Cache (policy/lfu.h): the lowest access count goes first, ties
// go to the least recently used, a new entry counts one use, and counts stop at 255.
#include "chronocache/policy/lfu.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <set>
#include <tuple>
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

using LfuCache = Cache<int, int, Lfu, ManualClock>;

void use(LfuCache& cache, int key, int times) {
  for (int i = 0; i < times; ++i) ASSERT_TRUE(cache.get(key).has_value()) << key;
}

// The reference: the victim is the smallest (count, last use) pair.
class LfuModel {
 public:
  explicit LfuModel(std::size_t max_entries) : max_entries_(max_entries) {}

  std::optional<int> put(int key) {
    if (touch(key)) return std::nullopt;
    std::optional<int> victim;
    if (entries_.size() == max_entries_) {
      const auto [count, last_use, oldest] = *order_.begin();
      victim = oldest;
      erase(oldest);
    }
    entries_[key] = {1, ++tick_};
    order_.emplace(1, tick_, key);
    return victim;
  }
  bool touch(int key) {
    const auto it = entries_.find(key);
    if (it == entries_.end()) return false;
    auto& [count, last_use] = it->second;
    order_.erase({count, last_use, key});
    count = std::min<std::uint32_t>(count + 1, Lfu::kMaxCount);
    last_use = ++tick_;
    order_.emplace(count, last_use, key);
    return true;
  }
  void erase(int key) {
    const auto it = entries_.find(key);
    order_.erase({it->second.first, it->second.second, key});
    entries_.erase(it);
  }
  bool contains(int key) const { return entries_.contains(key); }
  std::size_t size() const { return entries_.size(); }

 private:
  std::size_t max_entries_;
  std::uint64_t tick_ = 0;
  std::unordered_map<int, std::pair<std::uint32_t, std::uint64_t>> entries_;
  std::set<std::tuple<std::uint32_t, std::uint64_t, int>> order_;
};

TEST(Lfu, EvictsTheLowestCount) {
  LfuCache cache({.max_entries = 3});
  for (int key = 1; key <= 3; ++key) cache.put(key, key, 1h);
  use(cache, 1, 2);
  use(cache, 2, 1);
  cache.put(4, 4, 1h);  // 3 has count 1
  EXPECT_EQ(held(cache, {1, 2, 3, 4}), (std::vector<int>{1, 2, 4}));
  cache.put(5, 5, 1h);  // 4 has count 1, the lowest
  EXPECT_EQ(held(cache, {1, 2, 3, 4, 5}), (std::vector<int>{1, 2, 5}));
  use(cache, 5, 3);  // 5: 4, 1: 3, 2: 2
  cache.put(6, 6, 1h);
  EXPECT_EQ(held(cache, {1, 2, 5, 6}), (std::vector<int>{1, 5, 6}));
}

TEST(Lfu, TiesGoToTheLeastRecentlyUsed) {
  LfuCache cache({.max_entries = 3});
  for (int key = 1; key <= 3; ++key) cache.put(key, key, 1h);
  use(cache, 3, 1);
  use(cache, 1, 1);
  use(cache, 2, 1);  // all at count 2; 3 was used longest ago
  cache.put(4, 4, 1h);
  EXPECT_EQ(held(cache, {1, 2, 3, 4}), (std::vector<int>{1, 2, 4}));
}

TEST(Lfu, TiesAmongNewEntriesGoToTheOldest) {
  LfuCache cache({.max_entries = 3});
  for (int key = 1; key <= 3; ++key) cache.put(key, key, 1h);
  cache.put(4, 4, 1h);
  EXPECT_EQ(held(cache, {1, 2, 3, 4}), (std::vector<int>{2, 3, 4}));
}

// If new entries started at 2, the insert below would tie with 1 and 1 (older) would go.
TEST(Lfu, ANewEntryCountsAsOneUse) {
  LfuCache cache({.max_entries = 2});
  cache.put(1, 1, 1h);
  use(cache, 1, 1);  // count 2
  cache.put(2, 2, 1h);
  cache.put(3, 3, 1h);
  EXPECT_EQ(held(cache, {1, 2, 3}), (std::vector<int>{1, 3}));
}

TEST(Lfu, AnOverwriteCountsAsAUse) {
  LfuCache cache({.max_entries = 2});
  cache.put(1, 1, 1h);
  cache.put(2, 2, 1h);
  EXPECT_EQ(cache.put(1, 10, 1h), PutOutcome::kReplaced);
  cache.put(3, 3, 1h);
  EXPECT_EQ(held(cache, {1, 2, 3}), (std::vector<int>{1, 3}));
}

TEST(Lfu, GetMissesAndContainsAreNotUses) {
  LfuCache cache({.max_entries = 2});
  cache.put(1, 1, 1h);
  cache.put(2, 2, 1h);
  use(cache, 2, 1);
  EXPECT_EQ(cache.get(7), std::nullopt);
  EXPECT_TRUE(cache.contains(1));
  cache.put(3, 3, 1h);
  EXPECT_EQ(held(cache, {1, 2, 3}), (std::vector<int>{2, 3}));
}

// Without saturation 1 would hold 401 and 2 only 255, and 2 would go. With it both hold 255 and
// the tie goes to 1, used longest ago.
TEST(Lfu, CountsSaturateAt255) {
  LfuCache cache({.max_entries = 2});
  cache.put(1, 1, 1h);
  cache.put(2, 2, 1h);
  use(cache, 1, 400);
  use(cache, 2, 254);
  cache.put(3, 3, 1h);
  EXPECT_EQ(held(cache, {1, 2, 3}), (std::vector<int>{2, 3}));
}

// The other half of "exactly 255": a count of 255 still outranks 254, even when the 254 entry was
// used more recently (a cap at 254 would make them tie, and the older one would go).
TEST(Lfu, ACountOf255OutranksACountOf254) {
  LfuCache cache({.max_entries = 2});
  cache.put(1, 1, 1h);
  cache.put(2, 2, 1h);
  use(cache, 1, 254);  // 255
  use(cache, 2, 253);  // 254, and more recent
  cache.put(3, 3, 1h);
  EXPECT_EQ(held(cache, {1, 2, 3}), (std::vector<int>{1, 3}));
}

TEST(Lfu, ASaturatedEntryStillMovesUpInRecency) {
  LfuCache cache({.max_entries = 3});
  cache.put(1, 1, 1h);
  cache.put(2, 2, 1h);
  cache.put(3, 3, 1h);
  use(cache, 1, 300);
  use(cache, 2, 300);
  use(cache, 3, 300);
  use(cache, 1, 1);  // all saturated: 2 is now the least recent
  cache.put(4, 4, 1h);
  EXPECT_EQ(held(cache, {1, 2, 3, 4}), (std::vector<int>{1, 3, 4}));
}

TEST(Lfu, ErasingTheLastEntryOfTheLowestCountFindsTheNextCount) {
  LfuCache cache({.max_entries = 3});
  cache.put(1, 1, 1h);
  cache.put(2, 2, 1h);
  cache.put(3, 3, 1h);
  use(cache, 2, 5);
  use(cache, 3, 9);
  EXPECT_TRUE(cache.erase(1));  // list 1 is empty now
  cache.put(4, 4, 1h);          // fills the room: count 1
  use(cache, 4, 6);             // 4: 7, 2: 6, 3: 10
  cache.put(5, 5, 1h);
  EXPECT_EQ(held(cache, {2, 3, 4, 5}), (std::vector<int>{3, 4, 5}));
}

TEST(Lfu, AnEntryThatExpiresLeavesItsCountBehind) {
  LfuCache cache({.max_entries = 2});
  cache.put(1, 1, 1s);
  use(cache, 1, 50);
  cache.put(2, 2, 1h);
  cache.clock().advance(1s);
  EXPECT_EQ(cache.put(1, 10, 1h), PutOutcome::kInserted);  // a new entry: count 1 again
  use(cache, 2, 1);
  cache.put(3, 3, 1h);
  EXPECT_EQ(held(cache, {1, 2, 3}), (std::vector<int>{2, 3}));
}

// 5000 entries in two segments and 60k mixed operations, checked against a sorted set: the table
// grows and rebuilds while the policy follows its entries by SlotId.
TEST(Lfu, EvictionOrderMatchesASortedModelThroughTableGrowth) {
  constexpr std::size_t kMax = 5000;
  LfuCache cache({.max_entries = kMax});
  LfuModel model(kMax);
  std::mt19937 rng(7);
  int next_key = 0;
  for (int op = 0; op < 60'000; ++op) {
    const auto dice = rng() % 100;
    if (dice < 45 || next_key < 100) {
      const int key = next_key++;
      cache.put(key, key, 1h);
      const std::optional<int> victim = model.put(key);
      if (victim) {
        ASSERT_FALSE(cache.contains(*victim)) << "op " << op << ": " << *victim;
      }
    } else if (dice < 90) {
      // Skewed towards recent keys so counts spread from 1 to the 255 cap.
      const auto back = static_cast<int>(std::min<std::uint32_t>(
          static_cast<std::uint32_t>(rng() % 64) * static_cast<std::uint32_t>(rng() % 128), kMax));
      const int key = next_key - 1 - back;
      ASSERT_EQ(cache.get(key).has_value(), model.touch(key)) << "op " << op << ": get " << key;
    } else if (dice < 97) {
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
    if (op % 5000 == 4999) {
      ASSERT_EQ(cache.size(), model.size());
      for (int key = 0; key < next_key; ++key) {
        ASSERT_EQ(cache.contains(key), model.contains(key)) << "op " << op << ": key " << key;
      }
    }
  }
  EXPECT_EQ(cache.size(), kMax);
}

}  // namespace
}  // namespace chronocache
