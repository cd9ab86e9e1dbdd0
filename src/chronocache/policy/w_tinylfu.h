// WTinyLfu: Window TinyLFU with an adaptive window (G. Einziger, R. Friedman, B. Manes, "TinyLFU:
// A Highly Efficient Cache Admission Policy", ACM ToS 2017; the hill climber of Caffeine, B. Manes,
// after "Adaptive Software Cache Management", Middleware'18), with every reordering deferred from
// the hit to the victim search.
//
//   new key ─> window ──oldest unreferenced: candidate──> admission contest ──wins──> probation
//               ^   │ referenced: another lap             sketch freq of      referenced │
//               └───┘                                     candidate vs             at the v tail
//                                                         probation's oldest   protected (80 % of
//                                                         unreferenced:        main; overflow ->
//                                                         the loser leaves     probation)
//
// The window keeps new keys for a short while (recency: bursts hit there); leaving it, a key
// enters the main region only if the frequency sketch (policy/frequency_sketch.h: count-min, 4-bit
// counters, doorkeeper, halved every 10 x capacity sightings) has seen it more often than the entry
// it would displace. Main is a segmented LRU: probation, and protected for entries hit there.
//
// Lazy hits. A hit only bumps a saturating counter in a byte array (refs_) indexed by the entry's
// handle: no list moves and no sketch update, so a get costs about what it costs under TtlOnly.
// The work a hit asks for happens when a victim search reaches the entry: its hits are folded
// into the sketch, and instead of leaving it gets another lap (window, protected: CLOCK, an LRU
// approximation) or is promoted (probation -> protected). Contests are exact all the same: the
// candidate's and the victim's hits are folded before their estimates are read. Each entry a
// search passes over was paid for by a hit, so a search is O(1) amortised.
//
// Adaptive window, by shadow ghosts (the default). Two ghost queues (policy/ghost_queue.h: 32-bit
// fingerprints) remember the last 5 % x capacity entries to leave the window (admitted or not)
// and the last 5 % x capacity evicted from main. A miss on a key in the window's shadow is a hit
// a slightly larger window would have had: the window grows by one entry; a miss in main's shadow
// shrinks it by one. This is ARC's adaptation (N. Megiddo, D. Modha, FAST'03) applied to the
// window/main split: each region's marginal value is observed directly, event by event, where
// Caffeine's hill climber compares the hit ratios of successive samples, which on short traces
// or small caches are too few and too noisy to follow. A loop longer than the cache never comes
// back within a shadow's reach and leaves the window small; a recency-skewed trace grows it
// towards LRU. Measured over the sample traces of make bench-hitratio (73 trace/size pairs, average
// hit ratio, without the LRU duel below): fixed 1 % window 45.14, hill climber 45.71, shadow
// ghosts 45.95; on the 69 pairs Caffeine ran, shadow ghosts 47.24 against Caffeine's adaptive
// W-TinyLFU 46.50.
//
// LRU duel (both adaptive modes). Neither adaptation can take the window to the whole cache
// when only recency pays: on a zigzag (keys 1..n then n..1) a departure's return lies far beyond
// a shadow's reach and the filter keeps rejecting newcomers on ties, so the window stays small
// (lirs zigzag at 500 entries: 19.0 % against LRU's 24.0). So the policy also runs a miniature
// simulation (policy/mini_lru.h; Waldspurger et al., USENIX ATC'17, with SHARDS sampling,
// FAST'15): an exact LRU over a hash-sampled subset of the keys (1/8 of them, but at least 128
// and at most 1 024 keys' worth of the capacity, so it models an LRU of the full capacity), fed
// every request for a sampled key, beside a count of the real cache's hits on the same keys. When,
// over a period (2 x the shadow's size sampled requests, at least 1 000), LRU would have hit on 10
// % more of them, the window takes the whole cache (recency mode: a CLOCK, nothing filtered) for 8
// periods; then the adaptive window gets one trial period, and each trial LRU still wins doubles
// the hold (up to 64 periods). Recency mode is left early, and the duel sits out a hold, when the
// CLOCK falls as short of the shadow as the adaptive window did. The margin is wide because a false
// alarm costs a whole hold with an empty main region: at 2 % the duel fired on OLTP and web traces
// and lost more than it won. Hits never run the shadow: a sampled entry's first hit queues its
// handle in a 64-entry ring, replayed at the next miss (see sampled_hit), and the flag lives in the
// hit counter's top bit, so a hit still tests one byte. Measured over the 73 pairs: within 2 points
// of the best reference 59 -> 60 (zigzag at 200), average 45.95 -> 46.06 (69 Caffeine pairs: 47.24
// -> 47.36); zigzag at 500/1 000 and backf at 188/376 gain 1.4-2.9 points but stay short: the
// detection period and the trials cost more than 2 points on traces of 9 000-52 000 requests.
// Cost: a sampled hit pays a shadow access at the next miss: uniform hits over a full 1 000-entry
// cache 1.29x -> 1.87x TtlOnly; getHit 1.18x, Zipf mix 0.92-1.07x (noise) with the duel.
//
// Adaptive window, by hill climbing (Adaptation::kHillClimber). After each sample of requests
// (10 x capacity, bounded to [5 000, 50 000]), if the hit ratio improved the window keeps moving
// the same way, otherwise it turns round; steps decay by 2 % per sample and restart at 6.25 % of
// the capacity when the hit ratio jumps by 5 points (Caffeine's constants); the first step grows
// the window by 3 % (Caffeine shrinks it).
//
// The policy does not know the cache's capacity: it takes it as its entry count whenever the cache
// asks for a victim (the cache asks only when full, before inserting). Until the first eviction
// the window keeps its share of the entries present and the sketch grows with them.
//
// Per entry: the 4-byte handle in the slot, a 16-byte LinkedNodes node (its spare word holds a
// 30-bit key fingerprint, which keys the sketch since a hit carries no hash, and the queue) and one
// byte of hit counter and sample flag; ~9 bytes per entry of capacity for the sketch and ~2 for
// the shadows, plus at most 24 KiB for the duel's LRU shadow.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "chronocache/policy/eviction_policy.h"
#include "chronocache/policy/frequency_sketch.h"
#include "chronocache/policy/ghost_queue.h"
#include "chronocache/policy/linked_nodes.h"
#include "chronocache/policy/mini_lru.h"

