// CachePeer: the one adapter interface every benchmarked implementation sits behind (Caffeine's
// cache/impl), so a scenario is written once and runs unchanged against ChronoCache and its peers.
//
// Contract shared by every peer (the semantics ChronoCache's Cache documents, reduced to what the
// scenarios exercise):
//   * put(key, value, ttl) stores or replaces `key` until now + ttl; ttl <= 0 removes the key.
//   * get(key) returns the value while now < deadline; an expired entry it meets is erased (lazy
//     expiry) and reported as a miss.
//   * size() counts stored entries. ChronoCache counts live ones only; the two agree whenever no
//     deadline has passed, which holds in every scenario (TTLs outlive the runs).
//   * kName is the peer's column in the table and the suffix of its benchmark names.
// Each peer uses its library's default hash and allocator: what a user gets out of the box.
#pragma once

#include <chrono>
#include <concepts>
#include <cstddef>
#include <optional>
#include <string_view>
#include <type_traits>

namespace chronocache::bench {

template <class P>
concept CachePeer = std::default_initializable<P> &&
    requires(P& peer, const P& const_peer, const typename P::key_type& key,
             typename P::mapped_type value, std::chrono::milliseconds ttl) {
  { P::kName } -> std::convertible_to<std::string_view>;
  peer.put(key, value, ttl);
  { peer.get(key) } -> std::same_as<std::optional<typename P::mapped_type>>;
  { const_peer.size() } -> std::same_as<std::size_t>;
};

// A peer that can make room for `entries` up front, as each library's reserve() does: the
// growth binary's putReserved scenario counts an insert without the table's growth.
template <class P>
concept ReservablePeer = CachePeer<P> && requires(P& peer, std::size_t entries) {
  peer.reserve(entries);
};

// A compile-time list of peers; for_each calls f(std::type_identity<Peer>{}) for each, in order.
template <CachePeer... Peers>
struct PeerList {
  template <class F>
  static void for_each(F&& f) {
    (f(std::type_identity<Peers>{}), ...);
  }
};

}  // namespace chronocache::bench
