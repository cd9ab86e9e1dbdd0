// Pins SuccessorModel's concurrency contract (successor_model.h, "CONCURRENCY"): record and
// predict from several threads at once, on rows that keys fight over, never return a torn
// prediction (a successor of another key, or a key nobody recorded); records may be dropped, not
// corrupted. Runs under TSan (CMakePresets.json's tsan filter, make build-tsan), ASan and Release.
#include <array>
#include <atomic>
#include <barrier>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "chronocache/predict/access_stream.h"
#include "chronocache/predict/prediction.h"
#include "chronocache/predict/successor_model.h"
#include "testing/numbered.h"

#include <gtest/gtest.h>

namespace chronocache {
namespace {

constexpr int kThreads = 4;
constexpr std::uint64_t kKeys = 64;       // a few keys per row: rows change hands all the time
constexpr std::uint64_t kOffset = 1'000;  // every key's only successor is key + kOffset

// Writers record key -> key + kOffset for random keys (few rows, so claims and decays are
// constant); readers predict random keys. Any prediction for k other than k + kOffset is a torn
// read: the owner of one version of the row with the successor of another.
template <class Model, class MakeKey>
void hammer(Model& model, MakeKey make_key, int ops_per_thread) {
  using K = typename Model::key_type;
  std::atomic<long> predictions{0};
  std::atomic<long> torn{0};
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(static_cast<std::uint64_t>(t) + 1);
      std::array<Prediction<K>, Model::kMaxPredictions> out;
      long seen = 0;
      long wrong = 0;
      start.arrive_and_wait();
      for (int i = 0; i < ops_per_thread; ++i) {
        const std::uint64_t k = rng() % kKeys;
        if (t % 2 == 0 || i % 4 == 0) {
          model.record(make_key(k), make_key(k + kOffset));
        } else {
          const std::size_t n = model.predict(make_key(k), out);
          seen += static_cast<long>(n);
          for (std::size_t j = 0; j < n; ++j) {
            if (!(out[j].key == make_key(k + kOffset))) ++wrong;
          }
        }
      }
      predictions += seen;
      torn += wrong;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_GT(predictions.load(), 0) << "the readers should have seen the pattern";
}

TEST(SuccessorModelConcurrency, IntegerKeysAreNeverTorn) {
  SuccessorModel<std::uint64_t> model({.rows = 16});
  hammer(
      model, [](std::uint64_t k) { return k; }, 200'000);
}

TEST(SuccessorModelConcurrency, StringKeysAreNeverTorn) {
  SuccessorModel<std::string> model({.rows = 16});
  // Past the small-string buffer, so that a torn copy would read freed or foreign heap bytes.
  hammer(
      model, [](std::uint64_t k) { return test_support::numbered("key-longer-than-sso:", k); },
      50'000);
}

TEST(SuccessorModelConcurrency, StreamsPerThreadLearnTheirOwnCycles) {
  // Each thread reads its own cycle through its own AccessStream; all of them share the model.
  SuccessorModel<std::uint64_t> model;
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      AccessStream<std::uint64_t> stream;
      const std::uint64_t base = static_cast<std::uint64_t>(t) * 100;
      start.arrive_and_wait();
      for (int lap = 0; lap < 20'000; ++lap) {
        for (std::uint64_t i = 0; i < 3; ++i) stream.advance(model, base + i);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  std::array<Prediction<std::uint64_t>, 4> out;
  for (std::uint64_t t = 0; t < kThreads; ++t) {
    for (std::uint64_t i = 0; i < 3; ++i) {
      ASSERT_EQ(model.predict(t * 100 + i, out), 1u) << t << " " << i;
      EXPECT_EQ(out[0].key, t * 100 + (i + 1) % 3);
    }
  }
}

}  // namespace
}  // namespace chronocache
