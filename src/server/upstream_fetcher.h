// UpstreamFetcher: the threads of the read-through near-cache (--upstream; commands/
// upstream_read.h has the GET side). Each takes the oldest queued keys (ServerState::
// upstream_fetches), up to kMaxBatch, sends the upstream "GET k" and "PTTL k" for each in one
// write over its own connection, with no lock held (no event loop ever waits on the upstream),
// reads the replies, then takes the state lock to store each value with min(PTTL,
// upstream-max-ttl-ms) and to wake the clients that waited, through their loops' mailboxes.
// Batching is what keeps a burst of misses from being paced by round trips: two threads fetching
// one key each at a time would answer at most 2 / RTT misses a second.
//
// Every fetch is bounded by upstream-timeout-ms (connect, send and both replies), so a silent
// upstream costs a waiting client that long and then an error, never a hang. A key that waited
// in the queue longer than the timeout fails without being fetched, and a connection failure
// fails every queued key with the same reason (they would meet the same upstream), so with the
// upstream down the waiters' replies come within one timeout (two at most: one in the queue, one
// on the wire). A reconnect is tried on the next fetch.
//
// Not cached: an upstream nil (the key is absent upstream) or error is answered to the clients
// that waited, and the next miss asks again. A negative entry would need a second kind of record
// and its own TTL; it is left out.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "chronocache/base/thread_annotations.h"
#include "server/cluster/peer_connection.h"
#include "server/server_state.h"
#include "server/upstream/fetch_queue.h"
#include "server/upstream/upstream_address.h"

namespace chronocached {

class UpstreamFetcher {
 public:
  // `wake(loop)`: under the state lock, make loop `loop` retry its postponed sessions.
  using Wake = std::function<void(std::size_t loop)>;
  // Two threads: one fetch waits on the network while the other sends the next; more would
  // mostly add upstream connections on this two-core target (docs/design/server.md).
  static constexpr std::size_t kThreads = 2;
  // Keys per round trip at most: enough that a burst of misses costs few round trips, few enough
  // that the first key of a batch does not wait long for the others' replies.
  static constexpr std::size_t kMaxBatch = 64;

  UpstreamFetcher(ServerState& state, Wake wake) : state_(state), wake_(std::move(wake)) {}
  ~UpstreamFetcher() { stop(); }
  UpstreamFetcher(const UpstreamFetcher&) = delete;
  UpstreamFetcher& operator=(const UpstreamFetcher&) = delete;

  void start();
  // Fails what is queued, lets fetches under way end (each within the timeout), joins.
  void stop();

 private:
  struct Outcome;
  void run();
  // GET and PTTL for each of `jobs` over `connection` (opened if it is not), in one write, every
  // step within one `timeout`; a job queued more than that before `now_ms` fails unasked.
  // A connection that fails, times out or answers what GET and PTTL never do (an array) is
  // dropped, and the outcomes it leaves say connection_failed.
  static std::vector<Outcome> fetch(std::optional<PeerConnection>& connection,
                                    const UpstreamAddress& address,
                                    std::chrono::milliseconds timeout,
                                    std::span<const FetchQueue::Job> jobs, std::int64_t now_ms);
  // Moves the shared clock to the system's reading (as a loop's batch would).
  void advance_clock() CC_REQUIRES(state_.mu);
  // `prefetched`: the fetch was upstream-prefetch's (counted used once a client reads it).
  void deliver(const std::string& key, const Outcome& outcome, bool prefetched = false)
      CC_REQUIRES(state_.mu);

  ServerState& state_;
  Wake wake_;
  bool stopping_ CC_GUARDED_BY(state_.mu) = false;
  std::array<std::thread, kThreads> threads_;
};

}  // namespace chronocached
