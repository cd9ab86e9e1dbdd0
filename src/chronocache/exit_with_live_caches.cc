// A host that exits with caches still alive (issue 12): a leaked Cache, a leaked ShardedCache, a
// namespace-scope static Cache and a function-local static one. It writes to stdout without ever
// flushing (a pipe makes stdout fully buffered, so the text leaves only at a normal exit) and
// returns 0 from main. exit_with_live_caches_test runs it and checks that it exits with 0 and that
// every line arrived: before the fix, the clock's ticker was destroyed at exit with its thread
// joinable, std::terminate aborted the process (status 134) and the buffered text was lost.
#include <cstdio>

#include "chronocache/cache.h"
#include "chronocache/sharded_cache.h"

namespace {

using IntCache = chronocache::Cache<int, int>;
using IntShardedCache = chronocache::ShardedCache<int, int>;

// Deliberately leaked: these caches live until the process ends, as in a host that never tears
// them down. LeakSanitizer scans globals for pointers, so a pointer kept here makes the leak a
// reachable one, which it does not report; the leak is the point of the program, not a slip.
IntCache* leaked_cache = nullptr;
IntShardedCache* leaked_sharded_cache = nullptr;

IntCache namespace_scope_cache;  // destroyed by exit(), in an order the library does not choose

IntCache& function_local_cache() {
  static IntCache cache;
  return cache;
}

}  // namespace

int main() {
  leaked_cache = new IntCache();
  leaked_sharded_cache = new IntShardedCache({}, 4);
  for (int i = 0; i < 100; ++i) {
    leaked_cache->put(i, i);
    leaked_sharded_cache->put(i, 2 * i);
    namespace_scope_cache.put(i, 3 * i);
    function_local_cache().put(i, 4 * i);
    std::printf("line %d: %d %d %d %d\n", i, leaked_cache->get(i).value_or(-1),
                leaked_sharded_cache->get(i).value_or(-1),
                namespace_scope_cache.get(i).value_or(-1),
                function_local_cache().get(i).value_or(-1));
  }
  std::printf("done: returning 0 with four caches alive\n");  // no fflush: exit() must flush
  return 0;
}
