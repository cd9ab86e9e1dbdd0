// What a SuccessorModel answers: Prediction (one key worth prefetching, with its confidence) and
// RecordOutcome (what one recorded transition did to the model).
#pragma once

#include <cstdint>

namespace chronocache {

// One predicted next key. predict() fills a caller-owned span of these, strongest first; for keys
// that own heap memory (strings) the caller keeps the span between calls, so that assigning a key
// into it reuses the capacity left by the previous call and never allocates once warm.
template <class K>
struct Prediction {
  K key{};
  // The successor's guaranteed count over its row's total, in (0, 1]: the share of the
  // transitions from the predicted-from key that went to this key, by the model's estimate.
  float confidence = 0;
};

// What record() did. Callers may ignore it; tests and the accuracy tool read it.
enum class RecordOutcome : std::uint8_t {
  kCounted,  // the successor was already one of the row's: its count went up
  kAdded,    // a new successor took a free place or the weakest one's (space-saving)
  kClaimed,  // the row was empty or its key's tenure ran out: the row now holds `prev`
  kRowHeld,  // the row belongs to another key that withstood the claim: nothing recorded
  kBusy,     // another thread was writing the row: the transition was dropped (lossy)
  kSkipped,  // nothing to record: a self-transition, no previous key, or a key too long
};

}  // namespace chronocache
