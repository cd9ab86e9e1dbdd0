// ReadMostlyLock: a reader-writer lock whose readers write only a cache line of their own, so
// reads on different cores scale instead of bouncing one lock word between them. The
// distributed ("big reader") lock of Linux's brlock and percpu-rwsem, and folly's SharedMutex
// reader slots, cut down to what a cache shard needs.
//
//   ReadMostlyLock lock(stripes);
//   { ReadMostlyLock::Reader r(lock, lock.stripe_of_this_thread()); read(); }   // any number
//   { ReadMostlyLock::Writer w(lock); write(); }                                  // one, alone
//
//        writer_mu_  writing_        stripe 0        stripe 1     ...   stripe S-1
//       [ Mutex    | atomic<bool> ] [readers|log..] [readers|log..]     [readers|log..]
//        one line, written by         one line pair each, written by the threads mapped to it
//        writers only                 (thread i -> stripe i mod S, assigned at first use)
//
// Reader (fast path): readers.fetch_add(1) on its stripe, then load writing_. If no writer is
// there, it reads and finally readers.fetch_sub(1). Nothing shared is written: the stripe is
// shared only by threads that map to the same stripe (more threads than stripes).
// Reader (slow path, a writer present or arriving): it takes back its announcement and takes
// writer_mu_ instead, which a writer holds for its whole section, so it waits for the writer and
// then reads beside the fast-path readers (it writes nothing either); writers arriving meanwhile
// wait for it on writer_mu_. So a stream of readers cannot starve a writer.
// Writer: takes writer_mu_ (writers, slow readers and log drains exclude each other there), sets
// writing_, then waits until every stripe's readers count is 0; releases in reverse.
//
// Memory ordering, the whole argument (all four accesses below are seq_cst):
//   reader: R1 readers.fetch_add(1)      writer: W1 writing_.store(true)
//           R2 writing_.load()                   W2 readers.load() for each stripe
// This is Dekker's store-buffer pattern: in the single total order of seq_cst operations either
// R1 precedes W1 (then W2, after W1, sees the count >= 1 and the writer waits), or W1 precedes R1
// (then R2, after R1, sees true and the reader backs off). Both missing each other needs R2
// before W1 and W2 before R1, a cycle in a total order: impossible. A weaker order (R1 release,
// R2 acquire) would allow it: x86 lets a load pass an earlier store to another address. The
// data itself is published by acquire/release pairs: the writer's unlock stores writing_ = false
// with release and the reader's R2 reads it (acquire), so the reader sees every write of the
// section; the reader's fetch_sub is a release and W2's load an acquire, so the writer's writes
// come after everything the reader read. Slow readers are ordered by writer_mu_ itself.
// Cost on x86: two locked instructions and a load per read, all on the reader's own lines
// (~20 ns uncontended pair); a writer pays a load per stripe, a cache miss for each stripe a
// reader on another core touched since (docs/design/engine.md models it per core count).
//
// Each stripe also carries what readers of a ShardedCache record without sharing a line: hit
// and miss counts and a small lossy log of accessed slots (the "read buffer" of Caffeine),
// drained under writer_mu_. They are plain words to this class; sharded_cache.h gives them
// meaning.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>

#include "chronocache/base/assert.h"
#include "chronocache/base/mutex.h"
#include "chronocache/base/thread_annotations.h"

namespace chronocache {

class CC_CAPABILITY("read-mostly lock") ReadMostlyLock {
 public:
  // Slots a stripe's access log keeps before further entries are dropped.
  static constexpr std::size_t kLogCapacity = 26;

  // One reader stripe: two cache lines written only by the threads mapped to it (and cleared by
  // a drain). The first line is all a writer reads when the log is empty.
  struct alignas(64) Stripe {
    std::atomic<std::uint32_t> readers{0};  // readers inside, announced
    std::atomic<std::uint32_t> logged{0};   // log entries claimed (may exceed kLogCapacity)
    std::atomic<std::uint64_t> hits{0};
    std::atomic<std::uint64_t> misses{0};
    // Accessed slot ids + 1 (0: empty). Entries are claimed with logged.fetch_add and
    // cleared by the drain with exchange, so a drain never reads one twice.
    std::atomic<std::uint32_t> log[kLogCapacity] = {};
  };
  static_assert(sizeof(Stripe) == 128, "two cache lines per stripe: the counters, then the log");

  // `stripes` is rounded up to a power of two; 0 picks twice the hardware threads (at least 8,
  // at most 128), so threads assigned round-robin rarely share one.
  explicit ReadMostlyLock(std::size_t stripes = 0) { set_stripe_count(stripes); }
  ReadMostlyLock(const ReadMostlyLock&) = delete;
  ReadMostlyLock& operator=(const ReadMostlyLock&) = delete;
  // As the constructor's argument; only before any other thread can see the lock.
  void set_stripe_count(std::size_t stripes) {
    stripe_mask_ = std::bit_ceil(stripes != 0 ? stripes : default_stripes()) - 1;
    stripes_ = std::make_unique<Stripe[]>(stripe_mask_ + 1);
  }

