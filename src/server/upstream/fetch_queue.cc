#include "server/upstream/fetch_queue.h"

#include <utility>

namespace chronocached {

FetchQueue::Admission FetchQueue::request(std::string_view key, std::uint64_t waiter,
                                          std::int64_t now_ms) {
  if (const auto it = waiters_.find(key); it != waiters_.end()) {
    it->second.push_back(waiter);
    ++counters_.joins;
    return Admission::kJoined;
  }
  if (waiters_.size() >= capacity_) {
    ++counters_.refused;
    return Admission::kFull;
  }
  waiters_.emplace(std::string(key), std::vector<std::uint64_t>{waiter});
  queue_.push_back(Job{std::string(key), now_ms});
  return Admission::kQueued;
}

bool FetchQueue::prefetch(std::string_view key, std::int64_t now_ms) {
  if (waiters_.find(key) != waiters_.end()) return false;
  if (waiters_.size() >= capacity_ / 2) {
    ++counters_.prefetches_dropped;
    return false;
  }
  waiters_.emplace(std::string(key), std::vector<std::uint64_t>{});
  queue_.push_back(Job{std::string(key), now_ms, true});
  ++counters_.prefetches;
  return true;
}

std::optional<FetchQueue::Job> FetchQueue::take() {
  if (queue_.empty()) return std::nullopt;
  Job job = std::move(queue_.front());
  queue_.pop_front();
  ++counters_.fetches;
  return job;
}

std::vector<FetchQueue::Job> FetchQueue::take_up_to(std::size_t max) {
  std::vector<Job> jobs;
  while (jobs.size() < max) {
    std::optional<Job> job = take();
    if (!job) break;
    jobs.push_back(std::move(*job));
  }
  if (!jobs.empty()) ++counters_.batches;
  return jobs;
}

std::vector<std::uint64_t> FetchQueue::finish(std::string_view key, bool failed) {
  if (failed) ++counters_.errors;
  const auto it = waiters_.find(key);
  if (it == waiters_.end()) return {};
  std::vector<std::uint64_t> woken = std::move(it->second);
  waiters_.erase(it);
  return woken;
}

}  // namespace chronocached
