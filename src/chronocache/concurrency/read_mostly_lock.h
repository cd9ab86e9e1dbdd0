// ReadMostlyLock: a reader-writer lock whose readers write only a cache line of their own, so
// reads on different cores scale instead of bouncing one lock word between them. The
// distributed ("big reader") lock of Linux's brlock and percpu-rwsem, and folly's SharedMutex
// reader slots, cut down to what a cache shard needs.
//
//   ReadMostlyLock lock;
//   { ReadMostlyLock::Reader r(lock); read(); }     // any number
//   { ReadMostlyLock::Writer w(lock); write(); }    // one, alone
//
//        writer_mu_    unassigned        stripe 0              ...   stripe S-1
//       [ Mutex ]     [writer bit set]  [entered|ended|log]         [entered|ended|log]
//        writers,      the stripe of a   two lines each, written by the threads mapped to the
//        slow readers  thread's first    stripe (thread i -> stripe i mod S, numbered at its first
//                      read ever         read), and by writers twice per write section (set and
//                                        clear the writer bit)
//
// S is one per hardware thread, the same for every lock of the process, so a thread's stripe is
// the same offset into every lock's stripes: one thread_local word, found in two instructions.
// Until the thread's first read section that word is 0, which is the "unassigned" stripe, whose
// writer bit never clears: the first read takes the slow path, which numbers the thread. (A
// per-lock count masked the thread's number and tested it for "unassigned" on every read:
// callgrind, 4 instructions a read more.)
//
// A stripe counts read sections as they begin and as they end: `entered` (low 63 bits; bit 63
// is the writer bit) and `ended[outcome]`, one counter per way a section can end (a hit, a miss,
// neither). Readers inside = entered - the sum of ended. A section ends by adding 1 to the
// counter of its outcome, so the statistics a ShardedCache keeps (hits, misses) are the lock's
// own end counts, and a read writes its line twice, not three times.
//   Reader: entered.fetch_add(1). If the old value had no writer bit, it is in: it reads, then
//     ended[outcome].fetch_add(1). Otherwise it takes its 1 back from entered, spins until the
//     bit clears, retries a few times, and if a writer stays (preempted, a long clear) sleeps on
//     writer_mu_; holding it, no writer is inside and every bit is clear, so it enters as a fast
//     reader would, lets the mutex go and reads as one. Every read section therefore ends the
//     same way. Nothing shared is written: a stripe is shared only by threads that map to the
//     same stripe (more threads than stripes), which is correct, only slower.
//   Writer: takes writer_mu_ (writers, sleeping readers and log replays exclude each other
//     there), fetch_or's the writer bit into every stripe's `entered`, then waits until every
//     stripe's readers are out. Unlock: fetch_and's the bit out of every stripe, releases
//     writer_mu_. Setting every bit before waiting keeps readers out of the later stripes while
//     it waits.
//   Why "entered == sum of ended" means no reader is inside, though a reader that backs off
//     moves `entered` up and down beside the waiting writer: the writer loads `entered` (E, at
//     time t1) before the end counters (their sum F, each loaded after t1). With the bit set no
//     section begins, so sections that end after t1 were inside at t1, and F <= ended(t1) +
//     inside(t1), while E = ended(t1) + inside(t1) + backing_off(t1). E == F then leaves
//     backing_off(t1) = 0 and every reader inside at t1 gone.
//
// Memory ordering. Reader and writer meet on `entered`, through read-modify-writes, which the
// modification order of that word puts in a single order: a reader's fetch_add comes before the
// writer's fetch_or (the writer's value then includes the reader, and it waits for the reader's
// end) or after it (the reader's fetch_add then returns the bit, and it backs off). No
// store-buffer (Dekker) reasoning and no seq_cst is needed, because no thread stores one
// location and then loads another. Data: the writer's fetch_and (release) is read by the
// reader's next fetch_add (acquire) directly or through the release sequence of RMWs on the
// word, so the reader sees the whole write section; the reader's ending fetch_add (release) is
// read by the writer's waiting load of that counter (acquire), so the section comes after the
// read. Sleeping readers are ordered by writer_mu_.
// (A first version kept the writer flag in its own line with a seq_cst store/load pair per side:
// a write then moved 4 cache lines between cores instead of 2, and 90 % gets on 2 threads
// scaled worse; docs/design/engine.md has the numbers. A second counted readers inside in one
// 32-bit word and hits and misses in two more counters: three locked instructions a read.)
//
// Cost on x86: two locked instructions per read, on the reader's own line. A write: writer_mu_
// plus two locked instructions per stripe, each a cache-line transfer for a stripe that a reader
// on another core touched since (the model per core count is in docs/design/engine.md).
//
// Each stripe also carries a small lossy log of accessed slots (the "read buffer" of Caffeine)
// that readers of a ShardedCache write without sharing a line, replayed under writer_mu_. They
// are plain words to this class; sharded_cache.h gives them meaning.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>