  std::size_t stripe_count() const noexcept { return stripe_mask_ + 1; }
  Stripe& stripe(std::size_t i) noexcept { return stripes_[i]; }
  const Stripe& stripe(std::size_t i) const noexcept { return stripes_[i]; }
  // This thread's stripe: threads are numbered in the order they first ask.
  CC_ALWAYS_INLINE Stripe& stripe_of_this_thread() noexcept {
    return stripes_[thread_number() & stripe_mask_];
  }

  // ---- Exclusive (writers) ---------------------------------------------------------------
  void lock() CC_ACQUIRE() {
    writer_mu_.lock();
    writing_.store(true, std::memory_order_seq_cst);                                // W1
    for (std::size_t i = 0; i <= stripe_mask_; ++i) wait_for_readers(stripes_[i]);  // W2
  }
  void unlock() CC_RELEASE() {
    writing_.store(false, std::memory_order_release);
    writer_mu_.unlock();
  }

  // ---- Shared, through writer_mu_ only: excludes writers, not fast readers. For whole-shard
  // reads (size, stats) and drains of the log, which a fast reader never sees mid-way.
  // Const: holding the mutex changes nothing a reader of the guarded data could see.
  void lock_shared_slow() const CC_ACQUIRE_SHARED() { writer_mu_.lock(); }
  bool try_lock_shared_slow() const CC_TRY_ACQUIRE_SHARED(true) { return writer_mu_.try_lock(); }
  void unlock_shared_slow() const CC_RELEASE_SHARED() { writer_mu_.unlock(); }

  // A read section: the fast path when no writer is there, else through writer_mu_. Its state
  // stays in registers (the slow path is a static function that takes no pointer to it), so the
  // fast path is two locked instructions, a load and two branches.
  class CC_SCOPED_CAPABILITY Reader {
   public:
    CC_ALWAYS_INLINE Reader(ReadMostlyLock& lock, Stripe& stripe) CC_ACQUIRE_SHARED(lock)
        : lock_(lock), stripe_(stripe) {
      stripe.readers.fetch_add(1, std::memory_order_seq_cst);          // R1
      if (lock.writing_.load(std::memory_order_seq_cst)) [[unlikely]]  // R2
        fast_ = enter_slow(lock, stripe);
    }
    CC_ALWAYS_INLINE ~Reader() CC_RELEASE() {
      if (fast_) [[likely]]
        stripe_.readers.fetch_sub(1, std::memory_order_release);
      else
        leave_slow(lock_);
    }
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;

    // False when this section went through writer_mu_ (a writer was there).
    bool fast() const noexcept { return fast_; }

   private:
    [[gnu::noinline]] static bool enter_slow(ReadMostlyLock& lock,
                                             Stripe& stripe) CC_NO_THREAD_SAFETY_ANALYSIS {
      stripe.readers.fetch_sub(1, std::memory_order_release);
      lock.writer_mu_.lock();
      return false;
    }
    [[gnu::noinline]] static void leave_slow(ReadMostlyLock& lock) CC_NO_THREAD_SAFETY_ANALYSIS {
      lock.writer_mu_.unlock();
    }
    ReadMostlyLock& lock_;
    Stripe& stripe_;
    bool fast_ = true;
  };

  // A write section.
  class CC_SCOPED_CAPABILITY Writer {
   public:
    explicit Writer(ReadMostlyLock& lock) CC_ACQUIRE(lock) : lock_(lock) { lock.lock(); }
    ~Writer() CC_RELEASE() { lock_.unlock(); }
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;

   private:
    ReadMostlyLock& lock_;
  };

 private:
  static std::size_t default_stripes() noexcept {
    const std::size_t cores = std::thread::hardware_concurrency();
    return cores * 2 < 8 ? 8 : (cores * 2 > 128 ? 128 : cores * 2);
  }
  CC_ALWAYS_INLINE static std::size_t thread_number() noexcept {
    static constinit thread_local std::size_t number = 0;  // 0: not assigned yet
    if (number == 0) [[unlikely]]
      number = next_thread_number();
    return number - 1;
  }
  [[gnu::noinline]] static std::size_t next_thread_number() noexcept {
    static std::atomic<std::size_t> next{0};
    return next.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  // Readers are inside for a lookup and a copy: spin briefly, then let them run.
  static void wait_for_readers(const Stripe& stripe) noexcept {
    for (int spins = 0; stripe.readers.load(std::memory_order_seq_cst) != 0; ++spins) {
      if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      } else {
        std::this_thread::yield();
      }
    }
  }

  mutable Mutex writer_mu_;
  std::atomic<bool> writing_{false};
  std::size_t stripe_mask_ = 0;
  std::unique_ptr<Stripe[]> stripes_;
};

}  // namespace chronocache
