// Pins the embedder's snapshot API (cache_snapshot.h): save then load gives back every live entry
// with its remaining lifetime, from a Cache and from a ShardedCache that other threads keep
// writing (the file holds the instant save() was called), and a bad file is an error, never a
// partial success.
#include "persistence/cache_snapshot.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "chronocache/cache.h"
#include "chronocache/clock/manual_clock.h"
#include "chronocache/policy/lru.h"
#include "chronocache/policy/ttl_only.h"
#include "chronocache/sharded_cache.h"
#include "testing/numbered.h"
#include "testing/scratch_dir.h"

#include <gtest/gtest.h>

namespace chronocache::persistence {
namespace {

using namespace std::chrono_literals;
using StringCache = Cache<std::string, std::string, TtlOnly, ManualClock>;

using test_support::numbered;

class CacheSnapshotTest : public ::testing::Test {
 protected:
  std::string path(const char* name) const { return scratch_.path(name); }

  test_support::ScratchDir scratch_;
};

template <class C>
std::map<std::string, std::pair<std::string, TimePoint>> contents(const C& cache) {
  std::map<std::string, std::pair<std::string, TimePoint>> out;
  cache.for_each_live(cache.clock().now(), [&](const std::string& k, const std::string& v,
                                               TimePoint d) { out.emplace(k, std::pair(v, d)); });
  return out;
}

TEST_F(CacheSnapshotTest, ARoundTripKeepsEveryLiveEntryAndItsRemainingLifetime) {
  StringCache saved;
  saved.put("forever", "value");
  saved.put(std::string("bin\0ary\r\n", 9), std::string("\0\xff", 2), 90s);
  saved.put("empty", "", 5s);
  saved.put("big", std::string(1 << 20, 'x'), 1h);
  saved.put("dead", "soon", 2ms);
  for (int i = 0; i < 10'000; ++i) saved.put(numbered("k", i), std::to_string(i), 1h + 1ms * i);
  saved.clock().advance(2ms);  // "dead" has expired (not reclaimed): it must not be written
  const ClockPair at_save{saved.clock().now(), 1'700'000'000'000};
  SnapshotError error;
  ASSERT_TRUE(save_at(saved, path("a.snap"), at_save, &error)) << error.message();

  // Loaded 10 s of wall time later into a cache whose clock reads something else entirely.
  StringCache loaded;
  loaded.clock().advance(12345s);
  const ClockPair at_load{loaded.clock().now(), at_save.unix_ms + 10'000};
  const LoadResult result = load_at(loaded, path("a.snap"), at_load, &error);
  ASSERT_TRUE(result.ok) << error.message();
  EXPECT_EQ(result.expired, 1u);  // "empty": 5 s left at save, 10 s later it is gone
  EXPECT_EQ(result.loaded, saved.size() - 1);

  auto expected = contents(saved);
  expected.erase("empty");
  for (auto& [key, entry] : expected)
    if (entry.second != kNoExpiry)
      entry.second = at_load.cache_now + (entry.second - at_save.cache_now) - 10s;
  EXPECT_EQ(contents(loaded), expected);
}

TEST_F(CacheSnapshotTest, TriviallyCopyableKeysAndValuesTravelAsTheirBytes) {
  Cache<std::uint64_t, double, Lru, ManualClock> saved;
  for (std::uint64_t i = 0; i < 1000; ++i) saved.put(i * 7919, static_cast<double>(i) / 3);
  SnapshotError error;
  ASSERT_TRUE(save(saved, path("b.snap"), &error)) << error.message();
  Cache<std::uint64_t, double, Lru, ManualClock> loaded;
  ASSERT_TRUE(load(loaded, path("b.snap"), &error).ok) << error.message();
  ASSERT_EQ(loaded.size(), 1000u);
  for (std::uint64_t i = 0; i < 1000; ++i)
    EXPECT_EQ(loaded.get(i * 7919), static_cast<double>(i) / 3);

  // Read with 4-byte keys, the file's 8-byte keys do not decode: an error, not garbage keys.
  Cache<std::uint32_t, double, TtlOnly, ManualClock> wrong;
  const LoadResult result = load(wrong, path("b.snap"), &error);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(error.reason.find("decode"), std::string::npos) << error.reason;
}

// A writer thread runs one sequence of writes while save() runs: k<i> := "during", then
// late<i> := "x", for i = 0, 1, ... A file that holds one instant holds exactly a prefix of that
// sequence (all writes before the instant, none after); a save that caught shards at different
// moments would show a later write without an earlier one.
TEST_F(CacheSnapshotTest, ASavedShardedCacheUnderAConcurrentWriterHoldsOneInstant) {
  ShardedCache<std::string, std::string> cache({}, 8);
  constexpr int kKeys = 100'000;
  for (int i = 0; i < kKeys; ++i) cache.put(numbered("k", i), "before");

  std::atomic<int> written{0};
  std::thread writer([&] {
    for (int i = 0; i < kKeys; ++i) {
      cache.put(numbered("k", i), "during");
      cache.put(numbered("late", i), "x");
      written.store(i + 1, std::memory_order_release);
    }
  });
  while (written.load(std::memory_order_acquire) < 1000) std::this_thread::yield();
  SnapshotError error;
  ASSERT_TRUE(save(cache, path("c.snap"), &error)) << error.message();
  const int written_after_save = written.load(std::memory_order_acquire);
  writer.join();

  ShardedCache<std::string, std::string> loaded({}, 4);
  ASSERT_TRUE(load(loaded, path("c.snap"), &error).ok) << error.message();
  std::vector<bool> done;  // the sequence's writes, in order: present in the file or not
  for (int i = 0; i < kKeys; ++i) {
    done.push_back(loaded.get(numbered("k", i)) == std::optional<std::string>("during"));
    done.push_back(loaded.contains(numbered("late", i)));
  }
  const auto prefix = std::find(done.begin(), done.end(), false) - done.begin();
  EXPECT_EQ(std::find(done.begin() + prefix, done.end(), true), done.end())
      << "write " << prefix << " is missing but a later one is in the file";
  EXPECT_GE(prefix, 2 * 1000);                // what was written before save() began
  EXPECT_LE(prefix, 2 * written_after_save);  // nothing written after save() returned
  EXPECT_EQ(loaded.size(), static_cast<std::size_t>(kKeys + prefix / 2));
}

TEST_F(CacheSnapshotTest, ABadFileIsAnErrorNamingTheFile) {
  StringCache saved;
  for (int i = 0; i < 100; ++i) saved.put(numbered("k", i), "v");
  SnapshotError error;
  ASSERT_TRUE(save(saved, path("d.snap"), &error));
  std::filesystem::resize_file(path("d.snap"), std::filesystem::file_size(path("d.snap")) - 1);
  StringCache loaded;
  EXPECT_FALSE(load(loaded, path("d.snap"), &error).ok);
  EXPECT_NE(error.message().find(path("d.snap")), std::string::npos) << error.message();

  EXPECT_FALSE(load(loaded, path("missing.snap"), &error).ok);
  EXPECT_FALSE(save(saved, path("no/such/dir/e.snap"), &error));
  EXPECT_FALSE(error.reason.empty());
}

TEST_F(CacheSnapshotTest, OnlyTheAskedDatabaseIsLoaded) {
  StringCache saved;
  saved.put("k", "v");
  SnapshotError error;
  ASSERT_TRUE(save(saved, path("f.snap"), &error));
  StringCache loaded;
  const LoadResult result = load(loaded, path("f.snap"), &error, /*db=*/3);
  ASSERT_TRUE(result.ok);
  EXPECT_EQ(result.loaded, 0u);
  EXPECT_EQ(result.skipped, 1u);
}

}  // namespace
}  // namespace chronocache::persistence
