// ReadMostlyLock: a reader-writer lock whose readers write only a cache line of their own, so
// reads on different cores scale instead of bouncing one lock word between them. The
// distributed ("big reader") lock of Linux's brlock and percpu-rwsem, and folly's SharedMutex
// reader slots, cut down to what a cache shard needs.
//
//   ReadMostlyLock lock(stripes);
//   { ReadMostlyLock::Reader r(lock, lock.stripe_of_this_thread()); read(); }   // any number
//   { ReadMostlyLock::Writer w(lock); write(); }                                  // one, alone
//
//        writer_mu_       stripe 0              stripe 1           ...   stripe S-1
//       [ Mutex ]        [state|hits|log..]    [state|hits|log..]        [state|hits|log..]
//        writers,         two lines each, written by the threads mapped to the stripe
//        slow readers     (thread i -> stripe i mod S, assigned at first use), and by writers
//                         twice per write section (set and clear the writer bit)
//
// A stripe's `state` word holds its readers count (low 31 bits) and the writer bit (bit 31).
//   Reader: state.fetch_add(1). If the old value had no writer bit, it is in: it reads, then
//     state.fetch_sub(1). Otherwise it takes its 1 back, spins until the bit clears, retries a
//     few times, and if a writer stays (preempted, a long clear) sleeps on writer_mu_; holding
//     it, no writer is inside and every bit is clear, so it adds its 1 as a fast reader would,
//     lets the mutex go and reads as one. Every read section therefore ends the same way. Nothing
//     shared is written: a stripe is shared only by threads that map to the same stripe (more
//     threads than stripes), which is correct, only slower.
//   Writer: takes writer_mu_ (writers, sleeping readers and log replays exclude each other
//     there), fetch_or's the writer bit into every stripe, then waits until every stripe's
//     count is 0. Unlock: fetch_and's the bit out of every stripe, releases writer_mu_. Setting
//     every bit before waiting keeps readers out of the later stripes while it waits.
//
// Memory ordering. Reader and writer meet on one atomic word per stripe, through
// read-modify-writes, which the modification order of that word puts in a single order: a
// reader's fetch_add comes before the writer's fetch_or (the writer's value then includes the
// reader, and it waits until the reader's fetch_sub) or after it (the reader's fetch_add then
// returns the bit, and it backs off). No store-buffer (Dekker) reasoning and no seq_cst is
// needed, because no thread stores one location and then loads another. Data: the writer's
// fetch_and (release) is read by the reader's next fetch_add (acquire) directly or through the
// release sequence of RMWs on the word, so the reader sees the whole write section; the
// reader's fetch_sub (release) is read by the writer's waiting load (acquire), so the section
// comes after the read. Sleeping readers are ordered by writer_mu_.
// (A first version kept the writer flag in its own line with a seq_cst store/load pair per side:
// a write then moved 4 cache lines between cores instead of 2, and 90 % gets on 2 threads
// scaled worse; docs/design/engine.md has the numbers.)
//
// Cost on x86: two locked instructions per read, on the reader's own line. A write: writer_mu_
// plus two locked instructions per stripe, each a cache-line transfer for a stripe that a reader
// on another core touched since (the model per core count is in docs/design/engine.md).
//
// Each stripe also carries what readers of a ShardedCache record without sharing a line: hit
// and miss counts and a small lossy log of accessed slots (the "read buffer" of Caffeine),
// replayed under writer_mu_. They are plain words to this class; sharded_cache.h gives them
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
  static constexpr std::size_t kLogCapacity = 12;
  static constexpr std::uint32_t kWriterBit = std::uint32_t{1} << 31;

  // One reader stripe: two cache lines written only by the threads mapped to it (and by
  // writers, see above). The first line is all a writer touches when the log is empty.
  struct alignas(64) Stripe {
    std::atomic<std::uint32_t> state{0};   // readers inside (low bits) | kWriterBit
    std::atomic<std::uint32_t> logged{0};  // log entries claimed (may exceed kLogCapacity)
    std::atomic<std::uint64_t> hits{0};
    std::atomic<std::uint64_t> misses{0};
    // Bumped by every replay of the log: an entry counts only if it carries the current one.
    std::atomic<std::uint32_t> generation{0};
    // Accessed slots: generation << 32 | (slot id + 1); 0: empty. Claimed with
    // logged.fetch_add, consumed by the replay with exchange.
    alignas(8) std::atomic<std::uint64_t> log[kLogCapacity] = {};
  };
  static_assert(sizeof(Stripe) == 128, "two cache lines per stripe: the counters, then the log");

  // `stripes` is rounded up to a power of two; 0 picks the hardware threads (at least 2, at most
  // 128).
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
  // This thread's stripe: threads are numbered 1, 2, ... in the order they first ask, and
  // thread n takes stripe n mod S (round-robin, so S threads never share one).
  CC_ALWAYS_INLINE Stripe& stripe_of_this_thread() noexcept {
    return stripes_[thread_number() & stripe_mask_];
  }

  // ---- Exclusive (writers) ---------------------------------------------------------------
  void lock() CC_ACQUIRE() {
    // Another writer's section is as short: spin on try_lock before sleeping in the mutex.
    for (int spins = 0; !writer_mu_.try_lock(); ++spins) {
      if (spins == kSpins) {
        writer_mu_.lock();
        break;
      }
      cpu_relax();
    }
    for (std::size_t i = 0; i <= stripe_mask_; ++i)
      stripes_[i].state.fetch_or(kWriterBit, std::memory_order_acquire);
    for (std::size_t i = 0; i <= stripe_mask_; ++i) wait_for_readers(stripes_[i]);
  }
  void unlock() CC_RELEASE() {
    for (std::size_t i = 0; i <= stripe_mask_; ++i)
      stripes_[i].state.fetch_and(~kWriterBit, std::memory_order_release);
    writer_mu_.unlock();
  }

  // ---- Shared, through writer_mu_ only: excludes writers, not fast readers. For whole-shard
  // reads (size, stats) and replays of the log, which a fast reader never sees mid-way.
  // Const: holding the mutex changes nothing a reader of the guarded data could see.
  void lock_shared_slow() const CC_ACQUIRE_SHARED() { writer_mu_.lock(); }
  bool try_lock_shared_slow() const CC_TRY_ACQUIRE_SHARED(true) { return writer_mu_.try_lock(); }
  void unlock_shared_slow() const CC_RELEASE_SHARED() { writer_mu_.unlock(); }

  // A read section: in when no writer is there, else (rarely) after waiting for writers. Either
  // way it ends with one fetch_sub on the stripe, so the fast path is two locked instructions and
  // a branch, with nothing to remember between them.
  class CC_SCOPED_CAPABILITY Reader {
   public:
    // The writer bit is the sign bit, and the count never reaches it: "the new value is
    // negative" is "a writer is there", which x86 reads from the flags of one `lock add` (the
    // old value's bit took a `lock xadd`, a register load and a test: callgrind, 2 instructions
    // a read).
    CC_ALWAYS_INLINE Reader(ReadMostlyLock& lock, Stripe& stripe) CC_ACQUIRE_SHARED(lock)
        : stripe_(stripe) {
      static_assert(kWriterBit == std::uint32_t{1} << 31);
      if (static_cast<std::int32_t>(stripe.state.fetch_add(1, std::memory_order_acquire) + 1) < 0)
          [[unlikely]]
        enter_slow(lock, stripe);
    }
    CC_ALWAYS_INLINE ~Reader() CC_RELEASE() {
      stripe_.state.fetch_sub(1, std::memory_order_release);
    }
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;

   private:
    // A writer is there. Write sections are short (a put: ~0.1-0.4 us), so the reader steps
    // aside, spins until the bit clears and tries again; only a writer that stays sends it to
    // sleep on writer_mu_. Sleeping at once cost a futex wait and wake per collision. Holding
    // writer_mu_, no writer is inside (a writer holds it from before it sets the bits until
    // after it clears them), so the reader's fetch_add finds the bit clear and counts it in as
    // a fast reader; a writer that comes next waits for it like any other. The mutex orders the
    // departed writer's section before this read.
    [[gnu::noinline]] static void enter_slow(ReadMostlyLock& lock,
                                             Stripe& stripe) CC_NO_THREAD_SAFETY_ANALYSIS {
      for (int round = 0; round < kReaderRetries; ++round) {
        stripe.state.fetch_sub(1, std::memory_order_relaxed);  // read nothing: nothing to order
        for (int spins = 0;
             spins < kSpins && (stripe.state.load(std::memory_order_relaxed) & kWriterBit) != 0;
             ++spins)
          cpu_relax();
        if ((stripe.state.fetch_add(1, std::memory_order_acquire) & kWriterBit) == 0) return;
      }
      stripe.state.fetch_sub(1, std::memory_order_relaxed);
      lock.writer_mu_.lock();
      const std::uint32_t before = stripe.state.fetch_add(1, std::memory_order_acquire);
      CC_ASSERT((before & kWriterBit) == 0);
      static_cast<void>(before);
      lock.writer_mu_.unlock();
    }
    Stripe& stripe_;
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
  // Pauses of a spin before sleeping or yielding: ~128 x 40-140 cycles (the pause latency of
  // recent x86 cores), a few microseconds, longer than any read or write section.
  static constexpr int kSpins = 128;
  // Times a reader steps aside for writers before it sleeps on writer_mu_.
  static constexpr int kReaderRetries = 4;

  // One stripe per hardware thread: a writer pays two locked instructions per stripe, so more
  // stripes than cores only cost writes (8 stripes on this 2-core machine: 426 ns per put at
  // 90 % gets, one thread; 2 stripes: see docs/design/engine.md). Threads are numbered
  // round-robin, so as many threads as cores never share one.
  static std::size_t default_stripes() noexcept {
    const std::size_t cores = std::thread::hardware_concurrency();
    return cores < 2 ? 2 : (cores > 128 ? 128 : cores);
  }
  // 1-based, so that 0 can mean "not assigned yet" without a subtraction on every read.
  CC_ALWAYS_INLINE static std::size_t thread_number() noexcept {
    static constinit thread_local std::size_t number = 0;
    if (number == 0) [[unlikely]]
      number = next_thread_number();
    return number;
  }
  [[gnu::noinline]] static std::size_t next_thread_number() noexcept {
    static std::atomic<std::size_t> next{0};
    return next.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  static void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  // Readers are inside for a lookup and a copy: spin, then let them run (a reader preempted
  // inside its section holds the writer up until it is scheduled again).
  static void wait_for_readers(const Stripe& stripe) noexcept {
    for (int spins = 0; (stripe.state.load(std::memory_order_acquire) & ~kWriterBit) != 0;
         ++spins) {
      if (spins < kSpins)
        cpu_relax();
      else
        std::this_thread::yield();
    }
  }

  mutable Mutex writer_mu_;
  std::size_t stripe_mask_ = 0;
  std::unique_ptr<Stripe[]> stripes_;
};

}  // namespace chronocache
