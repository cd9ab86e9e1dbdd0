// engine_bench: ChronoCache against its peers (bench/engine/peers), one Google Benchmark per
// scenario and peer, named `<scenario>/<peer>` (e.g. bm_getHit/chronocache). The table is made
// by bench/engine/run_engine_bench.py (`make bench`), which runs this binary with 5 repetitions
// and reports the median and spread of each; run it directly only to explore.
//
// Rules every scenario keeps, so the peers are measured doing the same work:
//   * one iteration is one cache operation, and its time is CPU time of the benchmark thread;
//   * set-up (construction, prefill, workload arrays) happens before the timed loop;
//   * workloads come precomputed from bench/common/workloads.h with seed 42 and are cycled by
//     masking, so no RNG runs inside the timed loop;
//   * results go through consume() (benchmark::DoNotOptimize) and constant keys through opaque(),
//     so the compiler can neither drop a lookup nor fold a constant key's hash at compile time;
//   * after the loop a cheap untimed check confirms the scenario did what it claims (hits hit,
//     puts stored), and a failed check marks the benchmark as an error instead of a number.
//
// Scenarios (K = V = int, TTL 60 s unless stated, so nothing expires during a run):
//   bm_putSingle           put(42, 99, 1s), overwriting one key
//   bm_putStress           put(key++, ...) x 12.8 M into a cache created empty per repetition
//   bm_getHit              get(42), present
//   bm_getRandomKeys       uniform random hits over 1 000 prefilled keys
//   bm_GetMiss             get(-1), absent, in a cache holding only key 42
//   bm_getRandomKeys_10M   uniform random hits over 10 M prefilled keys (misses cache and TLB)
//   bm_GetMiss_10M         uniform random absent keys against the same 10 M: a cache-aside
//                          miss in a large cache, where only a peer's control bytes are read
//   bm_putStress_10M       put(key++, ...) x 10 M into a cache created empty per repetition
//   bm_mixedZipf           90 % get / 10 % put, Zipf(0.99) over 1 M prefilled keys
//
// Policy cost (chronocache::Cache<int, int, Policy> per eviction policy, named
// `policy_<scenario>/<Policy>`; run_engine_bench.py prints them as their own table with each
// policy's ratio to TtlOnly). Every cache is bounded and full, so the evicting policies have
// evicted before the timed loop and keep evicting inside it; TtlOnly refuses new keys instead:
//   policy_getHit          get(42), present, in a full 1 000-entry cache
//   policy_getRandomKeys   uniform random hits over the 1 000 entries of a full cache
//   policy_mixedZipf       Zipf(0.99) over 1 M keys into a 500 000-entry cache: 10 % puts, 90 %
//                          gets, and a get that misses puts the key (cache-aside)
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "bench/common/sinks.h"
#include "bench/common/workloads.h"
#include "bench/engine/peers/all_peers.h"
#include "bench/engine/peers/cache_peer.h"
#include "chronocache/cache.h"
#include "chronocache/clock/coarse_clock.h"
#include "chronocache/policy/default_policy.h"
#include "chronocache/policy/lru.h"
#include "chronocache/policy/s3fifo.h"
#include "chronocache/policy/sieve.h"
#include "chronocache/policy/ttl_only.h"
#include "chronocache/policy/w_tinylfu.h"

