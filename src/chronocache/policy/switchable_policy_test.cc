// SwitchablePolicy: a run-time choice among compiled-in policies behaves as the chosen one, and a
// switch followed by Cache::reset_policy() leaves a cache that evicts by the new policy's order.
#include "chronocache/policy/switchable_policy.h"

#include <chrono>
#include <cstddef>
#include <optional>
#include <vector>

#include "chronocache/cache.h"
#include "chronocache/clock/manual_clock.h"
#include "chronocache/policy/lfu.h"
#include "chronocache/policy/lru.h"
#include "chronocache/policy/ttl_only.h"

#include <gtest/gtest.h>

namespace chronocache {
namespace {

using Switchable = SwitchablePolicy<TtlOnly, Lru, Lfu>;
using SwitchCache = Cache<int, int, Switchable, ManualClock>;

static_assert(EvictionPolicy<Switchable>);
static_assert(sizeof(Switchable::Meta) == 4, "one word per slot whatever is selected");

std::vector<int> evict_all(SwitchCache& cache) {
  std::vector<int> order;
  while (cache.evict_one(cache.clock().now(), [&](int key, int) { order.push_back(key); })) {
  }
  return order;
}

TEST(SwitchablePolicy, StartsWithTheFirstAlternativeAndAllocatesNothingForIt) {
  Switchable policy;
  EXPECT_EQ(policy.index(), 0u);
  EXPECT_TRUE(policy.holds<TtlOnly>());
  EXPECT_EQ(policy.memory_bytes(), 0u);
  EXPECT_EQ(policy.pick_victim(), std::nullopt);
}

TEST(SwitchablePolicy, TtlOnlyRefusesWhenFullAsTheBarePolicyDoes) {
  SwitchCache cache({.max_entries = 2});
  EXPECT_EQ(cache.put(1, 1), PutOutcome::kInserted);
  EXPECT_EQ(cache.put(2, 2), PutOutcome::kInserted);
  EXPECT_EQ(cache.put(3, 3), PutOutcome::kRejectedFull);
  EXPECT_FALSE(cache.evict_one(cache.clock().now(), [](int, int) {}));
}

TEST(SwitchablePolicy, SwitchingToLruThenResetEvictsInTheNewOrder) {
  SwitchCache cache({.max_entries = 3});
  for (int k = 1; k <= 3; ++k) cache.put(k, k);
  cache.policy().select<Lru>();
  cache.reset_policy();
  EXPECT_TRUE(cache.policy().holds<Lru>());
  EXPECT_GT(cache.policy().memory_bytes(), 0u);
  // Every entry is registered; touching 1 and 2 leaves 3 the least recent.
  EXPECT_EQ(cache.get(1), 1);
  EXPECT_EQ(cache.get(2), 2);
  EXPECT_EQ(cache.put(4, 4), PutOutcome::kInserted);
  EXPECT_FALSE(cache.contains(3));
  EXPECT_EQ(evict_all(cache), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(cache.size(), 0u);
}

TEST(SwitchablePolicy, LfuSelectedByIndexKeepsTheFrequentKey) {
  SwitchCache cache({.max_entries = 2});
  cache.policy().select_index(2);
  cache.reset_policy();
  EXPECT_TRUE(cache.policy().holds<Lfu>());
  cache.put(1, 1);
  cache.put(2, 2);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(cache.get(1), 1);
  EXPECT_EQ(cache.get(2), 2);
  cache.put(3, 3);  // evicts 2: used twice (insert + get) against 1's six
  EXPECT_TRUE(cache.contains(1));
  EXPECT_FALSE(cache.contains(2));
  EXPECT_TRUE(cache.contains(3));
}

TEST(SwitchablePolicy, BackToTtlOnlyFreesThePolicyAndStopsEvicting) {
  SwitchCache cache({.max_entries = 4});
  cache.policy().select<Lru>();
  cache.reset_policy();
  for (int k = 0; k < 4; ++k) cache.put(k, k);
  cache.policy().select<TtlOnly>();
  cache.reset_policy();
  EXPECT_EQ(cache.policy().memory_bytes(), 0u);
  EXPECT_EQ(cache.put(9, 9), PutOutcome::kRejectedFull);
  EXPECT_EQ(cache.size(), 4u);
  EXPECT_TRUE(cache.erase(2));  // erase still works with the new, empty metadata
  EXPECT_EQ(cache.put(9, 9), PutOutcome::kInserted);
}

TEST(SwitchablePolicy, TableGrowthKeepsTheSelectedPolicysHandlesCurrent) {
  // Enough keys to split segments many times: on_move must reach Lru through the switch, or the
  // victims named afterwards would be stale slots.
  SwitchCache cache;
  cache.policy().select<Lru>();
  cache.reset_policy();
  constexpr int kKeys = 20000;
  for (int k = 0; k < kKeys; ++k) cache.put(k, k);
  const std::vector<int> order = evict_all(cache);
  ASSERT_EQ(order.size(), static_cast<std::size_t>(kKeys));
  for (int k = 0; k < kKeys; ++k) ASSERT_EQ(order[static_cast<std::size_t>(k)], k);
}

TEST(SwitchablePolicy, ByteBudgetEvictsOnceAPolicyIsSelected) {
  constexpr std::size_t kBudget = 1 << 20;
  SwitchCache refusing({.max_bytes = kBudget});
  int stored = 0;
  while (refusing.put(stored, stored) == PutOutcome::kInserted) ++stored;  // TtlOnly: refused
  EXPECT_GT(stored, 1000);
  EXPECT_LE(refusing.memory_used(), kBudget);

  SwitchCache evicting({.max_bytes = kBudget});
  evicting.policy().select<Lru>();
  evicting.reset_policy();
  for (int k = 0; k < 100000; ++k)
    ASSERT_EQ(evicting.put(k, k), PutOutcome::kInserted) << "an evicting policy never refuses";
  EXPECT_LE(evicting.memory_used(), kBudget);
  EXPECT_TRUE(evicting.contains(99999));
  EXPECT_FALSE(evicting.contains(0));
  EXPECT_GT(evicting.stats().evicted, 0u);
}

}  // namespace
}  // namespace chronocache