namespace chronocache {

class WTinyLfu {
 public:
  struct Meta {
    detail::LinkedNodes::Handle node = 0;
  };

  // How the window's share of the capacity adapts to the workload.
  enum class Adaptation : std::uint8_t {
    kFixed,         // stays at initial_window
    kHillClimber,   // Caffeine's: follows the sampled hit ratio
    kShadowGhosts,  // follows which region's recent departures come back (see the header)
  };

  struct Options {
    double initial_window = 0.01;   // share of the capacity: Caffeine's 1 %
    double protected_share = 0.80;  // of main: Caffeine's 80 %
    Adaptation adaptation = Adaptation::kShadowGhosts;
    // The sketch ages every 10 x capacity sightings, but never more often than every this many:
    // a tiny cache (50 entries: every 500 sightings) would otherwise forget a loop's keys between
    // two passes and admit every newcomer (lirs loop and scan at 5 %: 0 -> 3.7-4.5 % hit ratio).
    double aging_min = 10'000;

    // kShadowGhosts: each shadow remembers this share of the capacity of departures, and each
    // return moves the window by this many entries. Measured over the traces (average hit
    // ratio): shares 0.02 / 0.05 / 0.10 gave 45.90 / 45.95 / 45.81, steps 0.5 / 1 / 2 gave
    // 45.93 / 45.95 / 45.81.
    double shadow_share = 0.05;
    double shadow_step_entries = 1;

