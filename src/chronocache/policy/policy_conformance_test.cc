// The behaviour every eviction policy must have, whatever victim it picks (Abseil's typed
// conformance suites). A new policy adds itself to AllPolicies and passes this file unchanged.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "chronocache/cache.h"
#include "chronocache/clock/manual_clock.h"
#include "chronocache/policy/eviction_policy.h"
#include "chronocache/policy/lfu.h"
#include "chronocache/policy/lru.h"
#include "chronocache/policy/s3fifo.h"
#include "chronocache/policy/sieve.h"
#include "chronocache/policy/ttl_only.h"
#include "chronocache/policy/w_tinylfu.h"

#include <gtest/gtest.h>

#include "testing/policy_names.h"

namespace chronocache {
namespace {

using namespace std::chrono_literals;

template <class Policy>
class PolicyConformance : public testing::Test {
 protected:
  using CacheType = Cache<int, int, Policy, ManualClock>;
  // Evicting policies name a victim when full; TtlOnly refuses the insert instead.
  static constexpr bool kEvicts = !std::is_same_v<Policy, TtlOnly>;
};

using AllPolicies = testing::Types<TtlOnly, Lru, Lfu, Sieve, S3Fifo, WTinyLfu>;

TYPED_TEST_SUITE(PolicyConformance, AllPolicies, chronocache::test_support::PolicyNames);

TYPED_TEST(PolicyConformance, SatisfiesTheConcept) {
  static_assert(EvictionPolicy<TypeParam>);
  static_assert(std::is_trivially_copyable_v<typename TypeParam::Meta>);
  EXPECT_LE(sizeof(typename TypeParam::Meta), 4u) << "Meta is paid in every slot";
}

TYPED_TEST(PolicyConformance, PutGetEraseAndContainsBehaveAlike) {
  typename TestFixture::CacheType cache;
  EXPECT_EQ(cache.put(1, 10, 1s), PutOutcome::kInserted);
  EXPECT_EQ(cache.put(1, 11, 1s), PutOutcome::kReplaced);
  EXPECT_EQ(cache.get(1), 11);
  EXPECT_EQ(cache.get(2), std::nullopt);
  EXPECT_TRUE(cache.contains(1));
  EXPECT_FALSE(cache.contains(2));
  EXPECT_TRUE(cache.erase(1));
  EXPECT_FALSE(cache.erase(1));
  EXPECT_EQ(cache.size(), 0u);
}

TYPED_TEST(PolicyConformance, ExpiryIsExactAndIndependentOfThePolicy) {
  typename TestFixture::CacheType cache;
  cache.put(1, 10, 5s);
  cache.put(2, 20);
  cache.clock().advance(4999ms);
  EXPECT_EQ(cache.get(1), 10);
  cache.clock().advance(1ms);
  EXPECT_EQ(cache.get(1), std::nullopt);
  EXPECT_FALSE(cache.contains(1));
  EXPECT_EQ(cache.get(2), 20);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.put(2, 21, 0s), PutOutcome::kExpiredOnArrival);
  EXPECT_EQ(cache.size(), 0u);
}

TYPED_TEST(PolicyConformance, ABoundedCacheNeverHoldsMoreThanMaxEntries) {
  constexpr std::size_t kMax = 100;
  typename TestFixture::CacheType cache({.max_entries = kMax});
  std::set<int> present;
  for (int key = 0; key < 1000; ++key) {
    const std::uint64_t evicted_before = cache.stats().evicted;
    const PutOutcome outcome = cache.put(key, key, 1h);
    ASSERT_LE(cache.size(), kMax);
    if (key < static_cast<int>(kMax)) {
      ASSERT_EQ(outcome, PutOutcome::kInserted);
      present.insert(key);
      continue;
    }
    if constexpr (TestFixture::kEvicts) {
      // Exactly one old entry leaves, and never the one just inserted.
      ASSERT_EQ(outcome, PutOutcome::kInserted);
      ASSERT_EQ(cache.stats().evicted, evicted_before + 1);
      ASSERT_TRUE(cache.contains(key));
      int gone = 0;
      for (auto it = present.begin(); it != present.end();) {
        if (cache.contains(*it)) {
          ++it;
        } else {
          ++gone;
          it = present.erase(it);
        }
      }
      ASSERT_EQ(gone, 1) << "after inserting " << key;
      present.insert(key);
    } else {
      ASSERT_EQ(outcome, PutOutcome::kRejectedFull);
      ASSERT_FALSE(cache.contains(key));
    }
    ASSERT_EQ(cache.size(), kMax);
  }
  EXPECT_EQ(cache.stats().evicted, TestFixture::kEvicts ? 900u : 0u);
  EXPECT_EQ(cache.stats().expired, 0u);
}

TYPED_TEST(PolicyConformance, OverwritesOfAFullCacheEvictNothing) {
  typename TestFixture::CacheType cache({.max_entries = 10});
  for (int key = 0; key < 10; ++key) cache.put(key, key, 1h);
  for (int round = 0; round < 5; ++round) {
    for (int key = 0; key < 10; ++key)
      ASSERT_EQ(cache.put(key, key + round, 1h), PutOutcome::kReplaced);
  }
  EXPECT_EQ(cache.stats().evicted, 0u);
  EXPECT_EQ(cache.size(), 10u);
}

// The upsert every write takes (Cache::upsert_prehashed) keeps the bound for every policy: an
// overwrite in place evicts nothing, an insert beyond max_entries evicts or is refused as put.
TYPED_TEST(PolicyConformance, UpsertsKeepTheBoundAndOverwritesEvictNothing) {
  typename TestFixture::CacheType cache({.max_entries = 10});
  const auto upsert = [&](int key, int value) {
    return cache.upsert_prehashed(key, Hashed{cache.hash_of(key)}, cache.clock().now(),
                                  Access::kPeek, [&](auto& entry) {
                                    if (entry.found()) {
                                      entry.mutable_value() = value;
                                      return entry.update(entry.deadline());
                                    }
                                    return entry.insert(key, value, cache.clock().now() + 1h);
                                  });
  };
  for (int key = 0; key < 10; ++key) ASSERT_EQ(upsert(key, key), PutOutcome::kInserted);
  for (int key = 0; key < 10; ++key) ASSERT_EQ(upsert(key, key + 1), PutOutcome::kReplaced);
  EXPECT_EQ(cache.stats().evicted, 0u);
  for (int key = 10; key < 100; ++key) {
    ASSERT_EQ(upsert(key, key),
              TestFixture::kEvicts ? PutOutcome::kInserted : PutOutcome::kRejectedFull);
    ASSERT_EQ(cache.size(), 10u);
  }
  EXPECT_EQ(cache.stats().evicted, TestFixture::kEvicts ? 90u : 0u);
  EXPECT_EQ(cache.stats().hits + cache.stats().misses, 0u) << "a peek counts nothing";
}

TYPED_TEST(PolicyConformance, AnExpiredVictimCountsAsExpiredNotEvicted) {
  typename TestFixture::CacheType cache({.max_entries = 3});
  for (int key = 0; key < 3; ++key) cache.put(key, key, 1s);
  cache.clock().advance(1s);
  const PutOutcome outcome = cache.put(10, 10, 1h);
  if constexpr (TestFixture::kEvicts) {
    EXPECT_EQ(outcome, PutOutcome::kInserted);
    EXPECT_EQ(cache.stats().expired, 1u);
    EXPECT_EQ(cache.stats().evicted, 0u);
    EXPECT_EQ(cache.get(10), 10);
  } else {
    EXPECT_EQ(outcome, PutOutcome::kRejectedFull);  // expired entries count until reclaimed
  }
  EXPECT_EQ(cache.size(), TestFixture::kEvicts ? 1u : 0u);
}

TYPED_TEST(PolicyConformance, EntriesLeavingByExpiryOrEraseAreForgottenByThePolicy) {
  typename TestFixture::CacheType cache({.max_entries = 100});
  for (int key = 0; key < 100; ++key) cache.put(key, key, key < 50 ? 1s : 1h);
  cache.clock().advance(1s);
  for (int key = 0; key < 25; ++key) EXPECT_EQ(cache.get(key), std::nullopt);  // lazily expired
  EXPECT_EQ(cache.reclaim_expired(1'000'000) + cache.reclaim_expired(1'000'000), 25u);
  for (int key = 50; key < 60; ++key) EXPECT_TRUE(cache.erase(key));
  // 60 free places: filling them evicts nothing; a stale policy entry would name a free slot.
  for (int key = 1000; key < 1060; ++key) ASSERT_EQ(cache.put(key, key, 1h), PutOutcome::kInserted);
  EXPECT_EQ(cache.stats().evicted, 0u);
  EXPECT_EQ(cache.size(), 100u);
  for (int key = 2000; key < 2050; ++key) {
    ASSERT_EQ(cache.put(key, key, 1h),
              TestFixture::kEvicts ? PutOutcome::kInserted : PutOutcome::kRejectedFull);
  }
  EXPECT_EQ(cache.stats().evicted, TestFixture::kEvicts ? 50u : 0u);
  EXPECT_EQ(cache.size(), 100u);
}

TYPED_TEST(PolicyConformance, HeavyGrowthKeepsEveryEntryRetrievable) {
  typename TestFixture::CacheType cache;
  constexpr int kKeys = 200'000;
  for (int key = 0; key < kKeys; ++key) ASSERT_EQ(cache.put(key, ~key, 1h), PutOutcome::kInserted);
  EXPECT_EQ(cache.size(), static_cast<std::size_t>(kKeys));
  for (int key = 0; key < kKeys; ++key) ASSERT_EQ(cache.get(key), ~key) << key;
  for (int key = 0; key < kKeys; key += 2) ASSERT_TRUE(cache.erase(key));
  EXPECT_EQ(cache.size(), static_cast<std::size_t>(kKeys / 2));
  for (int key = 0; key < kKeys; ++key) ASSERT_EQ(cache.contains(key), key % 2 == 1) << key;
  for (int key = 0; key < kKeys; key += 2)
    ASSERT_EQ(cache.put(key, key, 1h), PutOutcome::kInserted);
  for (int key = 0; key < kKeys; ++key) ASSERT_EQ(cache.get(key), key % 2 == 0 ? key : ~key) << key;
}

// The policy's SlotIds must follow every relocation, or a victim would name the wrong slot.
TYPED_TEST(PolicyConformance, BoundedCachesStayConsistentThroughManySplits) {
  constexpr std::size_t kMax = 50'000;
  typename TestFixture::CacheType cache({.max_entries = kMax});
  for (int key = 0; key < 120'000; ++key) {
    cache.put(key, ~key, 1h);
    if (key % 7 == 0) (void)cache.get(key / 2);
  }
  EXPECT_EQ(cache.size(), kMax);
  std::size_t present = 0;
  for (int key = 0; key < 120'000; ++key) {
    const std::optional<int> value = cache.get(key);
    if (value) {
      ASSERT_EQ(*value, ~key);
    }
    present += value ? 1 : 0;
  }
  EXPECT_EQ(present, kMax);
  EXPECT_EQ(cache.stats().evicted, TestFixture::kEvicts ? 120'000 - kMax : 0u);
}

TYPED_TEST(PolicyConformance, ClearForgetsEverythingAndTheBoundStillHolds) {
  typename TestFixture::CacheType cache({.max_entries = 50});
  for (int key = 0; key < 80; ++key) cache.put(key, key, 1h);
  cache.clear();
  EXPECT_EQ(cache.size(), 0u);
  for (int key = 100; key < 150; ++key) ASSERT_EQ(cache.put(key, key, 1h), PutOutcome::kInserted);
  const std::uint64_t evicted = cache.stats().evicted;
  EXPECT_EQ(cache.put(200, 200, 1h),
            TestFixture::kEvicts ? PutOutcome::kInserted : PutOutcome::kRejectedFull);
  EXPECT_EQ(cache.stats().evicted, evicted + (TestFixture::kEvicts ? 1 : 0));
  EXPECT_EQ(cache.size(), 50u);
  for (int key = 100; key < 150; ++key) {
    if (cache.contains(key)) {
      EXPECT_EQ(cache.get(key), key);
    }
  }
}

TYPED_TEST(PolicyConformance, ReserveWithEntriesPresentKeepsThemAndTheBound) {
  typename TestFixture::CacheType cache({.max_entries = 1000});
  for (int key = 0; key < 1000; ++key) cache.put(key, key, 1h);
  cache.reserve(100'000);  // relocates every entry
  for (int key = 0; key < 1000; ++key) ASSERT_EQ(cache.get(key), key);
  for (int key = 1000; key < 1500; ++key) cache.put(key, key, 1h);
  EXPECT_EQ(cache.size(), 1000u);
  EXPECT_EQ(cache.stats().evicted, TestFixture::kEvicts ? 500u : 0u);
}

TYPED_TEST(PolicyConformance, MemoryBytesIncludesThePolicy) {
  typename TestFixture::CacheType cache;
  for (int key = 0; key < 10'000; ++key) cache.put(key, key);
  if constexpr (TestFixture::kEvicts) {
    // A node per entry at least (16 bytes in LinkedNodes) on top of the table.
    EXPECT_GE(cache.memory_bytes(), 10'000u * (12 + 4 + 16));
  } else {
    EXPECT_GE(cache.memory_bytes(), 10'000u * 12);
  }
}

}  // namespace
}  // namespace chronocache
