#include "chronocache/memory/scratch_buffers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

namespace chronocache {
namespace {

constexpr std::size_t kBytes = 56 * 1024;

TEST(ScratchBuffers, ALeaseIsAnAlignedBufferThatTheNextLeaseReuses) {
  ScratchBuffers buffers(kBytes);
  void* first = nullptr;
  {
    const ScratchBuffers::Lease lease(buffers);
    first = lease.get();
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(first) % ScratchBuffers::kAlignment, 0u);
    std::memset(first, 0xAB, kBytes);  // all of it is usable
    EXPECT_EQ(buffers.idle(), 0u);
  }
  EXPECT_EQ(buffers.idle(), 1u);
  const ScratchBuffers::Lease again(buffers);
  EXPECT_EQ(again.get(), first);
  EXPECT_EQ(buffers.idle(), 0u);
}

TEST(ScratchBuffers, LeasesHeldAtOnceAreDistinctAndAtMostAFewStayIdle) {
  ScratchBuffers buffers(kBytes);
  {
    std::vector<std::optional<ScratchBuffers::Lease>> leases(5);
    std::vector<void*> seen;
    seen.reserve(leases.size());
    for (auto& lease : leases) {
      lease.emplace(buffers);
      for (void* other : seen) EXPECT_NE(lease->get(), other);
      seen.push_back(lease->get());
    }
  }
  EXPECT_EQ(buffers.idle(), ScratchBuffers::kKeepIdle);
}

// Under TSan: threads lend and return buffers at once, each writing all of the one it holds.
TEST(ScratchBuffers, ThreadsShareThemSafely) {
  ScratchBuffers buffers(4096);
  std::atomic<int> mixed{0};
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&buffers, &mixed, t] {
      for (int i = 0; i < 2000; ++i) {
        const ScratchBuffers::Lease lease(buffers);
        auto* bytes = static_cast<unsigned char*>(lease.get());
        std::memset(bytes, t, 4096);
        for (std::size_t b = 0; b < 4096; b += 512)
          if (bytes[b] != t) mixed.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mixed.load(), 0) << "two threads held one buffer";
  EXPECT_LE(buffers.idle(), ScratchBuffers::kKeepIdle);
}

}  // namespace
}  // namespace chronocache