#include "chronocache/base/assert.h"
#include "chronocache/base/cpu_relax.h"
#include "chronocache/base/mutex.h"
#include "chronocache/base/thread_annotations.h"

namespace chronocache {

class CC_CAPABILITY("read-mostly lock") ReadMostlyLock {
 public:
  // Slots a stripe's access log keeps before further entries are dropped.
  static constexpr std::size_t kLogCapacity = 11;
  static constexpr std::uint64_t kWriterBit = std::uint64_t{1} << 63;

  // How a read section ended: each has its own end counter in the stripe.
  enum Outcome : std::uint8_t { kHit, kMiss, kUncounted, kOutcomes };

  // One reader stripe: two cache lines written only by the threads mapped to it (and by
  // writers, see above). The first line is all a writer touches when the log is empty.
  struct alignas(64) Stripe {
    std::atomic<std::uint64_t> entered{0};  // read sections begun (low 63 bits) | kWriterBit
    std::atomic<std::uint64_t> ended[kOutcomes] = {};  // read sections ended, by outcome
    std::atomic<std::uint32_t> logged{0};  // log entries claimed (may exceed kLogCapacity)
    // Bumped by every replay of the log: an entry counts only if it carries the current one.
    std::atomic<std::uint32_t> generation{0};
    // Accessed slots: generation << 32 | (slot id + 1); 0: empty. Claimed with
    // logged.fetch_add, consumed by the replay with exchange.
    alignas(8) std::atomic<std::uint64_t> log[kLogCapacity] = {};
  };
  static_assert(sizeof(Stripe) == 128, "two cache lines per stripe: the counters, then the log");

  ReadMostlyLock() : stripes_(std::make_unique<Stripe[]>(stripe_count_ + 1)) {
    stripes_[0].entered.store(kWriterBit, std::memory_order_relaxed);  // never cleared
  }
  ReadMostlyLock(const ReadMostlyLock&) = delete;
  ReadMostlyLock& operator=(const ReadMostlyLock&) = delete;

  // The reader stripes, 0 .. stripe_count() - 1 (the "unassigned" one is not among them).
  std::size_t stripe_count() const noexcept { return stripe_count_; }
  Stripe& stripe(std::size_t i) noexcept { return stripes_[1 + i]; }
  const Stripe& stripe(std::size_t i) const noexcept { return stripes_[1 + i]; }

  // ---- Exclusive (writers) ---------------------------------------------------------------
  void lock() CC_ACQUIRE() {
    lock_writer_mutex();
    set_writer_bits();
  }
  void unlock() CC_RELEASE() {
    clear_writer_bits();
    writer_mu_.unlock();
  }

  // ---- Beside readers: a write that fast readers may watch being made (ShardedCache's overwrite
  // of a value that is one atomic word). It holds the writer mutex alone, so writers, replays and
  // slow readers wait while fast readers read on, and it writes no reader's stripe: a write
  // costs the mutex's line and the lines it changes. If the write turns out to need readers out,
  // exclude_readers() makes the section an exclusive one, as lock() would have, which unlock()
  // (or a Writer adopting it) ends.
  void lock_beside_readers() CC_ACQUIRE_SHARED() { lock_writer_mutex(); }
  void unlock_beside_readers() CC_RELEASE_SHARED() { writer_mu_.unlock(); }
  void exclude_readers() CC_RELEASE_SHARED() CC_ACQUIRE() { set_writer_bits(); }

