// FetchQueue: the upstream fetches a near-cache (--upstream) has asked for and not yet finished,
// single-flight and bounded. A GET that misses locally asks for its key: the first asker queues
// the key, later askers of the same key join its waiters, so N clients missing one key cost the
// upstream one GET. A fetcher thread takes the oldest queued keys (a batch, fetched in one round
// trip), fetches them with no lock held, and finish() hands back the clients to wake.
//
//   request(k, c1) ─► queue [k]          waiters {k: c1}        kQueued
//   request(k, c2) ─►                    waiters {k: c1, c2}    kJoined
//   take()         ─► k is in flight (still in `waiters`, off the queue)
//   finish(k)      ─► {c1, c2}, k forgotten: the next miss of k fetches again
//
// Bounded by distinct keys pending (queued or in flight): past `capacity` a new key is refused
// (kFull) and its client is answered an error at once (-TRYAGAIN), never queued without limit;
// a join costs nothing upstream and is always admitted.
//
// Not thread-safe by itself: the server guards it with the state lock (ServerState::mu), which
// both the event loops (request) and the fetcher threads (take, finish) hold when they call it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chronocached {

class FetchQueue {
 public:
  enum class Admission : std::uint8_t { kQueued, kJoined, kFull };
  struct Job {
    std::string key;
    std::int64_t queued_ms = 0;  // unix ms when the first client asked
    bool prefetch = false;       // asked by the prefetcher, with no client waiting at first
  };
  // INFO's upstream figures, since start.
  struct Counters {
    std::uint64_t fetches = 0;             // keys taken for fetching
    std::uint64_t batches = 0;             // take_up_to calls that took any: upstream round trips
    std::uint64_t errors = 0;              // fetches that failed (finish with failed = true)
    std::uint64_t joins = 0;               // misses that joined a fetch already pending
    std::uint64_t refused = 0;             // misses refused because `capacity` keys were pending
    std::uint64_t prefetches = 0;          // keys queued by prefetch()
    std::uint64_t prefetches_dropped = 0;  // prefetch() past half the capacity
  };

  explicit FetchQueue(std::size_t capacity) : capacity_(capacity) {}

  // Client `waiter` misses `key`. The caller must not ask twice for the same client and key
  // while it waits (a waiter is woken once per ask).
  Admission request(std::string_view key, std::uint64_t waiter, std::int64_t now_ms);
  // A fetch nobody waits for yet (upstream-prefetch: a key predicted to be read next). Queued
  // unless the key is already pending, or half the capacity is (dropped and counted: a miss
  // with a client waiting always finds room). Whether it was queued.
  bool prefetch(std::string_view key, std::int64_t now_ms);
  // The oldest queued key, now in flight; nullopt when none is queued.
  std::optional<Job> take();
  // The oldest queued keys, at most `max`, now in flight, oldest first: one batch (counted).
  std::vector<Job> take_up_to(std::size_t max);
  // `key`'s fetch ended: its waiters, in arrival order; the key is forgotten.
  std::vector<std::uint64_t> finish(std::string_view key, bool failed);

  std::size_t queued() const { return queue_.size(); }
  std::size_t pending() const { return waiters_.size(); }  // queued or in flight
  std::size_t capacity() const { return capacity_; }
  const Counters& counters() const { return counters_; }

 private:
  std::size_t capacity_;
  std::deque<Job> queue_;
  std::map<std::string, std::vector<std::uint64_t>, std::less<>> waiters_;
  Counters counters_;
};

}  // namespace chronocached
