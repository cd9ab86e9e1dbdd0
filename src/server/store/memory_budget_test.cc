// MemoryBudget over a real Keyspace: the count is exact through in-place edits, each policy takes
// the keys its name promises, and a budget that cannot be met reports kFail (the -OOM case).
#include "server/store/memory_budget.h"

#include <chrono>
#include <string>

#include "server/config/server_config.h"
#include "server/store/keyspace.h"

#include <gtest/gtest.h>

namespace chronocached {
namespace {

using namespace std::chrono_literals;
using Result = MemoryBudget::EvictResult;

class MemoryBudgetTest : public testing::Test {
 protected:
  MemoryBudgetTest() : keyspace_(2, BlobHash(42), &now_), budget_(keyspace_) {}

  void configure(MaxmemoryPolicy policy, std::size_t maxmemory) {
    MemoryBudget::Settings s;
    s.policy = policy;
    s.maxmemory = maxmemory;
    s.tenacity = 100;  // no time limit: a test wants the whole eviction in one call
    budget_.configure(s);
  }
  Db& db() { return keyspace_.db(0); }
  std::string key(int i) { return "key:" + std::to_string(i); }

  TimePoint now_ = TimePoint{} + 1000s;
  Keyspace keyspace_;
  MemoryBudget budget_;
};

TEST(MaxmemoryPolicies, NamesFindTheirPolicyInAnyCase) {
  for (const MaxmemoryPolicyName& entry : kMaxmemoryPolicies) {
    ASSERT_EQ(find_maxmemory_policy(entry.name), &entry) << entry.name;
    EXPECT_EQ(maxmemory_policy_name(entry.policy), entry.name);
  }
  EXPECT_EQ(find_maxmemory_policy("ALLKEYS-LRU")->policy, MaxmemoryPolicy::kAllKeysLru);
  EXPECT_EQ(find_maxmemory_policy("allkeys-fifo"), nullptr);
}

TEST(MaxmemoryPolicies, OrderingPoliciesKeepTheirEngineOrder) {
  EXPECT_EQ(engine_policy_of(MaxmemoryPolicy::kVolatileLru), EnginePolicy::kLru);
  EXPECT_EQ(engine_policy_of(MaxmemoryPolicy::kAllKeysLfu), EnginePolicy::kLfu);
  EXPECT_EQ(engine_policy_of(MaxmemoryPolicy::kAllKeysWTinyLfu), EnginePolicy::kWTinyLfu);
  EXPECT_EQ(engine_policy_of(MaxmemoryPolicy::kAllKeysRandom), EnginePolicy::kNone);
}

TEST_F(MemoryBudgetTest, InPlaceEditsAreCountedAndEverythingIsGivenBackOnErase) {
  const std::size_t empty = budget_.dataset_bytes();
  db().put("k", "v", kNoExpiry, now_);
  const std::size_t one = budget_.dataset_bytes();
  EXPECT_GT(one, empty);
  Blob* record = db().find_mutable("k", now_);
  ASSERT_NE(record, nullptr);
  db().edit("k", *record, [](Blob& r) { return r.append(std::string(100000, 'x')); });
  EXPECT_GE(budget_.dataset_bytes(), empty + 100000);
  db().put("k", std::string(300000, 'y'), kNoExpiry, now_);  // an overwrite that reallocates
  EXPECT_GE(budget_.dataset_bytes(), empty + 300000);
  EXPECT_TRUE(db().erase("k", now_));
  EXPECT_EQ(budget_.dataset_bytes(), empty);  // exact: every byte counted in was counted out
}

TEST_F(MemoryBudgetTest, ThePeakIsTheHighestUseATickOrAReadingSaw) {
  const std::size_t empty = budget_.read_used();
  EXPECT_EQ(budget_.peak(), empty);
  db().put("big", std::string(200000, 'x'), kNoExpiry, now_);
  EXPECT_EQ(budget_.peak(), empty);  // a write alone does not sample it, as in Redis
  budget_.background_step(now_);     // the tick does
  const std::size_t loaded = budget_.used();
  EXPECT_EQ(budget_.peak(), loaded);
  EXPECT_TRUE(db().erase("big", now_));
  EXPECT_EQ(budget_.read_used(), empty);
  EXPECT_EQ(budget_.peak(), loaded);  // kept after the memory went
}

TEST_F(MemoryBudgetTest, NoevictionFailsOverBudgetAndEvictsNothing) {
  for (int i = 0; i < 100; ++i) db().put(key(i), std::string(1000, 'v'), kNoExpiry, now_);
  configure(MaxmemoryPolicy::kNoEviction, budget_.used() / 2);
  EXPECT_EQ(budget_.evict(now_, 0), Result::kFail);
  EXPECT_EQ(db().stored_size(), 100u);
  EXPECT_EQ(budget_.evicted(), 0u);
}

TEST_F(MemoryBudgetTest, TheExceededSpanOpensAtAFailureAndClosesAtTheNextCallWithin) {
  using Exceeded = MemoryBudget::ExceededTime;
  for (int i = 0; i < 100; ++i) db().put(key(i), std::string(1000, 'v'), kNoExpiry, now_);
  configure(MaxmemoryPolicy::kAllKeysRandom, budget_.used() - 20 * 1000);
  ASSERT_EQ(budget_.background_step(now_), Result::kOk);
  Exceeded t = budget_.exceeded_time();
  EXPECT_EQ(t.total_usec, 0u) << "evicted back within at once: no span";
  EXPECT_EQ(t.current_usec, 0u);

  configure(MaxmemoryPolicy::kNoEviction, budget_.used() / 2);
  ASSERT_EQ(budget_.evict(now_, 0), Result::kFail);
  const Exceeded open = budget_.exceeded_time();
  EXPECT_EQ(open.total_usec, open.current_usec) << "the total includes the open span";
  ASSERT_EQ(budget_.evict(now_, 0), Result::kFail);
  EXPECT_GE(budget_.exceeded_time().current_usec, open.current_usec)
      << "a second failure keeps the same span";

  configure(MaxmemoryPolicy::kNoEviction, budget_.used() * 2);  // within: the span ends
  t = budget_.exceeded_time();
  EXPECT_EQ(t.current_usec, 0u);
  EXPECT_GE(t.total_usec, open.total_usec);
  ASSERT_EQ(budget_.evict(now_, 0), Result::kOk);
  EXPECT_EQ(budget_.exceeded_time().total_usec, t.total_usec)
      << "time within the budget adds nothing";

  budget_.reset_exceeded();
  EXPECT_EQ(budget_.exceeded_time().total_usec, 0u);
}

TEST_F(MemoryBudgetTest, AllkeysLruEvictsTheLeastRecentUntilWithinBudget) {
  configure(MaxmemoryPolicy::kAllKeysLru, 0);
  for (int i = 0; i < 1000; ++i) db().put(key(i), std::string(1000, 'v'), kNoExpiry, now_);
  ASSERT_NE(db().find(key(0), now_), nullptr);  // key 0 is now the most recent
  configure(MaxmemoryPolicy::kAllKeysLru, budget_.used() - 200 * 1000);
  EXPECT_TRUE(budget_.pending()) << "a smaller budget starts the background eviction";
  EXPECT_EQ(budget_.background_step(now_), Result::kOk);
  EXPECT_FALSE(budget_.pending());
  EXPECT_LE(budget_.used(), budget_.settings().maxmemory);
  EXPECT_GE(budget_.evicted(), 190u);
  EXPECT_NE(db().find(key(0), now_), nullptr);
  EXPECT_EQ(db().find(key(1), now_), nullptr);
}

TEST_F(MemoryBudgetTest, VolatileTtlTakesTheNearestDeadlinesAndSparesPersistentKeys) {
  for (int i = 0; i < 200; ++i) db().put(key(i), std::string(1000, 'p'), kNoExpiry, now_);
  for (int i = 0; i < 200; ++i)
    db().put("ttl:" + std::to_string(i), std::string(1000, 't'), now_ + 1h + i * 1s, now_);
  configure(MaxmemoryPolicy::kVolatileTtl, budget_.used() - 100 * 1000);
  EXPECT_EQ(budget_.evict(now_, 0), Result::kOk);
  for (int i = 0; i < 200; ++i) ASSERT_NE(db().find(key(i), now_), nullptr);
  // Sampled, so only approximately the nearest: the earliest quarter loses more than the latest.
  int early = 0, late = 0;
  for (int i = 0; i < 50; ++i) early += db().exists("ttl:" + std::to_string(i), now_) ? 1 : 0;
  for (int i = 150; i < 200; ++i) late += db().exists("ttl:" + std::to_string(i), now_) ? 1 : 0;
  EXPECT_LT(early + 10, late);
}

TEST_F(MemoryBudgetTest, VolatilePoliciesFailOnceOnlyPersistentKeysAreLeft) {
  for (MaxmemoryPolicy policy : {MaxmemoryPolicy::kVolatileRandom, MaxmemoryPolicy::kVolatileLru,
                                 MaxmemoryPolicy::kVolatileLfu, MaxmemoryPolicy::kVolatileTtl}) {
    keyspace_.clear_all(now_);
    configure(policy, 0);
    for (int i = 0; i < 300; ++i) db().put(key(i), std::string(500, 'p'), kNoExpiry, now_);
    for (int i = 0; i < 30; ++i)
      db().put("ttl:" + std::to_string(i), std::string(500, 't'), now_ + 1h, now_);
    configure(policy, budget_.used() / 2);  // below the persistent keys alone
    EXPECT_EQ(budget_.evict(now_, 0), Result::kFail) << static_cast<int>(policy);
    EXPECT_EQ(db().stored_size(), 300u) << "every volatile key, and only those, evicted";
    for (int i = 0; i < 300; ++i) ASSERT_NE(db().find(key(i), now_), nullptr);
    EXPECT_EQ(budget_.evict(now_, 0), Result::kFail);  // again, without a key to take
  }
}

TEST_F(MemoryBudgetTest, EveryEvictingPolicyMeetsTheBudgetAcrossDatabases) {
  for (MaxmemoryPolicy policy :
       {MaxmemoryPolicy::kAllKeysLru, MaxmemoryPolicy::kAllKeysLfu, MaxmemoryPolicy::kAllKeysRandom,
        MaxmemoryPolicy::kAllKeysSieve, MaxmemoryPolicy::kAllKeysS3Fifo,
        MaxmemoryPolicy::kAllKeysWTinyLfu}) {
    keyspace_.clear_all(now_);
    configure(policy, 0);
    for (int i = 0; i < 2000; ++i)
      keyspace_.db(i % 2).put(key(i), std::string(100 + i % 900, 'v'), kNoExpiry, now_);
    configure(policy, budget_.used() * 3 / 4);
    EXPECT_EQ(budget_.evict(now_, 0), Result::kOk) << static_cast<int>(policy);
    EXPECT_LE(budget_.used(), budget_.settings().maxmemory);
    EXPECT_GT(keyspace_.db(0).stored_size(), 0u);
    EXPECT_GT(keyspace_.db(1).stored_size(), 0u);
  }
}

// Evictions are not writes: Redis's rdb_changes_since_last_save does not move for them, so save
// points are not triggered by a cache shedding keys. Writes and erases do count, once each.
TEST_F(MemoryBudgetTest, EvictionsCountNoChangeWhileWritesDo) {
  for (MaxmemoryPolicy policy : {MaxmemoryPolicy::kAllKeysLru, MaxmemoryPolicy::kAllKeysRandom,
                                 MaxmemoryPolicy::kVolatileTtl, MaxmemoryPolicy::kVolatileRandom,
                                 MaxmemoryPolicy::kVolatileLru}) {
    keyspace_.clear_all(now_);
    configure(policy, 0);
    const std::uint64_t before = keyspace_.changes();
    for (int i = 0; i < 1000; ++i)
      db().put(key(i), std::string(200, 'v'), now_ + std::chrono::hours(1 + i), now_);
    ASSERT_TRUE(db().erase(key(0), now_));
    EXPECT_EQ(keyspace_.changes(), before + 1001) << static_cast<int>(policy);
    configure(policy, budget_.used() / 2);
    EXPECT_EQ(budget_.evict(now_, 0), Result::kOk) << static_cast<int>(policy);
    EXPECT_LT(db().stored_size(), 999u) << static_cast<int>(policy);
    EXPECT_EQ(keyspace_.changes(), before + 1001) << static_cast<int>(policy);
  }
}

}  // namespace
}  // namespace chronocached