    // kHillClimber. Requests per sample: 10 per entry (Caffeine), but at least 5 000 (fewer give
    // hit ratios too noisy to follow on small caches) and at most 50 000 (enough for a stable
    // estimate; more makes large caches adapt too slowly): +0.2 points on average.
    double climb_sample_per_entry = 10;
    double climb_sample_min = 5'000;
    double climb_sample_max = 50'000;
    double climb_step = 0.0625;   // restart step, share of the capacity
    double climb_decay = 0.98;    // per-sample step decay
    double climb_restart = 0.05;  // hit-ratio jump that restarts the step
    // The first move, share of the capacity. Caffeine shrinks first (-6.25 %); from a 1 % window
    // there is little to shrink, and growing first, by a smaller step, lets recency-skewed traces
    // reach a useful window within a short trace (+0.5 points on average, +2.7 on web07 at 2 048
    // entries), while loops turn back after one sample.
    double climb_first_step = 0.03;

    // LRU duel (any adaptation but kFixed; see the header): a shadow LRU over a hash-sampled
    // subset of keys: duel_max_rate of the capacity's worth, but at least duel_min_entries and at
    // most duel_shadow_entries (and never more than the capacity), modelling an LRU of the
    // cache's capacity. The rate bounds the cost: a sampled hit costs a shadow access (uniform
    // hits over a full 1 000-entry cache: 1.29x TtlOnly without the duel, 2.3x at rate 1/8,
    // 4.8x at rate 1); rates 1, 1/8, 1/16 gave 60 / 60 / 59 pairs within 2 points, means
    // 46.07 / 46.02 / 46.01; 1/8 with at least 128 entries 60 / 46.06 (tiny caches need the
    // larger sample: zigzag at 200 entries 7.5 -> 8.2). A period is duel_period_per_entry x the
    // shadow's size sampled requests, at least duel_period_min (shorter ones are noise on tiny
    // caches: backf at 38 entries fell 3.4 -> 0.4). If the shadow's hit ratio beat the real cache's
    // on the same keys by more than duel_margin over a period, the window takes the whole cache for
    // duel_hold periods, then the adaptive window gets a trial period; each failed trial doubles
    // the hold (up to 64 periods). Measured over the 73 pairs at rate 1 (within 2 points / mean):
    // margin 0.02: 57 / 45.89 (false alarms on OLTP, web12, multi3), 0.05: 60 / 46.03, 0.10: 61
    // / 46.08, 0.20: 58 / 46.00; hold 8 vs 16: 61 vs 60; without the duel 59 / 45.95.
    bool lru_duel = true;
    double duel_shadow_entries = 1024;
    double duel_period_per_entry = 2;
    double duel_period_min = 1000;
    double duel_margin = 0.10;
    double duel_max_rate = 0.125;
    double duel_min_entries = 128;
    double duel_hold = 8;
  };

  WTinyLfu() = default;
  explicit WTinyLfu(Options options) : options_(options), window_share_(options.initial_window) {}

  Meta on_insert(SlotId id, std::uint64_t hash) {
    drain_sampled_hits();
    const std::uint32_t fp = static_cast<std::uint32_t>(hash >> 32) & ~kQueueMask;
    sketch_.increment(sketch_key(fp));
    ++misses_in_sample_;
    if (options_.adaptation == Adaptation::kShadowGhosts && capacity_ != 0 && !recency_mode_) {
      // This miss would have been a hit with a window (or a main) larger by the shadow's size.
      if (window_shadow_.take(fp >> 2)) nudge_window(+options_.shadow_step_entries);
      if (main_shadow_.take(fp >> 2)) nudge_window(-options_.shadow_step_entries);
    }
    const Handle node = nodes_.allocate(id, fp | kWindow);
    if (node >= refs_.size()) refs_.resize(std::max<std::size_t>(2 * refs_.size(), 4096));
    refs_[node] = 0;
    if (duel() && sampled(fp)) {
      refs_[node] = kSampled;
      if (capacity_ != 0) sampled_request(fp, false);
    }
    nodes_.push_front(kWindow, node);
    ++count_[kWindow];
    if (capacity_ == 0) [[unlikely]]
      fill();
    return {node};
  }

