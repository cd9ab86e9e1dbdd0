#include "server/upstream_fetcher.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/base/cycle_clock.h"
#include "server/cluster/peer_connection.h"
#include "server/commands/errors.h"
#include "server/upstream/upstream_address.h"

namespace chronocached {

struct UpstreamFetcher::Outcome {
  UpstreamWait::State state = UpstreamWait::State::kError;
  std::string text;                // the value, or the error reply without its '-'
  long long pttl_ms = -1;          // PTTL's answer: -1 no expiry, -2 gone meanwhile
  bool connection_failed = false;  // the upstream could not be reached or answered in time
};

namespace {

using Clock = std::chrono::steady_clock;

std::chrono::milliseconds left_until(Clock::time_point deadline) {
  return std::max(std::chrono::milliseconds(0),
                  std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
}

}  // namespace

void UpstreamFetcher::start() {
  for (std::thread& thread : threads_) thread = std::thread([this] { run(); });
}

void UpstreamFetcher::stop() {
  {
    const chronocache::MutexLock lock(state_.mu);
    if (stopping_) return;
    stopping_ = true;
  }
  state_.upstream_ready.notify_all();
  for (std::thread& thread : threads_)
    if (thread.joinable()) thread.join();
}

void UpstreamFetcher::run() {
  std::optional<PeerConnection> connection;
  for (;;) {
    std::vector<FetchQueue::Job> jobs;
    std::int64_t now_ms = 0;
    UpstreamAddress address;
    std::chrono::milliseconds timeout{0};
    {
      const chronocache::MutexLock lock(state_.mu);
      while (state_.upstream_fetches.queued() == 0 && !stopping_)
        state_.upstream_ready.wait(state_.mu);
      if (stopping_) {
        // The waiters are answered, not left postponed (their loops may still run a batch).
        while (std::optional<FetchQueue::Job> queued = state_.upstream_fetches.take())
          deliver(queued->key, Outcome{.text = errors::upstream_unavailable(
                                           state_.config.upstream, "server shutting down")});
        return;
      }
      jobs = state_.upstream_fetches.take_up_to(kMaxBatch);
      // Checked at start (Server::start_upstream): the address parses.
      address = parse_upstream_address(state_.config.upstream).value_or(UpstreamAddress{});
      timeout = std::chrono::milliseconds(state_.config.upstream_timeout_ms);
      advance_clock();
      now_ms = state_.clock.unix_ms();
    }
    const std::vector<Outcome> outcomes = fetch(connection, address, timeout, jobs, now_ms);
    const chronocache::MutexLock lock(state_.mu);
    const Outcome* broken = nullptr;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      deliver(jobs[i].key, outcomes[i], jobs[i].prefetch);
      if (outcomes[i].connection_failed) broken = &outcomes[i];
    }
    if (broken != nullptr) {
      while (std::optional<FetchQueue::Job> queued = state_.upstream_fetches.take())
        deliver(queued->key, *broken);
    }
  }
}

std::vector<UpstreamFetcher::Outcome> UpstreamFetcher::fetch(
    std::optional<PeerConnection>& connection, const UpstreamAddress& address,
    std::chrono::milliseconds timeout, std::span<const FetchQueue::Job> jobs, std::int64_t now_ms) {
  std::vector<Outcome> outcomes(jobs.size());
  const auto fail = [&](Outcome& outcome, std::string_view why) {
    outcome.state = UpstreamWait::State::kError;
    outcome.text = errors::upstream_unavailable(address.text, why);
  };
  std::vector<std::size_t> asked;  // the jobs sent, in the order of their replies
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (now_ms - jobs[i].queued_ms > timeout.count())
      fail(outcomes[i], "timed out in the fetch queue");
    else
      asked.push_back(i);
  }
  if (asked.empty()) return outcomes;
  const auto deadline = Clock::now() + timeout;
  std::string error;
  if (!connection) connection = PeerConnection::open(address.ip, address.port, timeout, error);
  std::size_t answered = 0;
  if (connection) {
    std::string request;
    for (const std::size_t i : asked) {
      const std::array<std::string_view, 2> get = {"GET", jobs[i].key};
      const std::array<std::string_view, 2> pttl = {"PTTL", jobs[i].key};
      append_request(request, get);
      append_request(request, pttl);
    }
    if (connection->send(request, left_until(deadline), error)) {
      for (; answered < asked.size(); ++answered) {
        std::optional<PeerReply> value = connection->read_reply(left_until(deadline), error);
        if (!value) break;
        const std::optional<PeerReply> ttl = connection->read_reply(left_until(deadline), error);
        if (!ttl) break;
        // An array or another reply GET and PTTL never give: what follows it cannot be told
        // apart from the next keys' replies, so this key and the rest of the batch fail.
        if (value->kind == PeerReply::Kind::kOther || ttl->kind == PeerReply::Kind::kOther) {
          error = "unexpected reply to GET or PTTL";
          break;
        }
        Outcome& outcome = outcomes[asked[answered]];
        if (value->kind == PeerReply::Kind::kBulk) {
          outcome.state = UpstreamWait::State::kValue;
          outcome.text = std::move(value->text);
        } else if (value->kind == PeerReply::Kind::kNil) {
          outcome.state = UpstreamWait::State::kNil;
        } else if (value->kind == PeerReply::Kind::kError) {
          outcome.text = std::move(value->text);  // WRONGTYPE and the like, as the upstream says
        } else {
          fail(outcome, "unexpected reply to GET");  // a simple string or an integer
        }
        if (ttl->kind == PeerReply::Kind::kInteger) {
          const std::string& t = ttl->text;
          std::from_chars(t.data(), t.data() + t.size(), outcome.pttl_ms);
        }
      }
    }
    if (answered < asked.size()) connection.reset();  // a half-read reply leaves it unusable
  }
  for (std::size_t j = answered; j < asked.size(); ++j) {
    Outcome& outcome = outcomes[asked[j]];
    fail(outcome, error);
    outcome.connection_failed = true;
  }
  return outcomes;
}

