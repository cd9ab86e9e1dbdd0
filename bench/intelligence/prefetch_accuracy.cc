// prefetch_accuracy: how well SuccessorModel (src/chronocache/predict/) predicts the next read,
// on the four synthetic patterns (access_patterns.h) and, when the sample traces are there, on
// the real traces of ../shared/data/traces (read by the simulator's reader, src/sim/). Prints one
// markdown table; the definitions of its columns are PrefetchMeter's (prefetch_meter.h).
//
//   build/release/bench/prefetch_accuracy                       # defaults, traces if present
//   build/release/bench/prefetch_accuracy --keys 1000000 --reads 2000000 --reps 5
//   build/release/bench/prefetch_accuracy --min-confidence 0.3 --no-traces
//
// Each read is one AccessStream::advance (records previous -> key) and one predict(key); a trace
// is replayed as one stream (the traces do not say which client made a read, so transitions
// between clients are in it, as they would be for a server sharing one stream). Synthetic rows
// are the median over --reps seeds; a trace is replayed once (it is deterministic).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "bench/intelligence/access_patterns.h"
#include "bench/intelligence/prefetch_meter.h"
#include "bench/intelligence/sample_traces.h"
#include "chronocache/predict/access_stream.h"
#include "chronocache/predict/prediction.h"
#include "chronocache/predict/successor_model.h"
#include "sim/trace_reader.h"

namespace chronocache::bench {
namespace {

using Model = SuccessorModel<std::uint64_t>;
using Meter = PrefetchMeter<Model::kMaxPredictions>;

struct Args {
  PatternShape shape;
  std::uint64_t reads = 1'000'000;
  int reps = 3;
  std::uint64_t seed = 42;
  std::size_t window = 4;
  SuccessorModelOptions model;
  std::string traces = "../shared/data/traces";
  bool use_traces = true;
  std::vector<std::string> only;  // patterns or trace names; empty = all
};

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--keys N] [--reads N] [--reps N] [--seed N] [--window N]\n"
               "          [--rows N] [--min-confidence X] [--min-count N] [--decay-period N]\n"
               "          [--owner-tenure N] [--chain-length N] [--laps N]\n"
               "          [--traces DIR | --no-traces] [--only name,name]\n",
               argv0);
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--no-traces") {
      args.use_traces = false;
      continue;
    }
    if (i + 1 >= argc) usage(argv[0]);
    const char* value = argv[++i];
    const auto number = [&] { return std::strtoull(value, nullptr, 10); };
    if (flag == "--keys") {
      args.shape.keys = number();
    } else if (flag == "--reads") {
      args.reads = number();
    } else if (flag == "--reps") {
      args.reps = static_cast<int>(number());
    } else if (flag == "--seed") {
      args.seed = number();
    } else if (flag == "--window") {
      args.window = number();
    } else if (flag == "--rows") {
      args.model.rows = number();
    } else if (flag == "--min-confidence") {
      args.model.min_confidence = std::strtod(value, nullptr);
    } else if (flag == "--min-count") {
      args.model.min_count = static_cast<std::uint32_t>(number());
    } else if (flag == "--decay-period") {
      args.model.decay_period = static_cast<std::uint32_t>(number());
    } else if (flag == "--owner-tenure") {
      args.model.owner_tenure = static_cast<std::uint32_t>(number());
    } else if (flag == "--chain-length") {
      args.shape.chain_length = static_cast<std::uint32_t>(number());
    } else if (flag == "--laps") {
      args.shape.laps = static_cast<std::uint32_t>(number());
    } else if (flag == "--traces") {
      args.traces = value;
    } else if (flag == "--only") {
      std::string list = value;
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        args.only.push_back(list.substr(at, comma - at));
        at = comma + 1;
      }
    } else {
      usage(argv[0]);
    }
  }
  if (args.reps < 1 || args.shape.keys < 12) usage(argv[0]);
  return args;
}

bool wanted(const Args& args, std::string_view name) {
  return args.only.empty() ||
         std::find(args.only.begin(), args.only.end(), name) != args.only.end();
}