  // The whole cost of a hit: one byte and one counter.
  void on_access(Meta& meta) noexcept {
    ++hits_in_sample_;
    std::uint8_t& refs = refs_[meta.node];
    if (refs >= kSampled) [[unlikely]] {
      sampled_hit(meta.node);
      return;
    }
    refs = static_cast<std::uint8_t>(refs + (refs < kMaxRefs ? 1 : 0));
  }

  void on_erase(Meta& meta) noexcept {
    drain_sampled_hits();  // the ring holds handles: none may be released while in it
    fold(meta.node);       // an entry erased by the host was still seen
    --count_[nodes_[meta.node].aux & kQueueMask];
    nodes_.unlink(meta.node);
    nodes_.release(meta.node);
  }
  void on_move(Meta& meta, SlotId id) noexcept { nodes_[meta.node].slot = id; }

  std::optional<SlotId> pick_victim() {
    drain_sampled_hits();
    const std::size_t total = size();
    if (total == 0) return std::nullopt;
    if (total != capacity_) set_capacity(total);
    if (options_.adaptation == Adaptation::kHillClimber && !recency_mode_) climb();

    // The newcomer needs a place in the window: when it is at its bound, its oldest unreferenced
    // entries leave it; all but the last join probation unopposed (only a shrinking window leaves
    // more than one), the last is the candidate.
    if (count_[kWindow] != 0 && count_[kWindow] >= window_max_) {
      Handle candidate = 0;
      while (count_[kWindow] != 0 && count_[kWindow] >= window_max_) {
        candidate = oldest_unreferenced(kWindow);
        move(candidate, kWindow, kProbation);
        if (shadows()) window_shadow_.insert(nodes_[candidate].aux >> 2);
      }
      const std::optional<Handle> victim = probation_victim(candidate);
      if (!victim) return nodes_[candidate].slot;
      if (admit(candidate, *victim)) {
        if (shadows()) main_shadow_.insert(nodes_[*victim].aux >> 2);
        return nodes_[*victim].slot;
      }
      return nodes_[candidate].slot;
    }
    if (const std::optional<Handle> victim = probation_victim(kNone)) {
      if (shadows()) main_shadow_.insert(nodes_[*victim].aux >> 2);
      return nodes_[*victim].slot;
    }
    for (std::uint32_t queue : {kProtected, kWindow}) {
      if (!nodes_.empty(queue)) return nodes_[oldest_unreferenced(queue)].slot;
    }
    return std::nullopt;
  }

  void clear() {
    nodes_.clear();
    sketch_.clear();
    count_[0] = count_[1] = count_[2] = 0;
    capacity_ = window_max_ = protected_max_ = 0;
    window_share_ = options_.initial_window;
    hits_in_sample_ = misses_in_sample_ = 0;
    previous_hit_ratio_ = 0;
    step_ = 0;
    recency_mode_ = trial_ = false;
    hold_ = options_.duel_hold;
    periods_left_ = blocked_periods_ = 0;
    sample_threshold_ = ~std::uint32_t{0};
    sampled_for_ = 0;
    sample_requests_ = sample_hits_ = lru_hits_ = 0;
    ring_size_ = 0;
    lru_shadow_.clear();
    window_shadow_.clear();
    main_shadow_.clear();
  }
  std::size_t memory_bytes() const noexcept {
    return nodes_.memory_bytes() + sketch_.memory_bytes() + refs_.capacity() +
           window_shadow_.memory_bytes() + main_shadow_.memory_bytes() + lru_shadow_.memory_bytes();
  }
  std::size_t growth_bytes_if_inserted() const noexcept {
    return nodes_.growth_bytes_if_allocated();
  }

