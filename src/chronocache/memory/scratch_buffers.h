// ScratchBuffers: buffers of one size, lent for the length of an operation and kept for the next
// one, shared by every thread. The table stages a segment it rebuilds in one (segmented_table.h,
// "Rebuilding a pooled segment in its own reservation").
//
// Why shared and not one per thread: a buffer is as large as the largest segment (56 KiB for
// int -> int, up to 512 KiB for wide slots), and a program with hundreds of threads that insert
// would keep one each for the threads' lives, counted by no cache. Here the buffers in use are as
// many as operations run at once, and at most kKeepIdle more wait idle. A lease costs one
// uncontended lock; a rebuild it serves moves thousands of entries.
//
// Thread-safe.
#pragma once

#include <cstddef>
#include <vector>

#include "chronocache/base/mutex.h"
#include "chronocache/base/thread_annotations.h"

namespace chronocache {

class ScratchBuffers {
 public:
  static constexpr std::size_t kKeepIdle = 2;
  static constexpr std::size_t kAlignment = 64;

  // Buffers of `bytes`, aligned to kAlignment.
  explicit ScratchBuffers(std::size_t bytes);
  ~ScratchBuffers();
  ScratchBuffers(const ScratchBuffers&) = delete;
  ScratchBuffers& operator=(const ScratchBuffers&) = delete;

  // One buffer, for the lease's scope: an idle one if any, else a new one (std::bad_alloc when
  // none can be had). Its contents are unspecified.
  class Lease {
   public:
    explicit Lease(ScratchBuffers& owner) : owner_(owner), buffer_(owner.take()) {}
    ~Lease() { owner_.give_back(buffer_); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    void* get() const noexcept { return buffer_; }

   private:
    ScratchBuffers& owner_;
    void* buffer_;
  };

  std::size_t bytes() const noexcept { return bytes_; }
  std::size_t idle() const CC_EXCLUDES(mu_);

 private:
  void* take() CC_EXCLUDES(mu_);
  void give_back(void* buffer) noexcept CC_EXCLUDES(mu_);

  const std::size_t bytes_;
  mutable Mutex mu_;
  std::vector<void*> idle_ CC_GUARDED_BY(mu_);  // capacity kKeepIdle: give_back never allocates
};

}  // namespace chronocache
