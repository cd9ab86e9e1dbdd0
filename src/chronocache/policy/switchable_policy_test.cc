// SwitchablePolicy: a run-time choice among compiled-in policies behaves as the chosen one, and a
// switch followed by Cache::reset_policy() leaves a cache that evicts by the new policy's order.
#include "chronocache/policy/switchable_policy.h"

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <vector>

#include "chronocache/cache.h"
#include "chronocache/capture.h"
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
static_assert(sizeof(Switchable::Meta) == 4, "one word per entry whatever is selected");
static_assert(SwitchCache::slot_bytes() == 13,
              "key, value, deadline and a control byte: the word "
              "is in a column only while a policy keeps one");

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

// The policy word costs table memory only while the selected policy keeps one: 4 bytes a slot
// come with Lru and go again with TtlOnly, and the entries stay where they were.
TEST(SwitchablePolicy, TheTableHoldsAWordPerSlotOnlyWhileThePolicyKeepsOne) {
  SwitchCache cache;
  constexpr int kKeys = 20000;
  for (int k = 0; k < kKeys; ++k) cache.put(k, k);
  const auto table_bytes = [&] { return cache.memory_bytes() - cache.policy().memory_bytes(); };
  const std::size_t without = table_bytes();
  EXPECT_EQ(cache.entry_table_bytes(), 13u);

  cache.policy().select<Lru>();
  cache.reset_policy();
  const std::size_t with = table_bytes();
  EXPECT_EQ(cache.entry_table_bytes(), 17u);
  // (without - with) / 4 slots: at least one per entry, and the table is at least 3/4 full; its
  // large segments take whole pages, a page more at most for each (they hold ~1 900 entries or
  // more at this size).
  EXPECT_GE(with - without, kKeys * 4u);
  EXPECT_LE(with - without, kKeys * 4u * 4 / 3 + kKeys / 1900 * 4096);
  for (int k = 0; k < kKeys; ++k) ASSERT_EQ(cache.get(k), k);
  for (int k = kKeys - 1; k >= 0; --k) ASSERT_EQ(cache.get(k), k);  // LRU order: kKeys-1 .. 0

  cache.policy().select<TtlOnly>();
  cache.reset_policy();
  EXPECT_EQ(table_bytes(), without);
  EXPECT_EQ(cache.entry_table_bytes(), 13u);
  for (int k = 0; k < kKeys; ++k) ASSERT_EQ(cache.get(k), k);

  cache.policy().select<Lru>();  // and once more: the column's words start afresh
  cache.reset_policy();
  for (int k = 0; k < 10; ++k) ASSERT_EQ(cache.get(k), k);
  std::vector<int> order = evict_all(cache);
  ASSERT_EQ(order.size(), static_cast<std::size_t>(kKeys));
  for (int k = 0; k < 10; ++k) EXPECT_EQ(order[kKeys - 10 + k], k) << "the ten just read go last";
}

// Switching policies in the middle of a point-in-time capture: the column comes with every entry
// in place, so the capture still hands each entry over exactly once.
TEST(SwitchablePolicy, ASwitchDuringACaptureLosesAndRepeatsNothing) {
  class Sink final : public CaptureSink<int, int> {
   public:
    void capture(const int& key, const int& value, TimePoint) override {
      ++seen[key];
      if (value != key) ++changed;  // a write reached the sink before its entry was handed over
    }
    std::map<int, int> seen;
    int changed = 0;
  };
  SwitchCache cache;
  constexpr int kKeys = 30000;
  for (int k = 0; k < kKeys; ++k) cache.put(k, k);
  Sink sink;
  cache.begin_capture(sink, cache.clock().now());
  cache.capture_step(kKeys / 3);
  cache.policy().select<Lru>();
  cache.reset_policy();
  cache.capture_step(kKeys / 3);
  cache.policy().select<TtlOnly>();
  cache.reset_policy();
  for (int k = 0; k < kKeys; k += 7) cache.put(k, -k);  // writes hand pending chunks over first
  cache.finish_capture();
  ASSERT_EQ(sink.seen.size(), static_cast<std::size_t>(kKeys));
  for (const auto& [key, times] : sink.seen) ASSERT_EQ(times, 1) << key;
  EXPECT_EQ(sink.changed, 0);
}

}  // namespace
}  // namespace chronocache