// Replays `next()` for `reads` reads through a fresh model and scores its predictions.
template <class Next>
PrefetchScore replay(const Args& args, std::uint64_t reads, Next next) {
  Model model(args.model);
  AccessStream<std::uint64_t> stream;
  Meter meter(args.window);
  std::array<Prediction<std::uint64_t>, Model::kMaxPredictions> out;
  std::array<std::uint64_t, Model::kMaxPredictions> keys{};
  for (std::uint64_t i = 0; i < reads; ++i) {
    const std::uint64_t key = next(i);
    meter.read(key);
    const std::uint64_t hash = model.hash(key);
    stream.advance_prehashed(model, key, hash);
    const std::size_t n = model.predict_prehashed(key, hash, out);
    for (std::size_t j = 0; j < n; ++j) keys[j] = out[j].key;
    meter.predictions_after(std::span<const std::uint64_t>(keys.data(), n));
  }
  return meter.score();
}

void print_header() {
  std::printf(
      "| stream | reads | accuracy (next read) | accuracy (within window) | top-k hit rate "
      "| predictions / read |\n"
      "|---|---:|---:|---:|---:|---:|\n");
}

void print_row(std::string_view name, const PrefetchScore& s) {
  std::printf("| %.*s | %llu | %.1f %% | %.1f %% | %.1f %% | %.3f |\n",
              static_cast<int>(name.size()), name.data(), static_cast<unsigned long long>(s.reads),
              100 * s.accuracy_next(), 100 * s.accuracy_window(), 100 * s.top_k_hit_rate(),
              s.issued_per_read());
}

// The median rep by next-read accuracy (its other columns with it, so a row is one real run).
PrefetchScore median(std::vector<PrefetchScore> scores) {
  std::sort(scores.begin(), scores.end(), [](const PrefetchScore& a, const PrefetchScore& b) {
    return a.accuracy_next() < b.accuracy_next();
  });
  return scores[scores.size() / 2];
}

int run(const Args& args) {
  std::printf(
      "# prefetch_accuracy gcc-%d.%d keys=%llu reads=%llu reps=%d seed=%llu window=%zu rows=%zu "
      "min_confidence=%.2f min_count=%u decay_period=%u owner_tenure=%u chain=%u laps=%u\n\n",
      __GNUC__, __GNUC_MINOR__, static_cast<unsigned long long>(args.shape.keys),
      static_cast<unsigned long long>(args.reads), args.reps,
      static_cast<unsigned long long>(args.seed), args.window, args.model.rows,
      args.model.min_confidence, args.model.min_count, args.model.decay_period,
      args.model.owner_tenure, args.shape.chain_length, args.shape.laps);
  print_header();
  for (const Pattern pattern : kAllPatterns) {
    if (!wanted(args, pattern_name(pattern))) continue;
    std::vector<PrefetchScore> scores;
    for (int rep = 0; rep < args.reps; ++rep) {
      AccessPattern source(pattern, args.shape, args.seed + static_cast<std::uint64_t>(rep));
      scores.push_back(replay(args, args.reads, [&](std::uint64_t) { return source.next(); }));
    }
    print_row(pattern_name(pattern), median(std::move(scores)));
  }

  if (!args.use_traces) return 0;
  const std::filesystem::path dir(args.traces);
  if (!std::filesystem::is_directory(dir)) {
    std::printf("\ntraces: %s is not a directory; the real traces are skipped (--traces DIR)\n",
                args.traces.c_str());
    return 0;
  }
  for (const auto& file : trace_files(dir)) {
    const std::string name = trace_name(file);
    if (!wanted(args, name)) continue;
    try {
      const sim::TraceFile trace = sim::read_trace(file.string());
      const auto& keys = trace.trace.keys;
      print_row(name, replay(args, keys.size(), [&](std::uint64_t i) { return keys[i]; }));
    } catch (const std::exception& e) {
      std::printf("| %s | skipped: %s |||||\n", name.c_str(), e.what());
    }
  }
  return 0;
}

}  // namespace
}  // namespace chronocache::bench

int main(int argc, char** argv) {
  return chronocache::bench::run(chronocache::bench::parse(argc, argv));
}
