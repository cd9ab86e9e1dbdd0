// The worker pool behind run_experiment (see experiment.h).
#include "sim/experiment.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace chronocache::sim {

std::vector<RunResult> run_experiment(const Trace& trace,
                                      std::span<const PolicyEntry* const> policies,
                                      std::span<const std::size_t> sizes, unsigned threads,
                                      const std::function<void(std::uint64_t)>& on_tick) {
  std::vector<RunResult> results;
  results.reserve(policies.size() * sizes.size());
  for (const PolicyEntry* policy : policies)
    for (const std::size_t size : sizes) results.push_back(RunResult{policy->name, size, {}});

  if (threads == 0) threads = std::max(1U, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, results.size()));

  std::atomic<std::size_t> next{0};
  std::atomic<std::uint64_t> requests_done{0};
  std::mutex mutex;
  std::condition_variable all_done;
  unsigned running = threads;

  const auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < results.size();) {
      const PolicyEntry* policy = policies[i / sizes.size()];
      results[i].replay = policy->replay(trace, results[i].cache_size, &requests_done);
    }
    const std::lock_guard lock(mutex);
    if (--running == 0) all_done.notify_all();
  };

  std::vector<std::thread> workers;
  workers.reserve(threads);
  for (unsigned t = 0; t < threads; ++t) workers.emplace_back(work);
  {
    std::unique_lock lock(mutex);
    while (!all_done.wait_for(lock, kTickInterval, [&] { return running == 0; })) {
      if (on_tick) on_tick(requests_done.load(std::memory_order_relaxed));
    }
  }
  for (std::thread& worker : workers) worker.join();
  if (on_tick) on_tick(requests_done.load());
  return results;
}

}  // namespace chronocache::sim
