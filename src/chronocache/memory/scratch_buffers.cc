#include "chronocache/memory/scratch_buffers.h"

#include <new>

namespace chronocache {

ScratchBuffers::ScratchBuffers(std::size_t bytes) : bytes_(bytes) { idle_.reserve(kKeepIdle); }

ScratchBuffers::~ScratchBuffers() {
  MutexLock lock(mu_);
  for (void* buffer : idle_) ::operator delete (buffer, std::align_val_t{kAlignment});
}

std::size_t ScratchBuffers::idle() const {
  MutexLock lock(mu_);
  return idle_.size();
}

void* ScratchBuffers::take() {
  {
    MutexLock lock(mu_);
    if (!idle_.empty()) {
      void* buffer = idle_.back();
      idle_.pop_back();
      return buffer;
    }
  }
  return ::operator new (bytes_, std::align_val_t{kAlignment});
}

void ScratchBuffers::give_back(void* buffer) noexcept {
  {
    MutexLock lock(mu_);
    if (idle_.size() < kKeepIdle) {
      idle_.push_back(buffer);
      return;
    }
  }
  ::operator delete (buffer, std::align_val_t{kAlignment});
}

}  // namespace chronocache
