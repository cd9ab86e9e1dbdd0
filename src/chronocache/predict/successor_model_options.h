// SuccessorModelOptions: the knobs of a SuccessorModel (successor_model.h), set at construction.
//
// The defaults are the ones bench/intelligence/prefetch_accuracy tuned on the four synthetic
// patterns (docs/design/prefetch.md has the table and the command): sequential, branching and
// cyclic streams are predicted, and a uniform random stream issues almost no predictions.
#pragma once

#include <cstddef>
#include <cstdint>

namespace chronocache {

struct SuccessorModelOptions {
  // Rows of the table, rounded up to a power of two (at least 1). Memory is rows x sizeof(row)
  // (64 bytes for 8-byte keys and 4 successors), plus, for keys that own heap memory, at most
  // (1 + successors) keys of up to max_key_bytes each per row: it never grows with the key space.
  // A key whose row belongs to another key competes for it (see owner_tenure).
  std::size_t rows = std::size_t{1} << 16;
  // A successor is predicted when its guaranteed count (its count less the count it inherited
  // when it took a weaker successor's place) is at least this fraction of the row's total.
  // Above 0.5 at most one key per row is predicted; at 0.5 both keys of a 50/50 pair are, and
  // below it several (a branch's two sides at 0.25). Why 0.6 (prefetch_accuracy, 100 000 keys):
  // against 0.5 it leaves sequential and cyclic streams as they were, lifts branching from 63.7 to
  // 66.6 % (fewer early guesses from a handful of transitions) and the traces' accuracy (arc_OLTP
  // 85 -> 91 %, lirs_sprite 73 -> 77 %), and stops predicting both sides of the 50/50 successors
  // of an alternating scan (lirs_zigzag: 1.26 predictions per read at 0.5, 32 % used; 0.04 at 0.6).
  double min_confidence = 0.6;
  // ... and at least this many transitions were seen to it since it entered the row. 2 keeps a
  // transition seen once (every transition of a random stream, at first) from being predicted.
  std::uint32_t min_count = 2;
  // Transitions recorded from a row's key between two halvings of its counts: the model's memory
  // of the past. A changed pattern takes over a row within about this many transitions from its
  // key; a smaller figure follows changes sooner and estimates confidence more noisily. At most
  // 32767 (counts are 16-bit).
  std::uint32_t decay_period = 64;
  // How many claims by other keys the row's key withstands, at most: each transition recorded
  // from the row's key adds one (up to this cap), each claim by another key hashed to the row
  // takes one, and at zero the claimant takes the row (its successors are forgotten). A key used
  // more often than its row's rivals keeps the row; one not used any more loses it to the next
  // rivals within this many claims.
  std::uint32_t owner_tenure = 8;
  // Keys with more bytes than this (for key types with a size(): strings) are neither recorded
  // nor predicted, which bounds the heap bytes a row holds. 0: no limit.
  std::size_t max_key_bytes = 256;
};

}  // namespace chronocache
