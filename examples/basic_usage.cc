// The engine used the way an embedder would (make test runs it).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "chronocache/cache.h"
#include "chronocache/clock/manual_clock.h"
#include "chronocache/policy/lru.h"
#include "chronocache/sharded_cache.h"
#include "persistence/cache_snapshot.h"

using namespace std::chrono_literals;

int main() {
  // A string cache with the default coarse clock: lookups by std::string_view build no string.
  chronocache::Cache<std::string, std::string> sessions;
  sessions.put("user:42", "alice", 30min);
  sessions.put("config", "v1");  // no expiry
  std::printf("user:42 -> %s\n",
              sessions.get(std::string_view("user:42")).value_or("<none>").c_str());

  // A bounded LRU cache on a manual clock, as tests drive it.
  chronocache::Cache<int, int, chronocache::Lru, chronocache::ManualClock> lru({.max_entries = 2});
  lru.put(1, 100, 10s);
  lru.put(2, 200, 10s);
  (void)lru.get(1);      // 1 is now the most recent
  lru.put(3, 300, 10s);  // evicts 2, the least recent
  std::printf("lru holds 1:%d 2:%d 3:%d\n", lru.contains(1), lru.contains(2), lru.contains(3));
  lru.clock().advance(10s);  // every deadline is now: all three are gone
  std::printf("after 10 s: size=%zu expired-on-read get(1)=%s\n", lru.size(),
              lru.get(1) ? "hit" : "miss");

  // A thread-safe cache: 16 shards, one lock each.
  chronocache::ShardedCache<int, int> shared({}, 16);
  for (int i = 0; i < 100000; ++i) shared.put(i, i, 1h);
  std::printf("sharded: %zu entries in %zu shards, %zu bytes of table\n", shared.size(),
              shared.shard_count(), shared.memory_bytes());
  // A snapshot of a live cache and a warm restart from it (other threads could keep writing).
  const std::string path =
      (std::filesystem::temp_directory_path() / "chronocache_example.snap").string();
  chronocache::persistence::SnapshotError error;
  if (!chronocache::persistence::save(shared, path, &error)) {
    std::printf("save failed: %s\n", error.message().c_str());
    return 1;
  }
  chronocache::ShardedCache<int, int> restarted({}, 16);
  const auto loaded = chronocache::persistence::load(restarted, path, &error);
  if (!loaded.ok) {
    std::printf("load failed: %s\n", error.message().c_str());
    return 1;
  }
  std::printf("snapshot: %llu entries loaded, get(777)=%d\n",
              static_cast<unsigned long long>(loaded.loaded), restarted.get(777).value_or(-1));
  std::filesystem::remove(path);

  const auto stats = lru.stats();
  std::printf("lru stats: hits=%llu misses=%llu expired=%llu evicted=%llu\n",
              static_cast<unsigned long long>(stats.hits),
              static_cast<unsigned long long>(stats.misses),
              static_cast<unsigned long long>(stats.expired),
              static_cast<unsigned long long>(stats.evicted));
  return 0;
}
