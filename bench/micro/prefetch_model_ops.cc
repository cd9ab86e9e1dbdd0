// prefetch_model_ops: runs one SuccessorModel operation `ops` times on prefetch_model_bench's
// learned stream, for counting instructions with callgrind. Only run_ops() is collected
// (--toggle-collect), so learning the stream and building keys are not counted.
//
//   prefetch_model_ops <record|predict> <int|str11|str40> <ops>
//   valgrind --tool=callgrind --toggle-collect='*run_ops*' --callgrind-out-file=/dev/null
//       build/release/bench/prefetch_model_ops record int 1000000     (I refs / ops)
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "bench/micro/prefetch_model_workload.h"
#include "chronocache/predict/prediction.h"
#include "chronocache/predict/successor_model.h"

namespace chronocache::bench {
namespace {

template <class K>
[[gnu::noinline]] std::size_t run_ops(SuccessorModel<K>& model, bool record, long ops,
                                      const std::vector<K>& keys,
                                      const std::vector<std::uint32_t>& stream) {
  std::array<Prediction<K>, SuccessorModel<K>::kMaxPredictions> out;
  std::size_t sink = 0;
  for (long i = 0; i < ops; ++i) {
    const auto at = static_cast<std::size_t>(i) & (kPrefetchStreamLength - 1);
    if (record) {
      sink += static_cast<std::size_t>(model.record(keys[stream[at]], keys[stream[at + 1]]));
    } else {
      sink += model.predict(keys[stream[at]], out);
    }
  }
  return sink;
}

template <class K>
int run(bool record, long ops, const std::vector<K>& keys) {
  const auto stream = prefetch_stream();
  SuccessorModel<K> model;
  for (std::size_t i = 0; i < kPrefetchStreamLength; ++i) {
    model.record(keys[stream[i]], keys[stream[i + 1]]);
  }
  const std::size_t sink = run_ops(model, record, ops, keys, stream);
  std::printf("%zu\n", sink);
  return 0;
}

}  // namespace
}  // namespace chronocache::bench

int main(int argc, char** argv) {
  using namespace chronocache::bench;
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s <record|predict> <int|str11|str40> <ops>\n", argv[0]);
    return 2;
  }
  const std::string_view op = argv[1];
  const std::string_view keys = argv[2];
  const long ops = std::atol(argv[3]);
  const bool record = op == "record";
  if (!record && op != "predict") return 2;
  if (keys == "int") return run(record, ops, prefetch_int_keys());
  if (keys == "str11") return run(record, ops, prefetch_string_keys(11));
  if (keys == "str40") return run(record, ops, prefetch_string_keys(40));
  return 2;
}
