// The snapshot codec choice (docs/design/snapshot-format.md): writes and reads the target
// data set, N keys "key:%08d" with 16-byte values and a TTL each, in a shuffled order as a hash
// table hands them over, through SnapshotWriter and SnapshotReader with each codec, level and
// block size, and prints a table of times (median of R runs) and file sizes. Only the file format
// is timed here: no cache is filled or read.
//
//   snapshot_codec_bench [entries] [runs] [dir]     defaults: 1000000 5 /tmp
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "persistence/snapshot_reader.h"
#include "persistence/snapshot_writer.h"

namespace {

using chronocache::persistence::Codec;
using chronocache::persistence::SnapshotEntry;
using chronocache::persistence::SnapshotError;
using chronocache::persistence::SnapshotReader;
using chronocache::persistence::SnapshotWriter;
using chronocache::persistence::WriterOptions;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t entries = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  const std::string dir = argc > 3 ? argv[3] : "/tmp";
  const std::string path = dir + "/snapshot_codec_bench.snap";
  const std::int64_t now_ms = 1'700'000'000'000;

  // Values like a cache's: 16 bytes of printable text with some repetition, not pure noise.
  std::mt19937_64 rng(1);
  // A snapshot meets keys in table order, unrelated to their names: sorted keys would let the
  // codec find long matches that a real save never offers. The names are shuffled, not the
  // walk, so that the timed loop reads memory in order as a table walk does.
  std::vector<std::size_t> names(entries);
  for (std::size_t i = 0; i < entries; ++i) names[i] = i;
  std::shuffle(names.begin(), names.end(), rng);
  std::vector<std::string> keys(entries), values(entries);
  std::vector<std::int64_t> deadlines(entries);
  for (std::size_t i = 0; i < entries; ++i) {
    char key[32];
    std::snprintf(key, sizeof(key), "key:%08zu", names[i]);
    keys[i] = key;
    values[i].resize(16);
    for (char& c : values[i]) c = static_cast<char>('a' + rng() % 26);
    deadlines[i] = now_ms + 3'600'000 + static_cast<std::int64_t>(rng() % 3'600'000);
  }

  std::printf(
      "snapshot_codec_bench: %zu entries (16-byte values, TTL 1-2 h), median of %d runs, "
      "file in %s, fsync on\n\n",
      entries, runs, dir.c_str());
  std::printf(
      "| codec | block KiB | save s | load s | file MB | save MB/s (raw) | load MB/s (raw) |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
  // LZ4 compresses an input of at most 64 KiB with 16-bit offsets and a larger hash table: a
  // better ratio, but slower than a larger block. Hence LZ4 rows on both sides of that line.
  const struct {
    const char* name;
    Codec codec;
    int level;
    std::size_t block_bytes;
  } codecs[] = {{"none", Codec::kNone, 0, 128 << 10},
                {"lz4, acceleration 1", Codec::kLz4, 1, 64 << 10},
                {"lz4, acceleration 2", Codec::kLz4, 2, 64 << 10},
                {"lz4, acceleration 1", Codec::kLz4, 1, 128 << 10},
                {"lz4, acceleration 2 (default)", Codec::kLz4, 2, 128 << 10},
                {"zstd -1", Codec::kZstd, 1, 128 << 10},
                {"zstd -3", Codec::kZstd, 3, 128 << 10}};
  for (const auto& c : codecs) {
    std::vector<double> saves, loads;
    std::uint64_t file_bytes = 0;
    std::uint64_t raw_bytes = 0;
    for (int run = 0; run < runs; ++run) {
      SnapshotError error;
      const Clock::time_point save_start = Clock::now();
      const WriterOptions options{.codec = c.codec, .level = c.level, .block_bytes = c.block_bytes};
      auto writer = SnapshotWriter::open(path, now_ms, "bench", options, &error);
      if (!writer) {
        std::fprintf(stderr, "%s\n", error.message().c_str());
        return 1;
      }
      for (std::size_t i = 0; i < entries; ++i)
        writer->add(SnapshotEntry{0, keys[i], values[i], deadlines[i], 0});
      if (!writer->commit(&error)) {
        std::fprintf(stderr, "%s\n", error.message().c_str());
        return 1;
      }
      saves.push_back(seconds_since(save_start));
      file_bytes = writer->bytes_written();

      const Clock::time_point load_start = Clock::now();
      auto reader = SnapshotReader::open(path, {}, &error);
      std::uint64_t seen = 0, bytes = 0;
      if (!reader ||
          !reader->for_each(
              [&](const SnapshotEntry& e) {
                ++seen;
                bytes += e.key.size() + e.value.size();
              },
              &error) ||
          seen != entries) {
        std::fprintf(stderr, "read back failed: %s\n", error.message().c_str());
        return 1;
      }
      loads.push_back(seconds_since(load_start));
      raw_bytes = bytes;
    }
    const double save_s = median(saves), load_s = median(loads);
    std::printf("| %s | %zu | %.3f | %.3f | %.1f | %.0f | %.0f |\n", c.name, c.block_bytes >> 10,
                save_s, load_s, static_cast<double>(file_bytes) / 1e6,
                static_cast<double>(raw_bytes) / 1e6 / save_s,
                static_cast<double>(raw_bytes) / 1e6 / load_s);
  }
  std::remove(path.c_str());
  return 0;
}
