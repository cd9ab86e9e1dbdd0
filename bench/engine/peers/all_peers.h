// The peers every engine scenario runs against, in table-column order. Adding a peer means one
// adapter header in this folder plus one entry here; scenarios and the runner pick it up.
#pragma once

#include "bench/engine/peers/cache_peer.h"
#include "bench/engine/peers/chronocache_peer.h"
#include "bench/engine/peers/flat_map_peer.h"
#include "bench/engine/peers/naive_peer.h"

namespace chronocache::bench {

template <class K, class V>
using AllPeers = PeerList<ChronoCachePeer<K, V>, CompactChronoCachePeer<K, V>, NaivePeer<K, V>,
                          BoostFlatPeer<K, V>, AbslFlatPeer<K, V>>;

}  // namespace chronocache::bench
