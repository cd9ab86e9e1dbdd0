// read_ahead: the keys a reader should prefetch after reading `key`, from a SuccessorModel and the
// chain its stream has read ahead so far (ReadAheadChain). Shared by LoadingCache's prefetch and
// the server's upstream-prefetch (docs/design/loading.md, "Why read-ahead").
//
//   stream.advance_prehashed(model, key, key_hash);
//   read_ahead(model, stream, key, key_hash, {.max_per_get = 1, .depth = 4}, scratch, hash,
//              [&](const K& next, std::uint64_t next_hash) { prefetch(next); });
//
// What it emits: key's strongest max_per_get successors, then the strongest successor of the
// strongest, and so on, up to `depth` keys ahead, while the chain's probability (the product of
// its steps' confidences) stays at least the model's min_confidence: each key read ahead is as
// likely to be read as a successor must be to be predicted at all. A read of the key the chain
// expected next only moves it: its successors were emitted already, so it emits the chain's new
// front again (the key the reader reads next: a prefetch lost since is asked for once more) and
// the keys it adds at the far end, one model step in the steady state instead of `depth`. A read
// off the chain starts it afresh; depth 1 keeps no chain. A read of the key read just before
// (a GET retried after its fetch) emits nothing: its first read did. Each emitted key is hashed
// once, by `hash`, and its hash serves the next step's predict.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "chronocache/base/assert.h"
#include "chronocache/predict/access_stream.h"
#include "chronocache/predict/prediction.h"
#include "chronocache/predict/read_ahead_chain.h"

namespace chronocache {

struct ReadAheadLimits {
  std::size_t max_per_get = 1;  // key's own successors emitted, strongest first
  std::size_t depth = 1;        // keys ahead along the strongest successors, at most
};

// `stream` has just advanced to `key`; `model` is a SuccessorModel (predict_prehashed,
// options().min_confidence), the one the stream records into; `scratch` holds at
// least max(max_per_get, 1) predictions; hash(const K&) -> std::uint64_t is the model's hash;
// emit(const K&, std::uint64_t hash) is called for each key to prefetch, in order. Inlined into
// its caller: out of line, a hit with prefetch on cost 20 instructions more (callgrind,
// loading_hit_ops at depth 4: 623 against 603).
template <class K, class Model, class Hash, class Emit>
CC_ALWAYS_INLINE void read_ahead(const Model& model, AccessStream<K>& stream, const K& key,
                                 std::uint64_t key_hash, ReadAheadLimits limits,
                                 std::span<Prediction<K>> scratch, const Hash& hash, Emit&& emit) {
  ReadAheadChain<K>& chain = stream.read_ahead();
  const bool chained = limits.depth > 1;
  if (chained && stream.repeated() && !chain.empty()) return;  // the chain read from key holds
  if (!chained || !chain.advance_to(key)) chain.clear();
  const bool fresh = chain.empty();
  if (!fresh) emit(chain.front().key, chain.front().hash);
  if (fresh || limits.max_per_get > 1) {
    // The key's successors: the chain's first link when it starts afresh, and the others beside
    // it (they are not followed further).
    const std::size_t n =
        std::min(model.predict_prehashed(key, key_hash, scratch), limits.max_per_get);
    for (std::size_t i = fresh ? 0 : 1; i < n; ++i) {
      if (scratch[i].key == key) continue;  // a cycle back to the key being read
      const std::uint64_t next_hash = hash(scratch[i].key);
      if (i == 0 && chained) chain.push_back(scratch[0].key, next_hash, scratch[0].confidence);
      emit(scratch[i].key, next_hash);
    }
  }
  if (chain.empty() || chain.size() >= limits.depth) return;
  const double min_confidence = model.options().min_confidence;
  double reach = chain.probability();
  while (chain.size() < limits.depth) {
    const auto& end = chain.back();
    if (model.predict_prehashed(end.key, end.hash, scratch.first(1)) == 0) return;
    if (scratch[0].key == key) return;
    reach *= scratch[0].confidence;
    if (reach < min_confidence) return;
    const std::uint64_t next_hash = hash(scratch[0].key);
    chain.push_back(scratch[0].key, next_hash, scratch[0].confidence);
    emit(scratch[0].key, next_hash);
  }
}

}  // namespace chronocache