void UpstreamFetcher::advance_clock() {
  state_.set_clock_reading(BatchClock::system_now(), cycles_now());
}

void UpstreamFetcher::deliver(const std::string& key, const Outcome& outcome, bool prefetched) {
  const bool failed = outcome.state == UpstreamWait::State::kError;
  const bool stored =
      outcome.state == UpstreamWait::State::kValue && outcome.pttl_ms != -2 && outcome.pttl_ms != 0;
  if (stored) {
    advance_clock();  // the TTL counts from the fetch, not from the last batch's reading
    long long ttl_ms = state_.config.upstream_max_ttl_ms;
    if (outcome.pttl_ms > 0) ttl_ms = std::min(ttl_ms, outcome.pttl_ms);
    const chronocache::TimePoint now = state_.clock.now();
    state_.keyspace.db(0).put(key, outcome.text, now + std::chrono::milliseconds(ttl_ms), now);
  }
  const std::vector<std::uint64_t> waiters = state_.upstream_fetches.finish(key, failed);
  if (prefetched && stored) {  // used once read: by a client that joined it, or later (a hit)
    if (!waiters.empty()) {
      ++state_.upstream_prefetches_used;
    } else {
      if (state_.upstream_prefetched.size() >= ServerState::kPrefetchedTracked)
        state_.upstream_prefetched.clear();
      state_.upstream_prefetched.insert(key);
    }
  }
  std::set<std::size_t> loops;
  for (const std::uint64_t id : waiters) {
    const auto it = state_.clients.by_id.find(id);
    if (it == state_.clients.by_id.end()) continue;  // gone while it waited
    ClientState& client = *it->second;
    client.upstream = UpstreamWait{outcome.state, key, outcome.text};
    loops.insert(client.loop);
  }
  for (const std::size_t loop : loops) wake_(loop);
}

}  // namespace chronocached
