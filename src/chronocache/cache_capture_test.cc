// Pins point-in-time capture (capture.h): whatever the cache does while a capture runs (writes,
// erases, deadline changes, evictions, growth that splits segments, in-place edits), the sink
// receives exactly the entries live when the capture began, each once, with the value and
// deadline they had then.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>

#include "chronocache/cache.h"
#include "chronocache/capture.h"
#include "chronocache/clock/manual_clock.h"
#include "chronocache/policy/lru.h"
#include "chronocache/policy/ttl_only.h"
#include "testing/numbered.h"

#include <gtest/gtest.h>

namespace chronocache {
namespace {

using namespace std::chrono_literals;

struct Captured {
  std::string value;
  TimePoint deadline;
  bool operator==(const Captured&) const = default;
};
using Contents = std::map<std::string, Captured>;

// Collects what a capture hands over; a key handed over twice fails the test.
class CollectingSink final : public CaptureSink<std::string, std::string> {
 public:
  void capture(const std::string& key, const std::string& value, TimePoint deadline) override {
    const bool fresh = entries.emplace(key, Captured{value, deadline}).second;
    EXPECT_TRUE(fresh) << "handed over twice: " << key;
  }
  Contents entries;
};

template <class C>
Contents live_contents(const C& cache) {
  Contents out;
  cache.for_each_live(cache.clock().now(),
                      [&](const std::string& k, const std::string& v, TimePoint d) {
                        out.emplace(k, Captured{v, d});
                      });
  return out;
}

using StringCache = Cache<std::string, std::string, TtlOnly, ManualClock>;

using test_support::numbered;

std::string key_of(std::size_t i) { return numbered("key:", i); }

TEST(CacheCapture, WithoutWritesTheStepsHandOverEveryLiveEntryOnce) {
  StringCache cache;
  for (std::size_t i = 0; i < 50'000; ++i)
    cache.put(key_of(i), numbered("v", i), std::chrono::milliseconds(1 + i % 7));
  for (std::size_t i = 0; i < 1000; ++i) cache.put(numbered("forever:", i), "f");
  cache.clock().advance(3ms);  // keys with TTL 1..3 ms are dead now, not reclaimed yet
  const Contents expected = live_contents(cache);
  ASSERT_LT(expected.size(), cache.stored_size());

  CollectingSink sink;
  cache.begin_capture(sink, cache.clock().now());
  EXPECT_TRUE(cache.capturing());
  std::size_t steps = 0;
  while (!cache.capture_step(512)) ++steps;
  EXPECT_GT(steps, 3u);  // a small step budget takes several steps
  EXPECT_FALSE(cache.capturing());
  EXPECT_EQ(sink.entries, expected);
}

TEST(CacheCapture, EveryKindOfWriteDuringACaptureLeavesThePointInTimeContents) {
  StringCache cache;
  std::mt19937_64 rng(7);
  // 56 000 keys: 16 segments of 3 500 keys, of the ~4 260 a full one holds, so new keys split
  // them.
  constexpr std::size_t kKeys = 56'000;
  for (std::size_t i = 0; i < kKeys; ++i)
    cache.put(key_of(i), numbered("old", i), std::chrono::milliseconds(10'000 + i));
  const Contents at_start = live_contents(cache);
  const std::size_t segments_before = cache.slot_capacity();

  CollectingSink sink;
  cache.begin_capture(sink, cache.clock().now());
  std::size_t next_key = kKeys;
  while (!cache.capture_step(64)) {  // small steps: writes reach most segments before the walk
    for (int w = 0; w < 40; ++w) {
      const std::string key = key_of(rng() % next_key);
      switch (rng() % 6) {
        case 0:
          cache.put(key, "new", 50s);
          break;
        case 1:
          cache.erase(key);
          break;
        case 2:
          cache.set_deadline_prehashed(key, Hashed{cache.hash_of(key)}, cache.clock().now() + 1s,
                                       cache.clock().now());
          break;
        case 3:
          if (std::string* v =
                  cache.find_prehashed(key, Hashed{cache.hash_of(key)}, cache.clock().now()))
            v->append("+edit");
          break;
        default:  // new keys: grow and split segments, handed over or not
          for (int n = 0; n < 50; ++n) cache.put(key_of(next_key++), "brand new");
          break;
      }
    }
    cache.clock().advance(1ms);
  }
  EXPECT_GT(cache.slot_capacity(), segments_before);  // the table grew during the capture
  EXPECT_EQ(sink.entries, at_start);
}

// Erases that leave segments sparse shrink them (entries move), mid-capture: the capture still
// holds exactly the contents at its start.
TEST(CacheCapture, SegmentsShrinkingDuringACaptureLeaveThePointInTimeContents) {
  StringCache cache;
  for (std::size_t i = 0; i < 60'000; ++i) cache.put(key_of(i), numbered("v", i));
  const Contents expected = live_contents(cache);
  const std::size_t full = cache.memory_bytes();
  CollectingSink sink;
  cache.begin_capture(sink, cache.clock().now());
  cache.capture_step(4096);  // part handed over before the erases, part after
  for (std::size_t i = 0; i < 60'000; ++i)
    if (i % 8 != 0) {
      ASSERT_TRUE(cache.erase(key_of(i)));
    }
  EXPECT_LT(cache.memory_bytes(), full * 6 / 10);  // segments did shrink under the capture
  while (!cache.capture_step(4096)) {
  }
  EXPECT_EQ(sink.entries, expected);
}

TEST(CacheCapture, EvictionsOfPendingEntriesHandThemOverFirst) {
  Cache<std::string, std::string, Lru, ManualClock> cache({.max_entries = 20'000});
  for (std::size_t i = 0; i < 20'000; ++i) cache.put(key_of(i), numbered("v", i));
  const Contents at_start = live_contents(cache);
  CollectingSink sink;
  cache.begin_capture(sink, cache.clock().now());
  // Every insert of a new key evicts the least recently used old one, in pending segments.
  for (std::size_t i = 20'000; i < 30'000; ++i) cache.put(key_of(i), "new");
  EXPECT_EQ(cache.stats().evicted, 10'000u);
  cache.finish_capture();
  EXPECT_EQ(sink.entries, at_start);
}

TEST(CacheCapture, ClearAndReserveCompleteTheCaptureFirst) {
  StringCache cache;
  for (std::size_t i = 0; i < 5000; ++i) cache.put(key_of(i), "v");
  const Contents at_start = live_contents(cache);
  CollectingSink sink;
  cache.begin_capture(sink, cache.clock().now());
  cache.capture_step(16);
  cache.clear();
  EXPECT_FALSE(cache.capturing());
  EXPECT_EQ(sink.entries, at_start);

  for (std::size_t i = 0; i < 5000; ++i) cache.put(key_of(i), "w");
  CollectingSink second;
  cache.begin_capture(second, cache.clock().now());
  cache.reserve(1'000'000);
  EXPECT_FALSE(cache.capturing());
  EXPECT_EQ(second.entries, live_contents(cache));
}

TEST(CacheCapture, AnAbandonedCaptureHandsOverNothingMore) {
  StringCache cache;
  for (std::size_t i = 0; i < 20'000; ++i) cache.put(key_of(i), "v");
  CollectingSink sink;
  cache.begin_capture(sink, cache.clock().now());
  cache.capture_step(16);
  const std::size_t handed_over = sink.entries.size();
  EXPECT_LT(handed_over, 20'000u);
  cache.abandon_capture();
  EXPECT_FALSE(cache.capturing());
  for (std::size_t i = 0; i < 20'000; ++i) cache.put(key_of(i), "w");
  EXPECT_EQ(sink.entries.size(), handed_over);
  CollectingSink again;  // and a new capture may begin
  cache.begin_capture(again, cache.clock().now());
  cache.finish_capture();
  EXPECT_EQ(again.entries.size(), 20'000u);
}

TEST(CacheCapture, EntriesThatExpireDuringTheCaptureAreNeverHandedOverAsNew) {
  StringCache cache;
  for (std::size_t i = 0; i < 10'000; ++i) cache.put(key_of(i), "v", 5ms);
  CollectingSink sink;
  cache.begin_capture(sink, cache.clock().now());
  cache.clock().advance(10ms);
  cache.reclaim_expired(1'000'000);  // frees them without a hand-over: they are dead anyway
  EXPECT_EQ(cache.stored_size(), 0u);
  cache.finish_capture();
  for (const auto& [key, entry] : sink.entries)  // what was handed over is as it was at the start
    EXPECT_EQ(entry.deadline, cache.clock().now() - 10ms + 5ms) << key;
}

TEST(CacheCapture, ARebaseDuringACaptureLeavesThePointInTimeContents) {
  // A rebase (the epoch moved after 24.8 days) shifts every deadline and marks the passed ones
  // expired; the capture must still see them as they were at its start.
  StringCache cache;
  cache.put("expired", "v", 1s);
  cache.put("forever", "v");
  cache.put("ten-days", "v", std::chrono::days(10));
  for (std::size_t i = 0; i < 5000; ++i) cache.put(key_of(i), "v", std::chrono::days(i % 40));
  cache.clock().advance(2s);  // "expired" is past its deadline, not yet reclaimed
  const TimePoint start = cache.clock().now();
  const Contents at_start = live_contents(cache);
  ASSERT_EQ(at_start.count("expired"), 0u);
  CollectingSink sink;
  cache.begin_capture(sink, start);
  cache.capture_step(16);
  cache.clock().advance(std::chrono::days(25));
  cache.erase("absent");  // a write at the new time: it rebases
  cache.finish_capture();
  EXPECT_EQ(sink.entries, at_start);
  EXPECT_FALSE(cache.contains("expired"));
  EXPECT_FALSE(cache.contains("ten-days"));
}

}  // namespace
}  // namespace chronocache
