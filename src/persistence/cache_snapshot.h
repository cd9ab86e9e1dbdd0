// Snapshots of an embedder's cache: save a live Cache or ShardedCache to a file, load it back.
//
//   namespace persistence = chronocache::persistence;
//   chronocache::ShardedCache<std::string, std::string> cache;
//   persistence::SnapshotError error;
//   if (!persistence::save(cache, "/var/lib/app/cache.snap", &error)) log(error.message());
//   ...                                                     // after a restart:
//   persistence::LoadResult loaded = persistence::load(cache, "/var/lib/app/cache.snap", &error);
//
// save() writes what the cache held at the instant it was called (a point-in-time capture,
// chronocache/capture.h): other threads keep reading and writing a ShardedCache meanwhile, and
// what they write after that instant is not in the file. The file appears atomically (written
// beside it, fsynced, renamed, directory fsynced): a crash leaves the previous snapshot or the
// new one, never a torn file. Deadlines are stored as absolute wall-clock times, so an entry
// keeps its remaining lifetime across a restart and one that expired meanwhile is not loaded.
//
// load() puts every live entry of the file into the cache with put(), so the cache's policy and
// bounds apply. A bad file (truncated, corrupt, another format) is reported with its offset; the
// entries read before the problem was found are in the cache by then: load into a fresh cache and
// swap it in when all-or-nothing matters.
//
// Key and value types become bytes through SnapshotBytes<T>: provided for std::string and for
// trivially copyable types (their object representation: read back by the same build on the same
// platform). Specialise it for your own types.
#pragma once

#include <chrono>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "chronocache/base/mutex.h"
#include "chronocache/base/thread_annotations.h"
#include "chronocache/cache.h"
#include "chronocache/capture.h"
#include "chronocache/clock/clock.h"
#include "persistence/snapshot_reader.h"
#include "persistence/snapshot_writer.h"

namespace chronocache::persistence {

// encode(value, scratch) -> bytes (may point into value or scratch);
// decode(bytes, out) -> false if the bytes cannot be a T (the file is then reported corrupt).
template <class T>
struct SnapshotBytes;

template <>
struct SnapshotBytes<std::string> {
  static std::string_view encode(const std::string& value, std::string& /*scratch*/) {
    return value;
  }
  static bool decode(std::string_view bytes, std::string& out) {
    out.assign(bytes);
    return true;
  }
};

template <class T>
requires std::is_trivially_copyable_v<T>
struct SnapshotBytes<T> {
  static std::string_view encode(const T& value, std::string& scratch) {
    scratch.resize(sizeof(T));
    std::memcpy(scratch.data(), &value, sizeof(T));
    return scratch;
  }
  static bool decode(std::string_view bytes, T& out) {
    if (bytes.size() != sizeof(T)) return false;
    std::memcpy(&out, bytes.data(), sizeof(T));
    return true;
  }
};

// The wall clock in ms since the Unix epoch, beside the cache clock's reading at the same moment:
// deadlines cross a restart as wall-clock times. save_at and load_at take one explicitly (tests,
// or a host with its own wall clock); save and load read both clocks.
struct ClockPair {
  TimePoint cache_now;
  std::int64_t unix_ms;
  std::int64_t to_unix_ms(TimePoint deadline) const {
    return unix_ms + (deadline - cache_now).count();
  }
};

template <class CacheT>
ClockPair clock_pair(CacheT& cache) {
  const auto wall = std::chrono::system_clock::now().time_since_epoch();
  return {cache.clock().now(), std::chrono::duration_cast<std::chrono::milliseconds>(wall).count()};
}

namespace detail {

// Turns captured entries into snapshot entries. Locked: a ShardedCache's writers hand groups
// over from their own threads (sharded_cache.h).
template <class K, class V>
class WriterSink final : public CaptureSink<K, V> {
 public:
  WriterSink(SnapshotWriter& writer, ClockPair clocks) : writer_(&writer), clocks_(clocks) {}
  void capture(const K& key, const V& value, TimePoint deadline) override CC_EXCLUDES(mu_) {
    MutexLock lock(mu_);
    SnapshotEntry entry;
    entry.key = SnapshotBytes<K>::encode(key, key_scratch_);
    entry.value = SnapshotBytes<V>::encode(value, value_scratch_);
    entry.expire_unix_ms =
        deadline == chronocache::kNoExpiry ? kNoExpiryMs : clocks_.to_unix_ms(deadline);
    writer_->add(entry);
  }

