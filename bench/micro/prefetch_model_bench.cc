// prefetch_model_bench: what SuccessorModel (src/chronocache/predict/successor_model.h) costs a
// LoadingCache get: one record (previous -> key) and one predict (key), single thread, on a
// learned chain stream (prefetch_model_workload.h), for integer keys and 11- and 40-byte strings.
// The targets (issue 17): record <= 20 ns, predict <= 100 ns for integer keys.
//
//   bm_record/int|str11|str40    record(prev, next), the model hashing prev
//   bm_predict/int|str11|str40   predict(key) into a reused span of Predictions
//   bm_predictInt/threads:2      predict from two threads over the same keys: readers of one row
//                                do not write it (integers: seqlock reads), so no line bounces
//
//   build/release/bench/prefetch_model_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
// Instructions (callgrind, steadier than ns on a shared machine): prefetch_model_ops.
#include <benchmark/benchmark.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/micro/prefetch_model_workload.h"
#include "chronocache/predict/prediction.h"
#include "chronocache/predict/successor_model.h"

namespace chronocache::bench {
namespace {

template <class K>
std::vector<K> keys_for(std::size_t length) {
  if constexpr (std::is_same_v<K, std::string>) {
    return prefetch_string_keys(length);
  } else {
    return prefetch_int_keys();
  }
}

template <class K>
void learn(SuccessorModel<K>& model, const std::vector<K>& keys,
           const std::vector<std::uint32_t>& stream) {
  for (std::size_t i = 0; i < kPrefetchStreamLength; ++i) {
    model.record(keys[stream[i]], keys[stream[i + 1]]);
  }
}

template <class K>
void bm_record(benchmark::State& state) {
  const auto keys = keys_for<K>(static_cast<std::size_t>(state.range(0)));
  const auto stream = prefetch_stream();
  SuccessorModel<K> model;
  learn(model, keys, stream);
  std::size_t i = 0;
  for (auto _ : state) {
    const std::size_t at = i++ & (kPrefetchStreamLength - 1);
    benchmark::DoNotOptimize(model.record(keys[stream[at]], keys[stream[at + 1]]));
  }
}

template <class K>
void bm_predict(benchmark::State& state) {
  const auto keys = keys_for<K>(static_cast<std::size_t>(state.range(0)));
  const auto stream = prefetch_stream();
  static SuccessorModel<K>* shared = nullptr;  // one model for all threads of a run
  if (state.thread_index() == 0) {
    shared = new SuccessorModel<K>();
    learn(*shared, keys, stream);
  }
  std::array<Prediction<K>, SuccessorModel<K>::kMaxPredictions> out;
  std::size_t predicted = 0;
  std::size_t i = static_cast<std::size_t>(state.thread_index()) * 1000;
  // Threads other than 0 wait for the model at the benchmark's own start barrier.
  for (auto _ : state) {
    const std::size_t at = i++ & (kPrefetchStreamLength - 1);
    predicted += shared->predict(keys[stream[at]], out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["predicted/op"] =
      benchmark::Counter(static_cast<double>(predicted), benchmark::Counter::kAvgIterations);
  if (state.thread_index() == 0) {
    delete shared;
    shared = nullptr;
  }
}

BENCHMARK(bm_record<std::uint64_t>)->Name("bm_record/int")->Arg(0);
BENCHMARK(bm_record<std::string>)->Name("bm_record/str11")->Arg(11);
BENCHMARK(bm_record<std::string>)->Name("bm_record/str40")->Arg(40);
BENCHMARK(bm_predict<std::uint64_t>)->Name("bm_predict/int")->Arg(0);
BENCHMARK(bm_predict<std::string>)->Name("bm_predict/str11")->Arg(11);
BENCHMARK(bm_predict<std::string>)->Name("bm_predict/str40")->Arg(40);
BENCHMARK(bm_predict<std::uint64_t>)->Name("bm_predictInt")->Arg(0)->Threads(2);

}  // namespace
}  // namespace chronocache::bench

BENCHMARK_MAIN();
