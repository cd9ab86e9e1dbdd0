// The worker pool behind run_experiment (see experiment.h).
#include "sim/experiment.h"

#include <algorithm>
#include <thread>

#include "chronocache/base/mutex.h"
#include "chronocache/base/thread_annotations.h"

namespace chronocache::sim {

namespace {

// How many workers are still replaying; the last one to finish wakes the waiting caller.
struct Countdown {
  explicit Countdown(unsigned workers) : running(workers) {}
  Mutex mu;
  CondVar all_done;
  unsigned running CC_GUARDED_BY(mu);
};

}  // namespace

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
  Countdown countdown(threads);

  const auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < results.size();) {
      const PolicyEntry* policy = policies[i / sizes.size()];
      results[i].replay = policy->replay(trace, results[i].cache_size, &requests_done);
    }
    MutexLock lock(countdown.mu);
    if (--countdown.running == 0) countdown.all_done.notify_all();
  };

  std::vector<std::thread> workers;
  workers.reserve(threads);
  for (unsigned t = 0; t < threads; ++t) workers.emplace_back(work);
  {
    MutexLock lock(countdown.mu);
    auto next_tick = std::chrono::steady_clock::now() + kTickInterval;
    while (countdown.running != 0) {
      if (countdown.all_done.wait_until(countdown.mu, next_tick) == std::cv_status::timeout) {
        if (on_tick) on_tick(requests_done.load(std::memory_order_relaxed));
        next_tick = std::chrono::steady_clock::now() + kTickInterval;
      }
    }
  }
  for (std::thread& worker : workers) worker.join();
  if (on_tick) on_tick(requests_done.load());
  return results;
}

}  // namespace chronocache::sim
