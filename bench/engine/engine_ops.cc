// engine_ops: runs one scenario's operations for one peer, for counting instructions with
// callgrind (bench/engine/run_instruction_counts.py, `make bench-instructions`).
//
// Wall time on a shared 2-core VM varies by tens of percent between runs; instructions executed do
// not. The timed part is run_ops(), kept out of line so callgrind can collect inside it alone
// (--toggle-collect): set-up, prefill and the clock's ticker thread are not counted. The peers and
// workloads are those of engine_bench, so the two measure the same code.
//
//   engine_ops <peer> <scenario> <ops>      scenarios: putSingle getHit GetMiss getRandomKeys
//   mixedZipf; peers: those of engine_bench. engine_ops_sharded, built from this file with
//   CC_ENGINE_OPS_SHARDED, has the one peer chronocache_sharded (ShardedCache). engine_ops_growth,
//   built with CC_ENGINE_OPS_GROWTH, has two scenarios for every peer: putStress (fresh keys into
//   a table that starts empty, so every step of its growth is counted) and putReserved (the same
//   keys into a table reserved for all of them: the insert alone).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "bench/common/sinks.h"
#include "bench/common/workloads.h"
#include "bench/engine/peers/all_peers.h"
#ifdef CC_ENGINE_OPS_SHARDED
#include "bench/engine/peers/sharded_peer.h"
#endif

namespace chronocache::bench {
namespace {

using namespace std::chrono_literals;

constexpr int kHitKey = 42;
constexpr int kSmallKeySpace = 1'000;
constexpr std::size_t kStreamLength = std::size_t{1} << 16;  // cycled by masking
constexpr int kZipfKeySpace = 1'000'000;

enum class Scenario { kPutSingle, kGetHit, kGetMiss, kGetRandomKeys, kMixedZipf };

template <class P>
[[gnu::noinline]] void run_ops(P& peer, Scenario scenario, long ops, const std::vector<int>& keys,
                               const std::vector<CacheOp>& stream) {
  for (long i = 0; i < ops; ++i) {
    const auto at = static_cast<std::size_t>(i) & (kStreamLength - 1);
    switch (scenario) {
      case Scenario::kPutSingle:
        peer.put(opaque(kHitKey), 99, 1s);
        break;
      case Scenario::kGetHit:
        consume(peer.get(opaque(kHitKey)));
        break;
      case Scenario::kGetMiss:
        consume(peer.get(opaque(-1)));
        break;
      case Scenario::kGetRandomKeys:
        consume(peer.get(keys[at]));
        break;
      case Scenario::kMixedZipf:
        if (stream[at].is_put) {
          peer.put(stream[at].key, stream[at].key, 60s);
        } else {
          consume(peer.get(stream[at].key));
        }
        break;
    }
  }
}

// putStress, in a binary of its own: one more call of put in this one changed how GCC inlines
// the others (putSingle 78 -> 84 instructions).
template <class P>
[[gnu::noinline]] void run_ops_fresh_puts(P& peer, long ops) {
  for (long i = 0; i < ops; ++i) peer.put(static_cast<int>(i), static_cast<int>(i), 60s);
}

// Exit status 1 unless every key was stored: the smoke tests' check, outside what callgrind
// counts.
template <ReservablePeer P>
int run_fresh_puts(long ops, bool reserved) {
  P peer;
  if (reserved) peer.reserve(static_cast<std::size_t>(ops));
  run_ops_fresh_puts(peer, ops);
  if (peer.size() == static_cast<std::size_t>(ops)) return 0;
  std::fprintf(stderr, "engine_ops_growth: %zu of %ld keys stored\n", peer.size(), ops);
  return 1;
}

template <class P>
int run(Scenario scenario, long ops) {
  P peer;
  std::vector<int> keys;
  std::vector<CacheOp> stream;
  if (scenario == Scenario::kGetRandomKeys) {
    for (int key = 0; key < kSmallKeySpace; ++key) peer.put(key, key, 60s);
    keys = uniform_keys(kStreamLength, kSmallKeySpace);
  } else if (scenario == Scenario::kMixedZipf) {
    for (int key = 0; key < kZipfKeySpace; ++key) peer.put(key, key, 60s);
    stream = zipf_op_stream({.ops = kStreamLength, .key_space = kZipfKeySpace});
  } else {
    peer.put(kHitKey, 99, 60s);
  }
  run_ops(peer, scenario, ops, keys, stream);
  return 0;
}

}  // namespace
}  // namespace chronocache::bench

int main(int argc, char** argv) {
  using namespace chronocache::bench;
  if (argc != 4) {
    std::fprintf(stderr, "usage: engine_ops <peer> <scenario> <ops>\n");
    return 2;
  }
  const std::string_view peer_name = argv[1];
  const std::string_view name = argv[2];
  const long ops = std::atol(argv[3]);
#ifdef CC_ENGINE_OPS_GROWTH
  if (name != "putStress" && name != "putReserved") {
    std::fprintf(stderr, "engine_ops_growth: scenarios are putStress and putReserved, not %s\n",
                 argv[2]);
    return 2;
  }
  int status = -1;
  AllPeers<int, int>::for_each([&](auto tag) {
    using P = typename decltype(tag)::type;
    if (P::kName == peer_name) status = run_fresh_puts<P>(ops, name == "putReserved");
  });
#else
  Scenario scenario;
  if (name == "putSingle")
    scenario = Scenario::kPutSingle;
  else if (name == "getHit")
    scenario = Scenario::kGetHit;
  else if (name == "GetMiss")
    scenario = Scenario::kGetMiss;
  else if (name == "getRandomKeys")
    scenario = Scenario::kGetRandomKeys;
  else if (name == "mixedZipf")
    scenario = Scenario::kMixedZipf;
  else {
    std::fprintf(stderr, "engine_ops: unknown scenario %s\n", argv[2]);
    return 2;
  }
  int status = -1;
#ifdef CC_ENGINE_OPS_SHARDED
  // A binary of its own: instantiating ShardedCache beside Cache in one program changes how GCC
  // inlines the Cache template they share (putSingle 80 -> 86 instructions for the Cache peer).
  using Peers = PeerList<ShardedPeer<int, int> >;
#else
  using Peers = AllPeers<int, int>;
#endif
  Peers::for_each([&](auto tag) {
    using P = typename decltype(tag)::type;
    if (P::kName == peer_name) status = run<P>(scenario, ops);
  });
#endif
  if (status < 0) std::fprintf(stderr, "engine_ops: unknown peer %s\n", argv[1]);
  return status < 0 ? 2 : status;
}