  // ---- Shared, through writer_mu_ only: excludes writers, not fast readers. For whole-shard
  // reads (size, stats) and replays of the log, which a fast reader never sees mid-way.
  // Const: holding the mutex changes nothing a reader of the guarded data could see.
  void lock_shared_slow() const CC_ACQUIRE_SHARED() { writer_mu_.lock(); }
  bool try_lock_shared_slow() const CC_TRY_ACQUIRE_SHARED(true) { return writer_mu_.try_lock(); }
  void unlock_shared_slow() const CC_RELEASE_SHARED() { writer_mu_.unlock(); }

  // A read section: in when no writer is there, else (rarely) after waiting for writers. Either
  // way it ends with one fetch_add on the stripe's counter of its outcome (kUncounted unless
  // ends_as says otherwise), so the fast path is two locked instructions and a branch.
  class CC_SCOPED_CAPABILITY Reader {
   public:
    // The writer bit is the sign bit, and the count never reaches it: "the new value is
    // negative" is "a writer is there", which x86 reads from the flags of one `lock add` (the
    // old value's bit took a `lock xadd`, a register load and a test: callgrind, 2 instructions
    // a read).
    CC_ALWAYS_INLINE explicit Reader(ReadMostlyLock& lock) CC_ACQUIRE_SHARED(lock)
        : stripe_(lock.stripe_at(this_thread_offset)) {
      static_assert(kWriterBit == std::uint64_t{1} << 63);
      if (static_cast<std::int64_t>(stripe_->entered.fetch_add(1, std::memory_order_acquire) + 1) <
          0) [[unlikely]]
        stripe_ = enter_slow(lock, stripe_);
    }
    CC_ALWAYS_INLINE ~Reader() CC_RELEASE() {
      stripe_->ended[outcome_].fetch_add(1, std::memory_order_release);
    }
    // What the section found, counted when it ends.
    CC_ALWAYS_INLINE void ends_as(Outcome outcome) noexcept { outcome_ = outcome; }
    // The stripe this section is counted in (its log is this thread's to write).
    Stripe& stripe() const noexcept { return *stripe_; }
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
    // Returns the stripe the section is counted in: the one given, unless that was the
    // "unassigned" one.
    [[gnu::noinline]] static Stripe* enter_slow(ReadMostlyLock& lock,
                                                Stripe* given) CC_NO_THREAD_SAFETY_ANALYSIS {
      Stripe* assigned = given;
      if (given == &lock.stripes_[0]) {  // this thread's first read section, in any lock
        given->entered.fetch_sub(1, std::memory_order_relaxed);
        assigned = &lock.first_read_of_this_thread();
        if ((assigned->entered.fetch_add(1, std::memory_order_acquire) & kWriterBit) == 0)
          return assigned;
      }
      Stripe& stripe = *assigned;
      for (int round = 0; round < kReaderRetries; ++round) {
        stripe.entered.fetch_sub(1, std::memory_order_relaxed);  // read nothing: nothing to order
        for (int spins = 0;
             spins < kSpins && (stripe.entered.load(std::memory_order_relaxed) & kWriterBit) != 0;
             ++spins)
          cpu_relax();
        if ((stripe.entered.fetch_add(1, std::memory_order_acquire) & kWriterBit) == 0)
          return &stripe;
      }
      stripe.entered.fetch_sub(1, std::memory_order_relaxed);
      lock.writer_mu_.lock();
      const std::uint64_t before = stripe.entered.fetch_add(1, std::memory_order_acquire);
      CC_ASSERT((before & kWriterBit) == 0);
      static_cast<void>(before);
      lock.writer_mu_.unlock();
      return &stripe;
    }
    Stripe* stripe_;
    Outcome outcome_ = kUncounted;
  };

  // A write section.
  class CC_SCOPED_CAPABILITY Writer {
   public:
    explicit Writer(ReadMostlyLock& lock) CC_ACQUIRE(lock) : lock_(lock) { lock.lock(); }
    // Ends a write section the caller began (exclude_readers).
    struct Adopt {};
    Writer(ReadMostlyLock& lock, Adopt) CC_REQUIRES(lock) : lock_(lock) {}
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