  // Introspection for tests and the simulator.
  std::size_t size() const noexcept { return count_[0] + count_[1] + count_[2]; }
  std::size_t window_size() const noexcept { return count_[kWindow]; }
  std::size_t probation_size() const noexcept { return count_[kProbation]; }
  std::size_t protected_size() const noexcept { return count_[kProtected]; }
  std::size_t window_max() const noexcept { return window_max_; }
  double window_share() const noexcept { return window_share_; }
  bool recency_mode() const noexcept { return recency_mode_; }
  const detail::FrequencySketch& sketch() const noexcept { return sketch_; }

 private:
  using Handle = detail::LinkedNodes::Handle;
  static constexpr std::uint32_t kWindow = 0;
  static constexpr std::uint32_t kProbation = 1;
  static constexpr std::uint32_t kProtected = 2;
  static constexpr Handle kNone = 0;  // a sentinel's handle: never an entry
  // The node's spare word: | fingerprint:30 | queue:2 |
  static constexpr std::uint32_t kQueueMask = 3;
  // Hits remembered per entry between two looks: the sketch's counters stop at 15 anyway.
  static constexpr std::uint8_t kMaxRefs = 15;
  static constexpr std::uint8_t kRefsMask = 0x0F;
  // The refs_ byte's top bit: "maybe in the duel's sample, and not in the ring of sampled hits".
  // Set on insertion when the key is sampled at the rate of the moment, so a hit tests one byte it
  // loads anyway; the first hit on a flagged entry clears the flag (the entry joins the ring, or
  // is found to be no longer sampled), and draining the ring sets it again.
  static constexpr std::uint8_t kSampled = 0x80;
  static constexpr std::uint32_t kRingSize = 64;

  // The sketch wants a well-spread 64-bit key; the fingerprint's 30 bits are spread by an odd
  // multiplier (a bijection, so distinct fingerprints stay distinct).
  static std::uint64_t sketch_key(std::uint32_t aux) noexcept {
    return std::uint64_t{aux >> 2} * 0x9E37'79B9'7F4A'7C15ull;
  }

  // Hands the entry's pending hits to the sketch. True when it had any.
  bool fold(Handle h) noexcept {
    const unsigned refs = refs_[h] & kRefsMask;
    if (refs == 0) return false;
    refs_[h] &= kSampled;
    sketch_.increment(sketch_key(nodes_[h].aux), refs);
    return true;
  }

  void move(Handle h, std::uint32_t from, std::uint32_t to) noexcept {
    nodes_[h].aux = (nodes_[h].aux & ~kQueueMask) | to;
    --count_[from];
    ++count_[to];
    nodes_.move_to_front(to, h);
  }

  // CLOCK over one queue: referenced entries at the tail go round to the front (their hits
  // folded) until an unreferenced one is at the tail. Precondition: the queue is not empty.
  Handle oldest_unreferenced(std::uint32_t queue) noexcept {
    for (;;) {
      const Handle oldest = nodes_.back(queue);
      if (!fold(oldest)) return oldest;
      nodes_.move_to_front(queue, oldest);
    }
  }

  // Probation's oldest unreferenced entry other than `candidate`; the referenced ones met on the
  // way are promoted to protected. nullopt when probation holds no other entry and protected
  // none either; protected's oldest when only probation is empty.
  std::optional<Handle> probation_victim(Handle candidate) noexcept {
    Handle at = nodes_.empty(kProbation) ? kProbation : nodes_.back(kProbation);
    while (!nodes_.is_sentinel(at)) {
      const Handle newer = nodes_[at].prev;
      if (at != candidate) {
        if (!fold(at)) return at;
        move(at, kProbation, kProtected);
        if (count_[kProtected] > protected_max_) demote_protected();  // to probation's front
      }
      at = newer;
    }
    if (nodes_.empty(kProtected)) return std::nullopt;
    return oldest_unreferenced(kProtected);
  }

