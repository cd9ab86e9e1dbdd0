#include <gtest/gtest.h>

#include "chronocache/cache.h"
#include "chronocache/clock/manual_clock.h"

using namespace std::chrono_literals;

TEST(CacheSmoke, PutGetExpire) {
  chronocache::Cache<int, int, chronocache::TtlOnly, chronocache::ManualClock> cache;
  cache.put(1, 10, 5s);
  ASSERT_EQ(cache.get(1), 10);
  cache.clock().advance(5s);
  ASSERT_EQ(cache.get(1), std::nullopt);
  for (int i = 0; i < 100000; ++i) cache.put(i, i * 2, 60s);
  ASSERT_EQ(cache.size(), 100000u);
  for (int i = 0; i < 100000; ++i) ASSERT_EQ(cache.get(i), i * 2) << i;
}
