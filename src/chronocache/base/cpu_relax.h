// cpu_relax(): the body of a spin-wait loop. On x86 it is PAUSE, which tells the core the loop
// is waiting (it yields the pipeline to the sibling hyper-thread and avoids the memory-order
// flush when the awaited line changes); elsewhere, nothing.
#pragma once

namespace chronocache {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace chronocache
