// RowLock: a try-lock that is also a sequence counter (a seqlock), one per SuccessorModel row.
//
// One 32-bit word: even = free, odd = held. A writer takes it with one compare-exchange and, if
// it is held, gives up at once (try_lock): the model is statistical, so a transition dropped
// under contention costs nothing worth a wait. Unlocking adds one more, so every write section
// moves the word by two, which is what an optimistic reader checks:
//
//   const std::uint32_t begin = lock.read_begin();    // odd: a writer is in, retry later
//   ... load the row's fields with memory_order_acquire ...
//   if (!lock.read_is_unchanged(begin)) retry;        // a writer came and went: discard the copy
//
// Why acquire loads and release stores rather than Boehm's fences: GCC 12 cannot instrument
// std::atomic_thread_fence under ThreadSanitizer (-Wtsan), and on x86-64 an acquire load and a
// release store are plain moves, as relaxed ones are, so the reader costs the same. The writer's
// data stores are release stores made after its acquiring compare-exchange; a reader whose
// acquire load sees one of them therefore also sees the odd word (or a later one) when it reads
// the word again, and discards its copy. Fields read this way must all be std::atomic.
//
// Readers of keys that are not one atomic word (strings) cannot read optimistically (a torn
// std::string is a dangling pointer, not a stale value); they take the lock with
// try_lock_spinning instead, so readers of different rows still never meet.
#pragma once

#include <atomic>
#include <cstdint>

#include "chronocache/base/cpu_relax.h"
#include "chronocache/base/thread_annotations.h"

namespace chronocache::detail {

class CC_CAPABILITY("row lock") RowLock {
 public:
  RowLock() = default;
  RowLock(const RowLock&) = delete;
  RowLock& operator=(const RowLock&) = delete;

  // Takes the lock if it is free; false (at once) if another thread holds it.
  bool try_lock() CC_TRY_ACQUIRE(true) {
    std::uint32_t seen = seq_.load(std::memory_order_relaxed);
    if ((seen & 1) != 0) return false;
    return seq_.compare_exchange_strong(seen, seen + 1, std::memory_order_acquire,
                                        std::memory_order_relaxed);
  }
  // try_lock, up to `tries` times a pause apart: for readers that must hold the lock to copy (a
  // write section is a handful of stores, rarely a string's allocation).
  bool try_lock_spinning(int tries) CC_TRY_ACQUIRE(true) {
    for (; tries > 1; --tries) {
      if (try_lock()) return true;
      cpu_relax();
    }
    return try_lock();
  }
  // Waits for the lock, spinning: for rare whole-table walks (memory_bytes), never a hot path.
  void lock() CC_ACQUIRE() {
    while (!try_lock()) cpu_relax();
  }
  void unlock() CC_RELEASE() {
    seq_.store(seq_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

  // Optimistic reads (keys of one atomic word only; see the header). The word before the loads:
  // odd means a writer is in, and the copy would be discarded anyway.
  std::uint32_t read_begin() const noexcept { return seq_.load(std::memory_order_acquire); }
  // After the loads: whether no writer started since read_begin returned `begin`.
  bool read_is_unchanged(std::uint32_t begin) const noexcept {
    return (begin & 1) == 0 && seq_.load(std::memory_order_relaxed) == begin;
  }

 private:
  std::atomic<std::uint32_t> seq_{0};
};

}  // namespace chronocache::detail