  // Protected's oldest unreferenced entry goes back to probation's front.
  void demote_protected() noexcept {
    move(oldest_unreferenced(kProtected), kProtected, kProbation);
  }

  // TinyLFU's contest: the candidate enters main only if seen more often than the victim. A
  // candidate that is fairly frequent (> 5) but loses still wins 1 time in 128, so an attacker
  // cannot keep a hot victim pinned by flooding the sketch with its collisions (Caffeine's guard).
  bool admit(Handle candidate, Handle victim) noexcept {
    const unsigned candidate_freq = sketch_.estimate(sketch_key(nodes_[candidate].aux));
    const unsigned victim_freq = sketch_.estimate(sketch_key(nodes_[victim].aux));
    if (candidate_freq > victim_freq) return true;
    if (candidate_freq <= 5) return false;
    random_ ^= random_ << 13;
    random_ ^= random_ >> 7;
    random_ ^= random_ << 17;
    return (random_ & 127) == 0;
  }

  void set_capacity(std::size_t capacity) {
    if (capacity_ == 0) {
      hits_in_sample_ = misses_in_sample_ = 0;  // samples count from the first eviction
      step_ = options_.climb_first_step * static_cast<double>(capacity);
    }
    capacity_ = capacity;
    sketch_.ensure_capacity(capacity);
    sketch_.set_aging_period(std::max(detail::FrequencySketch::aging_period_for(capacity),
                                      static_cast<std::size_t>(options_.aging_min)));
    apply_window_share();
    if (duel() && (capacity > 2 * sampled_for_ || 2 * capacity < sampled_for_)) configure_duel();
    if (shadows()) {
      const auto shadow =
          static_cast<std::size_t>(options_.shadow_share * static_cast<double>(capacity));
      window_shadow_.set_capacity(shadow);
      main_shadow_.set_capacity(shadow);
    }
  }

  bool shadows() const noexcept { return options_.adaptation == Adaptation::kShadowGhosts; }
  bool duel() const noexcept {
    return options_.lru_duel && options_.adaptation != Adaptation::kFixed;
  }