 private:
  Mutex mu_;
  SnapshotWriter* const writer_ CC_PT_GUARDED_BY(mu_);  // add() is not thread-safe
  const ClockPair clocks_;
  std::string key_scratch_ CC_GUARDED_BY(mu_);
  std::string value_scratch_ CC_GUARDED_BY(mu_);
};

template <class CacheT>
void begin_capture_of(CacheT& cache,
                      CaptureSink<typename CacheT::key_type, typename CacheT::mapped_type>& sink) {
  if constexpr (requires { cache.shard_count(); })
    cache.begin_capture(sink);  // ShardedCache: every shard at one instant
  else
    cache.begin_capture(sink, cache.clock().now());
}

}  // namespace detail

// Writes the cache's contents at this instant to `path`. Blocks the caller until the file is
// durable; a ShardedCache keeps serving other threads meanwhile. False and *error on failure (the
// previous file at `path`, if any, is untouched then).
template <class CacheT>
bool save_at(CacheT& cache, const std::string& path, ClockPair clocks, SnapshotError* error,
             const WriterOptions& options = {}) {
  using K = typename CacheT::key_type;
  using V = typename CacheT::mapped_type;
  std::unique_ptr<SnapshotWriter> writer =
      SnapshotWriter::open(path, clocks.unix_ms, "chronocache", options, error);
  if (!writer) return false;
  detail::WriterSink<K, V> sink(*writer, clocks);
  detail::begin_capture_of(cache, sink);
  // Small steps: a ShardedCache's writers wait for one shard lock at a time, briefly.
  while (!cache.capture_step(4096)) {
  }
  return writer->commit(error);
}
template <class CacheT>
bool save(CacheT& cache, const std::string& path, SnapshotError* error,
          const WriterOptions& options = {}) {
  return save_at(cache, path, clock_pair(cache), error, options);
}

struct LoadResult {
  bool ok = false;
  std::uint64_t loaded = 0;   // entries put into the cache
  std::uint64_t expired = 0;  // entries whose deadline had passed: not loaded
  std::uint64_t skipped = 0;  // entries of another database than the one asked for
};

// Puts every live entry of database `db` in the file at `path` into `cache`. ok == false and
// *error on a bad file or an entry SnapshotBytes cannot decode.
template <class CacheT>
LoadResult load_at(CacheT& cache, const std::string& path, ClockPair clocks, SnapshotError* error,
                   std::uint32_t db = 0, const ReaderLimits& limits = {}) {
  using K = typename CacheT::key_type;
  using V = typename CacheT::mapped_type;
  LoadResult result;
  std::unique_ptr<SnapshotReader> reader = SnapshotReader::open(path, limits, error);
  if (!reader) return result;
  K key{};
  V value{};
  bool decoded = true;
  const bool read = reader->for_each(
      [&](const SnapshotEntry& entry) {
        if (!decoded) return;
        if (entry.db != db) {
          ++result.skipped;
          return;
        }
        if (!SnapshotBytes<K>::decode(entry.key, key) ||
            !SnapshotBytes<V>::decode(entry.value, value)) {
          decoded = false;
          return;
        }
        if (entry.expire_unix_ms == kNoExpiryMs) {
          cache.put(key, std::move(value));
        } else if (entry.expire_unix_ms > clocks.unix_ms) {
          cache.put(key, std::move(value),
                    std::chrono::milliseconds(entry.expire_unix_ms - clocks.unix_ms));
        } else {
          ++result.expired;
          return;
        }
        ++result.loaded;
      },
      error);
  if (read && !decoded && error != nullptr) {
    error->file = path;
    error->reason = "an entry's bytes do not decode as the cache's key or value type";
  }
  result.ok = read && decoded;
  return result;
}
template <class CacheT>
LoadResult load(CacheT& cache, const std::string& path, SnapshotError* error, std::uint32_t db = 0,
                const ReaderLimits& limits = {}) {
  return load_at(cache, path, clock_pair(cache), error, db, limits);
}

}  // namespace chronocache::persistence
