#include "chronocache/base/mutex.h"

#include <thread>

#include <gtest/gtest.h>

namespace chronocache {
namespace {

// Whether another thread finds `mu` free right now (it releases it again if so).
bool free_for_another_thread(Mutex& mu) {
  bool got = false;
  std::thread([&] {
    got = mu.try_lock();
    if (got) mu.unlock();
  }).join();
  return got;
}

TEST(Mutex, LockSpinningTakesAFreeMutexWhateverItsTries) {
  Mutex mu;
  for (int tries : {0, 1, 200}) {
    mu.lock_spinning(tries);
    EXPECT_FALSE(free_for_another_thread(mu)) << tries;
    mu.unlock();
    EXPECT_TRUE(free_for_another_thread(mu)) << tries;
  }
}

// Past its tries it sleeps on the mutex like lock(): a holder that keeps it far longer than any
// spin is waited for, and no increment is lost between the two threads.
TEST(Mutex, LockSpinningExcludesLikeLockWhenTheHolderOutlastsTheSpin) {
  Mutex mu;
  long long counter = 0;
  constexpr int kRounds = 20'000;
  auto work = [&](int tries) {
    for (int i = 0; i < kRounds; ++i) {
      mu.lock_spinning(tries);
      const long long seen = counter;
      if (i % 1000 == 0) std::this_thread::yield();  // sometimes hold it across a reschedule
      counter = seen + 1;
      mu.unlock();
    }
  };
  std::thread a(work, 1);
  std::thread b(work, 200);
  a.join();
  b.join();
  EXPECT_EQ(counter, 2 * kRounds);
}

}  // namespace
}  // namespace chronocache