  // The sample: keys whose spread fingerprint falls under the threshold (rate threshold / 2^32).
  bool sampled(std::uint32_t aux) const noexcept {
    return ((aux >> 2) * 0x9E37'79B9u) <= sample_threshold_;
  }

  void configure_duel() {
    sampled_for_ = capacity_;
    const double cap = static_cast<double>(capacity_);
    const double entries =
        std::min({options_.duel_shadow_entries, cap,
                  std::max(options_.duel_max_rate * cap, options_.duel_min_entries)});
    const double rate = entries / static_cast<double>(capacity_);
    sample_threshold_ =
        rate >= 1 ? ~std::uint32_t{0} : static_cast<std::uint32_t>(rate * 4294967296.0);
    lru_shadow_.set_capacity(static_cast<std::size_t>(entries));
    sample_period_ = static_cast<std::size_t>(std::max(options_.duel_period_per_entry * entries,
                                                       options_.duel_period_min)) +
                     1;
    sample_requests_ = sample_hits_ = lru_hits_ = 0;
  }

  // A hit does not run the shadow (a hash lookup and list moves there would cost more than the
  // hit itself): a sampled entry's first hit puts its handle in a small ring, replayed in order at
  // the next miss, eviction or erase (or when the ring fills), which keeps the shadow's order of
  // requests. Further hits on an entry in the ring cost nothing more than any hit: the drain reads
  // how many there were off the entry's hit counter and counts them as hits on both sides (the
  // shadow would hit too: fewer distinct keys came between than the ring holds).
  void sampled_hit(Handle node) noexcept {
    const unsigned count = refs_[node] & kRefsMask;
    const auto counted = static_cast<std::uint8_t>(count + (count < kMaxRefs ? 1 : 0));
    if (capacity_ == 0) {  // the sample is not sized yet: keep the flag
      refs_[node] = static_cast<std::uint8_t>(kSampled | counted);
      return;
    }
    refs_[node] = counted;
    const std::uint32_t fp = nodes_[node].aux & ~kQueueMask;
    if (!sampled(fp)) return;
    if (ring_size_ == kRingSize) drain_sampled_hits();
    ring_refs_[ring_size_] = static_cast<std::uint8_t>(count);
    ring_fp_[ring_size_] = fp;
    ring_[ring_size_++] = node;
  }

  void drain_sampled_hits() noexcept {
    for (std::uint32_t i = 0; i < ring_size_; ++i) {
      const Handle node = ring_[i];
      sampled_request(ring_fp_[i], true);
      // The hits since it joined the ring, by its hit counter (no fold runs before a drain; a
      // saturated counter loses a few, which leaves them out of the sample on both sides).
      const int after = refs_[node] & kRefsMask;
      refs_[node] = static_cast<std::uint8_t>(after | kSampled);
      const auto repeats = static_cast<std::size_t>(std::max(after - ring_refs_[i] - 1, 0));
      sample_requests_ += repeats;
      sample_hits_ += repeats;
      lru_hits_ += repeats;
    }
    ring_size_ = 0;
  }

  // One request for a sampled key, a hit or not in the real cache; at the end of a period, the
  // duel's verdict.
  void sampled_request(std::uint32_t fp, bool real_hit) noexcept {
    ++sample_requests_;
    sample_hits_ += real_hit ? 1 : 0;
    lru_hits_ += lru_shadow_.access(fp >> 2) ? 1 : 0;
    if (sample_requests_ < sample_period_) return;
    const bool lru_wins = static_cast<double>(lru_hits_) - static_cast<double>(sample_hits_) >
                          options_.duel_margin * static_cast<double>(sample_requests_);
    sample_requests_ = sample_hits_ = lru_hits_ = 0;
    if (recency_mode_) {
      // The window's CLOCK is only an approximation of LRU: when it falls as short of the
      // shadow as the adaptive window did (past the first period, which refills the window),
      // recency mode is not delivering and the duel stays out for a whole hold.
      const bool failing = lru_wins && periods_left_ < static_cast<std::size_t>(hold_);
      if (--periods_left_ > 0 && !failing) return;
      recency_mode_ = false;  // a trial period for the adaptive window
      trial_ = !failing;
      blocked_periods_ = failing ? static_cast<std::size_t>(hold_) : 0;
      if (failing) hold_ = std::min(2 * hold_, 64.0);
      window_share_ = saved_share_;
      apply_window_share();
      return;
    }
    if (blocked_periods_ > 0) {
      --blocked_periods_;
      return;
    }
    if (lru_wins) {
      hold_ = trial_ ? std::min(2 * hold_, 64.0) : options_.duel_hold;
      periods_left_ = static_cast<std::size_t>(hold_);
      recency_mode_ = true;
      saved_share_ = window_share_;
      window_share_ = 1;
      apply_window_share();
      while (count_[kProtected] > protected_max_) demote_protected();
    }
    trial_ = false;
  }

  void nudge_window(double entries) {
    window_share_ = std::clamp(window_share_ + entries / static_cast<double>(capacity_), 0.0, 1.0);
    apply_window_share();
    while (count_[kProtected] > protected_max_) demote_protected();
  }

  // Until the first eviction reveals the capacity, the window keeps its share of the entries
  // present (the rest wait in probation, their hits counted), and the sketch grows with them
  // without aging.
  void fill() {
    const std::size_t total = size();
    if (total > sketch_.capacity()) sketch_.ensure_capacity(total);
    // Non-negative: + 0.5 then truncation rounds half up without a libm call on each insert.
    const auto window_max =  // NOLINTNEXTLINE(bugprone-incorrect-roundings)
        static_cast<std::size_t>(window_share_ * static_cast<double>(total) + 0.5);
    while (count_[kWindow] > window_max && count_[kWindow] > 1) {
      move(nodes_.back(kWindow), kWindow, kProbation);
    }
  }

  void apply_window_share() {
    // Rounded as in fill().
    // NOLINTNEXTLINE(bugprone-incorrect-roundings)
    window_max_ = static_cast<std::size_t>(window_share_ * static_cast<double>(capacity_) + 0.5);
    protected_max_ = static_cast<std::size_t>(options_.protected_share *
                                              static_cast<double>(capacity_ - window_max_));
  }

  // Caffeine's hill climber: once per sample, move the window by the step, in the direction that
  // last improved the hit ratio.
  void climb() {
    const std::size_t requests = hits_in_sample_ + misses_in_sample_;
    const double sample =
        std::clamp(options_.climb_sample_per_entry * static_cast<double>(capacity_),
                   options_.climb_sample_min, options_.climb_sample_max);
    if (static_cast<double>(requests) < sample) return;
    const double hit_ratio = static_cast<double>(hits_in_sample_) / static_cast<double>(requests);
    const double change = hit_ratio - previous_hit_ratio_;
    const double amount = change >= 0 ? step_ : -step_;
    const double cap = static_cast<double>(capacity_);
    step_ = std::abs(change) >= options_.climb_restart
                ? options_.climb_step * cap * (amount >= 0 ? 1 : -1)
                : options_.climb_decay * amount;
    previous_hit_ratio_ = hit_ratio;
    hits_in_sample_ = misses_in_sample_ = 0;
    window_share_ = std::clamp(window_share_ + amount / cap, 0.0, 1.0);
    apply_window_share();
    while (count_[kProtected] > protected_max_) demote_protected();
  }

  Options options_;
  detail::LinkedNodes nodes_{3};
  std::vector<std::uint8_t> refs_;  // hits since the last look, by node handle
  detail::FrequencySketch sketch_;
  detail::GhostQueue window_shadow_;  // the last window departures (admitted or not)
  detail::GhostQueue main_shadow_;    // the last evictions from main
  std::size_t count_[3] = {0, 0, 0};
  std::size_t capacity_ = 0;  // entries when last asked for a victim; 0 before the first
  std::size_t window_max_ = 0;
  std::size_t protected_max_ = 0;
  double window_share_ = Options{}.initial_window;
  std::size_t hits_in_sample_ = 0;
  std::size_t misses_in_sample_ = 0;
  double previous_hit_ratio_ = 0;
  double step_ = 0;
  // LRU duel
  detail::MiniLru lru_shadow_;
  std::uint32_t sample_threshold_ = ~std::uint32_t{0};
  std::size_t sampled_for_ = 0;  // the capacity the sample was sized for
  std::size_t sample_period_ = 1;
  std::size_t sample_requests_ = 0;
  std::size_t sample_hits_ = 0;
  std::size_t lru_hits_ = 0;
  std::uint32_t ring_size_ = 0;
  Handle ring_[kRingSize] = {};             // sampled hits since the last drain, in order
  std::uint32_t ring_fp_[kRingSize] = {};   // their fingerprints
  std::uint8_t ring_refs_[kRingSize] = {};  // each one's hit counter before that hit
  bool recency_mode_ = false;
  bool trial_ = false;
  double hold_ = Options{}.duel_hold;
  std::size_t periods_left_ = 0;
  std::size_t blocked_periods_ = 0;
  double saved_share_ = 0;
  std::uint64_t random_ = 0x9E37'79B9'7F4A'7C15ull;
};

static_assert(EvictionPolicy<WTinyLfu>);

}  // namespace chronocache
