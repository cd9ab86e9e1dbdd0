// Point-in-time capture: a consistent copy of a live cache's contents, handed out piece by piece
// while the cache keeps serving reads and writes. Snapshots (src/persistence/, the server's
// BGSAVE) are built on it; the engine itself writes no file.
//
//   Cache::begin_capture(sink, now)   every entry live at `now` will reach sink.capture(...)
//   Cache::capture_step(slots)        hands over the next pending chunks, about `slots` slots
//   any write meanwhile               first hands over the chunk it is about to change
//
// Copy-on-write without copying: a capture marks every chunk of the table pending (a chunk is
// one 16-slot group; a 256th of an oversized segment). The walk hands pending chunks to the sink
// in table order, and a write (put, erase, a deadline change, an eviction, a lookup that returns
// a mutable pointer) to a pending chunk first hands that chunk over as it still is; an insert
// that must grow its segment hands the whole segment over first, since growth moves every entry
// of it. So each entry reaches the sink exactly once, with the key, value and deadline it had
// when the capture began: the same promise a fork()ed child gives Redis, without duplicating a
// page. Segments created during the capture (the second half of a split) only ever receive
// entries of handed-over segments or written after the start, so they are never pending.
//
// What it costs: one predictable branch per write while no capture runs; during one, a write to
// a pending chunk pays for handing its (at most 16) entries over first, once per chunk. Nothing
// is allocated but 32 bytes of marks per segment. Reads through a const path
// (read_key_prehashed) hand nothing over.
//
// Left out: entries that expire while the capture runs may be left out (an expiry sweep or a
// lazy removal frees them without handing them over): they are dead by the time the capture
// is complete anyway.
#pragma once

#include "chronocache/clock/clock.h"

namespace chronocache {

// Receives a capture's entries. capture() runs inside the Cache call that hands the segment over
// (capture_step, or the write that met a pending segment), so it must not call into that cache.
template <class K, class V>
class CaptureSink {
 public:
  // One entry as it was when the capture began; `deadline` is kNoExpiry for none.
  virtual void capture(const K& key, const V& value, TimePoint deadline) = 0;

 protected:
  ~CaptureSink() = default;
};

}  // namespace chronocache
