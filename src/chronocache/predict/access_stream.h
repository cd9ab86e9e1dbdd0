// AccessStream<K>: one caller's "previous key", so that a SuccessorModel learns transitions
// within a sequence of reads and not between unrelated callers' reads; and the keys the caller
// has read ahead of it (ReadAheadChain), which belong to the same sequence.
//
//   thread_local chronocache::AccessStream<std::string> stream;   // or one per connection
//   stream.advance(model, key);            // records previous -> key, then remembers key
//   n = model.predict(key, predictions);
//
// A LoadingCache keeps one per thread, or takes one from its caller (a server connection: two
// clients on one thread are two sequences). Interleaving callers in one stream teaches the model
// transitions that nobody's sequence has.
//
// Not thread-safe: a stream belongs to one caller at a time. It stores the previous key and its
// hash, so advance_prehashed records without hashing again (the caller's hash of the new key is
// kept for the next transition). For keys owning heap memory, assigning the new key reuses the
// previous one's capacity, so a warm stream does not allocate for keys no longer than before.
#pragma once

#include <cstdint>
#include <utility>

#include "chronocache/predict/prediction.h"
#include "chronocache/predict/read_ahead_chain.h"

namespace chronocache {

template <class K>
class AccessStream {
 public:
  AccessStream() = default;

  // Records previous -> key in `model` (nothing on the stream's first key) and makes key the
  // previous one. Model is a SuccessorModel or anything with its hash and record_prehashed.
  template <class Model>
  RecordOutcome advance(Model& model, const K& key) {
    return advance_prehashed(model, key, model.hash(key));
  }
  // The same, with key's hash by the model's Hash.
  template <class Model>
  RecordOutcome advance_prehashed(Model& model, const K& key, std::uint64_t key_hash) {
    RecordOutcome outcome = RecordOutcome::kSkipped;
    if (has_previous_) outcome = model.record_prehashed(previous_, previous_hash_, key);
    repeated_ = has_previous_ && previous_ == key;
    if (!repeated_) previous_ = key;
    previous_hash_ = key_hash;
    has_previous_ = true;
    return outcome;
  }

  // Forgets the previous key and the chain read ahead of it: the next advance records nothing
  // (a new session, or a gap after which the next read is not a consequence of the last one).
  void reset() noexcept {
    has_previous_ = false;
    repeated_ = false;
    read_ahead_.clear();
  }

  // Whether the last advance read the same key as the one before it (a read retried, or a caller
  // reading a key twice): nothing new follows from it.
  bool repeated() const noexcept { return repeated_; }

  // What a reader that reads ahead (LoadingCache's prefetch) has read ahead of this stream.
  ReadAheadChain<K>& read_ahead() noexcept { return read_ahead_; }

  bool has_previous() const noexcept { return has_previous_; }
  // The previous key. Precondition: has_previous().
  const K& previous() const noexcept { return previous_; }

 private:
  K previous_{};
  std::uint64_t previous_hash_ = 0;
  bool has_previous_ = false;
  bool repeated_ = false;
  ReadAheadChain<K> read_ahead_;
};

}  // namespace chronocache
