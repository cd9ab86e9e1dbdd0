// HeapTrimmer: gives the heap pages of shrunk tables back to the OS.
//
// The engine's table segments come from glibc's heap. glibc returns only the heap's top to the
// OS when memory is freed, so the segments that shrinking tables free (SegmentedTable::shrink,
// after keys are deleted or expire) stay resident in the middle of the heap. malloc_trim(0)
// releases every whole free page of the heap (glibc >= 2.8). It walks the heap, so it runs
// only once the tables have shrunk by kStepBytes since the last trim (or since their highest
// point), or by kSettledBytes and then stayed a second without shrinking further (segments that
// a mass delete left loose are refitted a few per tick: the last of them free less than a
// step), and at most once a second. INFO memory reports how many ran and how long the last
// took (heap_trims, heap_trim_last_usec; docs/design/memory.md has a measured one).
#pragma once

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "chronocache/clock/clock.h"
#include "server/store/keyspace.h"

namespace chronocached {

class HeapTrimmer {
 public:
  static constexpr std::size_t kStepBytes = std::size_t{8} << 20;
  static constexpr std::size_t kSettledBytes = std::size_t{1} << 20;
  static constexpr chronocache::Duration kMinInterval{1000};

  // From the server tick, under the state lock.
  void step(const Keyspace& keyspace, chronocache::TimePoint now) {
    std::size_t tables = 0;
    for (std::size_t i = 0; i < keyspace.count(); ++i) tables += keyspace.db(i).table_bytes();
    high_ = std::max(high_, tables);
    if (tables < last_tables_) last_shrink_ = now;
    last_tables_ = tables;
    const std::size_t freed = high_ - tables;
    const bool settled = freed >= kSettledBytes && now - last_shrink_ >= kMinInterval;
    if ((freed < kStepBytes && !settled) || now - last_trim_ < kMinInterval) return;
    const auto started = std::chrono::steady_clock::now();
    malloc_trim(0);
    last_trim_usec_ =
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                       std::chrono::steady_clock::now() - started)
                                       .count());
    ++trims_;
    last_trim_ = now;
    high_ = tables;
  }
  std::size_t trims() const { return trims_; }
  std::uint64_t last_trim_usec() const { return last_trim_usec_; }  // how long the last one took

 private:
  std::size_t high_ = 0;                  // the tables' bytes at their highest since the last trim
  std::size_t last_tables_ = 0;           // the tables' bytes at the last step
  chronocache::TimePoint last_shrink_{};  // the last step that saw them smaller
  chronocache::TimePoint last_trim_{};
  std::size_t trims_ = 0;
  std::uint64_t last_trim_usec_ = 0;
};

}  // namespace chronocached