namespace chronocache::bench {
namespace {

using namespace std::chrono_literals;

using Peers = AllPeers<int, int>;

constexpr int kHitKey = 42;
constexpr int kHitValue = 99;
constexpr int kAbsentKey = -1;
// Long enough that no entry expires during any scenario: the peers then all do the same work.
constexpr std::chrono::milliseconds kLongTtl = 60s;
constexpr std::chrono::milliseconds kShortTtl = 1s;

constexpr std::int64_t kPutStressIterations = 12'800'000;
constexpr std::int64_t kPutStress10MIterations = 10'000'000;

constexpr int kSmallKeySpace = 1'000;
constexpr std::size_t kSmallStreamLength = std::size_t{1} << 16;  // 256 KiB of keys: stays in L2
constexpr int kLargeKeySpace = 10'000'000;
constexpr std::size_t kLargeStreamLength = std::size_t{1} << 20;
constexpr int kZipfKeySpace = 1'000'000;
constexpr std::size_t kZipfStreamLength = std::size_t{1} << 20;

// The 10 M prefill is built once and shared by the repetitions of one peer (building it takes
// seconds). It is rebuilt when older than this, so every entry still has >= 30 s of its 60 s TTL
// left whenever a repetition starts, even with a long --benchmark_min_time.
constexpr auto kMaxLargePrefillAge = 30s;

static_assert((kSmallStreamLength & (kSmallStreamLength - 1)) == 0, "cycled by masking");
static_assert((kLargeStreamLength & (kLargeStreamLength - 1)) == 0, "cycled by masking");
static_assert((kZipfStreamLength & (kZipfStreamLength - 1)) == 0, "cycled by masking");

// Untimed sanity check after a timed loop: a failure turns the result into an error.
void expect(benchmark::State& state, bool ok, const char* what) {
  if (!ok) state.SkipWithError(what);
}

template <CachePeer P>
void prefill(P& peer, int count, std::chrono::milliseconds ttl) {
  for (int key = 0; key < count; ++key) peer.put(key, key, ttl);
}

const std::vector<int>& small_random_keys() {
  static const std::vector<int> keys = uniform_keys(kSmallStreamLength, kSmallKeySpace);
  return keys;
}

const std::vector<int>& large_random_keys() {
  static const std::vector<int> keys = uniform_keys(kLargeStreamLength, kLargeKeySpace);
  return keys;
}

const std::vector<CacheOp>& zipf_ops() {
  static const std::vector<CacheOp> ops =
      zipf_op_stream({.ops = kZipfStreamLength, .key_space = kZipfKeySpace});
  return ops;
}

// Holds the one prefilled 10 M-entry peer alive at a time; switching peers frees the previous
// one first, so at most one such table occupies memory.
struct LargePrefill {
  std::unique_ptr<void, void (*)(void*)> peer{nullptr, [](void*) {}};
  const void* owner = nullptr;  // type_tag<P>() of the peer held
  std::chrono::steady_clock::time_point filled_at;
};

LargePrefill& large_prefill() {
  static LargePrefill holder;
  return holder;
}

template <class P>
const void* type_tag() {
  static constexpr char kTag = 0;
  return &kTag;
}

template <CachePeer P>
P& prefilled_large_peer() {
  LargePrefill& holder = large_prefill();
  const auto now = std::chrono::steady_clock::now();
  if (holder.owner != type_tag<P>() || now - holder.filled_at > kMaxLargePrefillAge) {
    holder.peer.reset();
    holder.owner = nullptr;
    auto fresh = std::make_unique<P>();
    prefill(*fresh, kLargeKeySpace, kLongTtl);
    holder.peer = {fresh.release(), [](void* p) { delete static_cast<P*>(p); }};
    holder.owner = type_tag<P>();
    holder.filled_at = now;  // the first entry's TTL started here
  }
  return *static_cast<P*>(holder.peer.get());
}

// ---- Scenarios -------------------------------------------------------------------------------

template <CachePeer P>
void bm_put_single(benchmark::State& state) {
  P peer;
  for (auto _ : state) peer.put(opaque(kHitKey), kHitValue, kShortTtl);
  expect(state, peer.size() == 1 && peer.get(kHitKey) == kHitValue, "put did not store");
}

// bm_putStress and bm_putStress_10M: fresh keys into a cache that starts empty each repetition
// (the fixed iteration count makes one call per repetition), so growth is part of the cost.
// Each starts from a heap with nothing freed in it: the naive map's run before boost's left
// hundreds of MiB of freed nodes in glibc's heap, whose pages boost's smaller arrays then took
// without a page fault (boost's putStress_10M 45 ns after it, 61-64 ns run alone).
template <CachePeer P>
void bm_put_fresh_keys(benchmark::State& state) {
  malloc_trim(0);  // untimed: before the measured loop
  P peer;
  int key = 0;
  for (auto _ : state) {
    peer.put(key, key, kLongTtl);
    ++key;
  }
  expect(state, peer.size() == static_cast<std::size_t>(state.iterations()), "puts were lost");
}

template <CachePeer P>
void bm_get_hit(benchmark::State& state) {
  P peer;
  peer.put(kHitKey, kHitValue, kLongTtl);
  for (auto _ : state) {
    consume(peer.get(opaque(kHitKey)));
  }
  expect(state, peer.get(kHitKey) == kHitValue, "the key was lost");
}

template <CachePeer P>
void bm_get_random_keys(benchmark::State& state) {
  P peer;
  prefill(peer, kSmallKeySpace, kLongTtl);
  const std::vector<int>& keys = small_random_keys();
  std::size_t i = 0;
  for (auto _ : state) {
    consume(peer.get(keys[i++ & (kSmallStreamLength - 1)]));
  }
  expect(state, peer.size() == static_cast<std::size_t>(kSmallKeySpace), "entries were lost");
}

template <CachePeer P>
void bm_get_miss(benchmark::State& state) {
  P peer;
  peer.put(kHitKey, kHitValue, kLongTtl);
  for (auto _ : state) {
    consume(peer.get(opaque(kAbsentKey)));
  }
  expect(state, !peer.get(kAbsentKey).has_value(), "the absent key was found");
}

template <CachePeer P>
void bm_get_random_keys_10m(benchmark::State& state) {
  P& peer = prefilled_large_peer<P>();
  const std::vector<int>& keys = large_random_keys();
  std::size_t i = 0;
  for (auto _ : state) {
    consume(peer.get(keys[i++ & (kLargeStreamLength - 1)]));
  }
  expect(state, peer.size() == static_cast<std::size_t>(kLargeKeySpace), "entries were lost");
}

// Keys [kLargeKeySpace, 2 kLargeKeySpace): the same random stream, shifted past every stored key.
template <CachePeer P>
void bm_get_miss_10m(benchmark::State& state) {
  P& peer = prefilled_large_peer<P>();
  const std::vector<int>& keys = large_random_keys();
  std::size_t i = 0;
  std::size_t found = 0;
  for (auto _ : state) {
    const auto value = peer.get(keys[i++ & (kLargeStreamLength - 1)] + kLargeKeySpace);
    found += value.has_value();
    consume(value);
  }
  expect(state, found == 0 && peer.size() == static_cast<std::size_t>(kLargeKeySpace),
         "an absent key was found");
}

template <CachePeer P>
void bm_mixed_zipf(benchmark::State& state) {
  P peer;
  prefill(peer, kZipfKeySpace, kLongTtl);
  const std::vector<CacheOp>& ops = zipf_ops();
  std::size_t i = 0;
  for (auto _ : state) {
    const CacheOp& op = ops[i++ & (kZipfStreamLength - 1)];
    if (op.is_put) {
      peer.put(op.key, op.key, kLongTtl);
    } else {
      consume(peer.get(op.key));
    }
  }
  expect(state, peer.size() == static_cast<std::size_t>(kZipfKeySpace), "entries were lost");
}

// ---- Policy cost ---------------------------------------------------------------------------

constexpr std::size_t kPolicySmallEntries = 1'000;
constexpr std::size_t kPolicyZipfEntries = 500'000;

template <class Policy>
using PolicyCache = Cache<int, int, Policy>;

// Fills a cache bounded to `entries` with twice as many keys, so an evicting policy has evicted
// `entries` times (and learnt the capacity) before the timed loop.
template <class Policy>
void overfill(PolicyCache<Policy>& cache, std::size_t entries) {
  for (int key = 0; key < static_cast<int>(2 * entries); ++key) cache.put(key, key, kLongTtl);
}

template <class Policy>
void bm_policy_get_hit(benchmark::State& state) {
  PolicyCache<Policy> cache({.max_entries = kPolicySmallEntries});
  overfill(cache, kPolicySmallEntries);
  if (!cache.contains(kHitKey)) cache.put(kHitKey, kHitKey, kLongTtl);
  for (auto _ : state) consume(cache.get(opaque(kHitKey)));
  expect(state, cache.get(kHitKey) == kHitKey && cache.size() == kPolicySmallEntries,
         "the key was lost");
}

template <class Policy>
void bm_policy_get_random_keys(benchmark::State& state) {
  PolicyCache<Policy> cache({.max_entries = kPolicySmallEntries});
  overfill(cache, kPolicySmallEntries);
  std::vector<int> resident;
  for (int key = 0; key < static_cast<int>(2 * kPolicySmallEntries); ++key) {
    if (cache.contains(key)) resident.push_back(key);
  }
  // The workload's uniform stream over [0, 1000) picks among the resident keys.
  std::vector<int> keys = small_random_keys();
  for (int& key : keys) key = resident[static_cast<std::size_t>(key) % resident.size()];
  std::size_t i = 0;
  for (auto _ : state) consume(cache.get(keys[i++ & (kSmallStreamLength - 1)]));
  expect(state, cache.stats().misses == 0 && cache.size() == kPolicySmallEntries,
         "a resident key missed");
}

template <class Policy>
void bm_policy_mixed_zipf(benchmark::State& state) {
  PolicyCache<Policy> cache({.max_entries = kPolicyZipfEntries});
  overfill(cache, kPolicyZipfEntries);
  const std::vector<CacheOp>& ops = zipf_ops();
  std::size_t i = 0;
  for (auto _ : state) {
    const CacheOp& op = ops[i++ & (kZipfStreamLength - 1)];
    if (op.is_put || !cache.get(op.key)) cache.put(op.key, op.key, kLongTtl);
  }
  expect(state, cache.size() == kPolicyZipfEntries, "the cache is not full");
}

template <class Policy>
void register_policy(std::string_view policy) {
  const auto add = [&](std::string_view scenario, auto* function) {
    const std::string name = std::string(scenario) + "/" + std::string(policy);
    benchmark::RegisterBenchmark(name.c_str(), function)->Unit(benchmark::kNanosecond);
  };
  add("policy_getHit", &bm_policy_get_hit<Policy>);
  add("policy_getRandomKeys", &bm_policy_get_random_keys<Policy>);
  add("policy_mixedZipf", &bm_policy_mixed_zipf<Policy>);
}

// Policies in the order of the table; TtlOnly first: the others' ratios are to it.
void register_policy_scenarios() {
  register_policy<TtlOnly>("TtlOnly");
  register_policy<Lru>("Lru");
  register_policy<Sieve>("Sieve");
  register_policy<S3Fifo>("S3Fifo");
  register_policy<WTinyLfu>("WTinyLfu");
  static_assert(std::is_same_v<DefaultPolicy, WTinyLfu> || std::is_same_v<DefaultPolicy, S3Fifo> ||
                    std::is_same_v<DefaultPolicy, Sieve>,
                "DefaultPolicy is one of the policies measured here");
}

// ---- Registration ----------------------------------------------------------------------------

// Registers `<scenario>/<peer>` for every peer, adjacent to each other so that the peers of one
// scenario run back to back under the same machine conditions. `pick` maps a peer's
// std::type_identity to the scenario's function for it. iterations == 0 lets the library choose.
template <class Pick>
void register_scenario(std::string_view scenario, Pick pick, std::int64_t iterations = 0) {
  Peers::for_each([&](auto peer_tag) {
    const std::string name =
        std::string(scenario) + "/" + std::string(decltype(peer_tag)::type::kName);
    benchmark::internal::Benchmark* bench =
        benchmark::RegisterBenchmark(name.c_str(), pick(peer_tag));
    bench->Unit(benchmark::kNanosecond);  // CPU time (the default), for every scenario
    if (iterations != 0) bench->Iterations(iterations);
  });
}

void register_all_scenarios() {
  register_scenario("bm_putSingle",
                    [](auto tag) { return &bm_put_single<typename decltype(tag)::type>; });
  register_scenario(
      "bm_putStress", [](auto tag) { return &bm_put_fresh_keys<typename decltype(tag)::type>; },
      kPutStressIterations);
  register_scenario("bm_getHit",
                    [](auto tag) { return &bm_get_hit<typename decltype(tag)::type>; });
  register_scenario("bm_getRandomKeys",
                    [](auto tag) { return &bm_get_random_keys<typename decltype(tag)::type>; });
  register_scenario("bm_GetMiss",
                    [](auto tag) { return &bm_get_miss<typename decltype(tag)::type>; });
  register_scenario("bm_getRandomKeys_10M",
                    [](auto tag) { return &bm_get_random_keys_10m<typename decltype(tag)::type>; });
  register_scenario("bm_GetMiss_10M",
                    [](auto tag) { return &bm_get_miss_10m<typename decltype(tag)::type>; });
  register_scenario(
      "bm_putStress_10M", [](auto tag) { return &bm_put_fresh_keys<typename decltype(tag)::type>; },
      kPutStress10MIterations);
  register_scenario("bm_mixedZipf",
                    [](auto tag) { return &bm_mixed_zipf<typename decltype(tag)::type>; });
  register_policy_scenarios();
}

}  // namespace
}  // namespace chronocache::bench

int main(int argc, char** argv) {
  // One CoarseClock alive for the whole run: the shared ticker thread then wakes every 1 ms under
  // every peer alike (not only under those that own a CoarseClock), and constructing a peer
  // inside a benchmark never starts or joins that thread.
  [[maybe_unused]] const chronocache::CoarseClock keep_ticker_running;

  chronocache::bench::register_all_scenarios();
  benchmark::AddCustomContext("seed", std::to_string(chronocache::bench::kDefaultSeed));
  benchmark::AddCustomContext("time", "cpu");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  chronocache::bench::large_prefill().peer.reset();
  benchmark::Shutdown();
  return 0;
}