  // One stripe per hardware thread (at least 2, at most 128), in every lock of the process: a
  // writer pays two locked instructions per stripe, so more stripes than cores only cost writes
  // (8 stripes on this 2-core machine: 426 ns per put at 90 % gets, one thread; 2 stripes: see
  // docs/design/engine.md). Threads are numbered round-robin, so as many threads as cores never
  // share one. A function's static, not a data member: a lock built during static
  // initialisation still finds it set.
  static std::size_t process_stripes() noexcept {
    static const std::size_t stripes = [] {
      const std::size_t cores = std::thread::hardware_concurrency();
      return cores < 2 ? std::size_t{2} : (cores > 128 ? std::size_t{128} : cores);
    }();
    return stripes;
  }
  // This thread's stripe as a byte offset into any lock's stripes; 0, the unassigned stripe,
  // until the thread's first read section.
  static constinit inline thread_local std::size_t this_thread_offset = 0;
  CC_ALWAYS_INLINE Stripe* stripe_at(std::size_t offset) noexcept {
    return reinterpret_cast<Stripe*>(reinterpret_cast<char*>(stripes_.get()) + offset);
  }
  // Numbers this thread (0, 1, ... in the order of first reads, process-wide), and returns its
  // stripe in this lock: stripe(number mod S), at byte offset (1 + number mod S) * 128.
  Stripe& first_read_of_this_thread() noexcept {
    static std::atomic<std::size_t> next{0};
    const std::size_t number = next.fetch_add(1, std::memory_order_relaxed);
    this_thread_offset = (1 + number % process_stripes()) * sizeof(Stripe);
    return *stripe_at(this_thread_offset);
  }
  void lock_writer_mutex() CC_NO_THREAD_SAFETY_ANALYSIS {
    // Another writer's section is as short: spin on try_lock before sleeping in the mutex.
    for (int spins = 0; !writer_mu_.try_lock(); ++spins) {
      if (spins == kSpins) {
        writer_mu_.lock();
        break;
      }
      cpu_relax();
    }
  }
  // With writer_mu_ held: keeps new readers out and waits for those inside.
  void set_writer_bits() noexcept {
    // Pointers, not indexes: the count is reloaded after every atomic RMW otherwise.
    Stripe* const first = &stripe(0);
    Stripe* const end = first + stripe_count_;
    for (Stripe* s = first; s != end; ++s)
      s->entered.fetch_or(kWriterBit, std::memory_order_acquire);
    for (Stripe* s = first; s != end; ++s) wait_for_readers(*s);
  }
  void clear_writer_bits() noexcept {
    Stripe* const first = &stripe(0);
    Stripe* const end = first + stripe_count_;
    for (Stripe* s = first; s != end; ++s)
      s->entered.fetch_and(~kWriterBit, std::memory_order_release);
  }

  // Readers are inside for a lookup and a copy: spin, then let them run (a reader preempted
  // inside its section holds the writer up until it is scheduled again). `entered` is loaded
  // before the end counters (the argument at the top).
  static bool readers_inside(const Stripe& stripe) noexcept {
    static_assert(kOutcomes == 3, "every end counter is summed below");
    const std::uint64_t entered = stripe.entered.load(std::memory_order_acquire) & ~kWriterBit;
    return entered != stripe.ended[kHit].load(std::memory_order_acquire) +
                          stripe.ended[kMiss].load(std::memory_order_acquire) +
                          stripe.ended[kUncounted].load(std::memory_order_acquire);
  }
  // The common case, no reader inside, inline; the spin out of line (inlined, its set-up cost
  // every write ~10 instructions a stripe: callgrind, engine_ops_sharded putSingle).
  CC_ALWAYS_INLINE static void wait_for_readers(const Stripe& stripe) noexcept {
    if (readers_inside(stripe)) [[unlikely]]
      wait_until_readers_leave(stripe);
  }
  [[gnu::noinline]] static void wait_until_readers_leave(const Stripe& stripe) noexcept {
    for (int spins = 0; readers_inside(stripe); ++spins) {
      if (spins < kSpins)
        cpu_relax();
      else
        std::this_thread::yield();
    }
  }

  // Read by every read section, written by none.
  const std::size_t stripe_count_ = process_stripes();
  std::unique_ptr<Stripe[]> stripes_;  // [0]: the unassigned stripe; [1 + i]: stripe(i)
  // In a line of its own, which writers take turns to own: sharing one with the fields above
  // (or with what follows the lock, such as a shard's Cache) sent every reader on another core
  // to fetch that line again after each write.
  alignas(64) mutable Mutex writer_mu_;
};

}  // namespace chronocache
