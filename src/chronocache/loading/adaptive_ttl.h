// Adaptive TTL: a key's freshness TTL follows how often its value really changes. Each reload of
// a key whose previous value is still held compares the two: unchanged, the TTL grows by a fixed
// `increase`; changed, it halves; always within [min_ttl, max_ttl]. Additive increase,
// multiplicative decrease, as TCP's congestion window.
//
// Why that rule: a key whose value changes every I (on average) and whose TTL is T is reloaded
// every T and served stale about T / 2I of the time. The TTLs that cost the fewest reloads for a
// given mean staleness over many keys grow as the square root of each key's I (minimise the sum of
// 1/T_k holding the sum of T_k/I_k fixed). Additive increase and halving settle exactly there: at
// equilibrium an unchanged reload's growth (increase, with probability 1 - T/I) balances a changed
// one's loss (T/2, with probability T/I), so T ~ sqrt(2 * increase * I). A key rewritten every
// second with `increase` 250 ms settles near 0.7 s, one rewritten every ten minutes near 17 s, and
// one never rewritten reaches sqrt(2 * increase * t) after t of watching it: no faster than the
// evidence that it is stable. Doubling on every unchanged reload, the rule this replaced, sent a
// stable key to max_ttl within a few reloads, so max_ttl alone set its staleness
// (docs/design/loading.md, "Adaptive TTL"). Off by default: AdaptiveTtlOptions::enabled.
//
// "Unchanged" is V's operator== unless a fingerprint (a version, a hash, an mtime) is given, which
// is then compared instead: cheaper for large values, and right for values whose == is not what
// "the source changed" means.
//
// Where the old value comes from, and why a stale read blocks: docs/design/loading.md,
// "Adaptive TTL".
#pragma once

#include <algorithm>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <functional>
#include <utility>

#include "chronocache/base/assert.h"
#include "chronocache/clock/clock.h"

namespace chronocache {

struct AdaptiveTtlOptions {
  bool enabled = false;
  Duration min_ttl{std::chrono::seconds(1)};
  Duration max_ttl{std::chrono::hours(1)};
  // What each unchanged reload adds to the key's TTL. It sets the trade: a key settles at about
  // sqrt(2 * increase * its change interval), so a larger increase means fewer reloads and more
  // stale reads, for every key alike.
  Duration increase{std::chrono::seconds(1)};
};

// The whole rule, kept apart from the cache so that it is tested (and changed) on its own.
// Growth saturates at max_ttl; halving at min_ttl. Preconditions: 0 < min_ttl <= max_ttl,
// 0 < increase.
inline Duration next_adaptive_ttl(Duration current, bool changed,
                                  const AdaptiveTtlOptions& options) noexcept {
  const Duration next = changed ? current / 2 : current + options.increase;
  return std::clamp(next, options.min_ttl, options.max_ttl);
}

// Whether a reload changed a key's value.
template <class V>
class ChangeDetector {
 public:
  using Fingerprint = std::function<std::uint64_t(const V&)>;

  // V's operator== decides (and V must have one).
  ChangeDetector() = default;
  // The fingerprints decide.
  explicit ChangeDetector(Fingerprint fingerprint) : fingerprint_(std::move(fingerprint)) {}

  bool changed(const V& before, const V& after) const {
    if (fingerprint_) return fingerprint_(before) != fingerprint_(after);
    if constexpr (std::equality_comparable<V>) {
      return !(before == after);
    } else {
      CC_CHECK(false, "adaptive TTL on a V without operator== needs a fingerprint");
      return true;
    }
  }

 private:
  Fingerprint fingerprint_;
};

}  // namespace chronocache
