// Adaptive TTL: a key's freshness TTL follows how often its value really changes. Each reload of
// a key whose previous value is still held compares the two: unchanged, the TTL doubles; changed,
// it halves; always within [min_ttl, max_ttl]. A key that is rewritten every few seconds settles
// near min_ttl (its readers see changes soon), one that never changes climbs to max_ttl (its
// loader is called ever more rarely). Off by default: AdaptiveTtlOptions::enabled.
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
};

// The whole rule, kept apart from the cache so that it is tested (and changed) on its own.
// Doubling saturates at max_ttl; halving at min_ttl. Precondition: 0 < min_ttl <= max_ttl.
inline Duration next_adaptive_ttl(Duration current, bool changed,
                                  const AdaptiveTtlOptions& options) noexcept {
  const Duration next = changed ? current / 2 : current * 2;
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
