#include "server/store/memory_budget.h"

#include <malloc.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>

namespace chronocached {
namespace {

// Keys evicted between two looks at the clock (Redis checks its time limit every 16 too).
constexpr int kKeysPerClockCheck = 16;

std::uint64_t monotonic_usec() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

}  // namespace

EnginePolicy engine_policy_of(MaxmemoryPolicy policy) {
  switch (policy) {
    case MaxmemoryPolicy::kAllKeysLru:
    case MaxmemoryPolicy::kVolatileLru:
      return EnginePolicy::kLru;
    case MaxmemoryPolicy::kAllKeysLfu:
    case MaxmemoryPolicy::kVolatileLfu:
      return EnginePolicy::kLfu;
    case MaxmemoryPolicy::kAllKeysSieve:
      return EnginePolicy::kSieve;
    case MaxmemoryPolicy::kAllKeysS3Fifo:
      return EnginePolicy::kS3Fifo;
    case MaxmemoryPolicy::kAllKeysWTinyLfu:
      return EnginePolicy::kWTinyLfu;
    case MaxmemoryPolicy::kAllKeysRandom:
    case MaxmemoryPolicy::kVolatileRandom:
    case MaxmemoryPolicy::kVolatileTtl:
    case MaxmemoryPolicy::kNoEviction:
      return EnginePolicy::kNone;
  }
  return EnginePolicy::kNone;
}

void MemoryBudget::configure(const Settings& settings) {
  settings_ = settings;
  if (settings_.samples == 0) settings_.samples = 1;
  for (std::size_t i = 0; i < keyspace_->count(); ++i)
    keyspace_->db(i).select_policy(engine_policy_of(settings_.policy));
  // A smaller budget takes effect at once: the next background_step starts shrinking.
  refresh_all();
  pending_ = over_cached();
  // Back within (a larger budget, or none): the exceeded span ends here, not at the next write.
  if (!pending_) noted(EvictResult::kOk);
}

std::size_t MemoryBudget::dataset_bytes() const {
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < keyspace_->count(); ++i) bytes += keyspace_->db(i).memory_used();
  return bytes;
}

void MemoryBudget::measure_baseline() {
  const struct mallinfo2 info = ::mallinfo2();
  const std::size_t heap_in_use = info.uordblks + info.hblkhd;
  const std::size_t databases = dataset_bytes();  // counted by dataset_bytes() already
  baseline_ = heap_in_use > databases ? heap_in_use - databases : 0;
}

// Redis's evictionTimeLimitUs: 50 us per point of tenacity up to 10, then 15 % more per point,
// and no limit at 100.
std::uint64_t MemoryBudget::time_limit_usec() const {
  const unsigned t = settings_.tenacity;
  if (t <= 10) return 50u * t;
  if (t < 100) return static_cast<std::uint64_t>(500.0 * std::pow(1.15, t - 10.0));
  return std::numeric_limits<std::uint64_t>::max();
}

void MemoryBudget::refresh(std::size_t db) {
  if (cached_db_bytes_.size() != keyspace_->count()) return refresh_all();
  const std::size_t bytes = keyspace_->db(db).memory_used();
  cached_dataset_ += bytes;
  cached_dataset_ -= cached_db_bytes_[db];
  cached_db_bytes_[db] = bytes;
}

void MemoryBudget::refresh_all() {
  cached_db_bytes_.resize(keyspace_->count());
  cached_dataset_ = 0;
  for (std::size_t i = 0; i < keyspace_->count(); ++i) {
    cached_db_bytes_[i] = keyspace_->db(i).memory_used();
    cached_dataset_ += cached_db_bytes_[i];
  }
  peak_ = std::max(peak_, cached_dataset_ + client_bytes() + baseline_);
}

MemoryBudget::EvictResult MemoryBudget::evict(TimePoint now, std::size_t db) {
  refresh(db);
  if (!over_cached()) {
    pending_ = false;
    return noted(EvictResult::kOk);
  }
  refresh_all();
  return noted(evict_until_within(now));
}

MemoryBudget::EvictResult MemoryBudget::background_step(TimePoint now) {
  refresh_all();
  return noted(evict_until_within(now));
}

MemoryBudget::EvictResult MemoryBudget::evict_until_within(TimePoint now) {
  if (!over_cached()) {
    pending_ = false;
    return EvictResult::kOk;
  }
  const std::uint64_t started = monotonic_usec();
  const std::uint64_t limit = time_limit_usec();
  for (int since_check = 1;; ++since_check) {
    if (!evict_one(now)) {
      pending_ = false;  // nothing evictable: the next write that passes the budget retries
      return EvictResult::kFail;
    }
    if (!over_cached()) {
      pending_ = false;
      return EvictResult::kOk;
    }
    if (since_check == kKeysPerClockCheck) {
      since_check = 0;
      if (monotonic_usec() - started >= limit) {
        pending_ = true;
        return EvictResult::kRunning;
      }
    }
  }
}

MemoryBudget::EvictResult MemoryBudget::noted(EvictResult result) {
  if (result != EvictResult::kOk) {
    if (exceeded_since_usec_ == 0)
      exceeded_since_usec_ = std::max<std::uint64_t>(1, monotonic_usec());
  } else if (exceeded_since_usec_ != 0) {
    exceeded_total_usec_ += monotonic_usec() - exceeded_since_usec_;
    exceeded_since_usec_ = 0;
  }
  return result;
}

MemoryBudget::ExceededTime MemoryBudget::exceeded_time() const {
  const std::uint64_t current =
      exceeded_since_usec_ == 0 ? 0 : monotonic_usec() - exceeded_since_usec_;
  return {exceeded_total_usec_ + current, current};
}

bool MemoryBudget::evict_one(TimePoint now) {
  if (settings_.policy == MaxmemoryPolicy::kNoEviction) return false;
  const std::size_t count = keyspace_->count();
  for (std::size_t tried = 0; tried < count; ++tried) {
    Db& db = keyspace_->db(next_db_);
    next_db_ = next_db_ + 1 == count ? 0 : next_db_ + 1;
    if (db.stored_size() == 0) continue;
    bool done = false;
    switch (settings_.policy) {
      case MaxmemoryPolicy::kAllKeysRandom:
        done = evict_random(db, now);
        break;
      case MaxmemoryPolicy::kVolatileRandom:
        done = evict_sampled_volatile(db, now, false);
        break;
      case MaxmemoryPolicy::kVolatileTtl:
        done = evict_sampled_volatile(db, now, true);
        break;
      case MaxmemoryPolicy::kVolatileLru:
      case MaxmemoryPolicy::kVolatileLfu:
        done = evict_volatile_by_policy(db, now);
        break;
      default:
        done = evict_by_policy(db, now);
        break;
    }
    if (done) {
      refresh(db.index());
      return true;
    }
  }
  return false;
}

void MemoryBudget::evicted_key(Db& db, std::string_view key) {
  ++evicted_;
  db.touch(key);  // as Redis's signalModifiedKey on eviction: WATCH fails EXEC
}

bool MemoryBudget::evict_by_policy(Db& db, TimePoint now) {
  const std::uint64_t evicted_before = db.stats().evicted;
  // Watchers are told while the record still exists (as Redis signals before deleting).
  if (!db.evict_policy_victim(now, [&](const Blob& record) { db.touch(record.key()); }))
    return false;
  // The engine counts a live victim as evicted, an expired one as expired.
  if (db.stats().evicted != evicted_before) ++evicted_;
  return true;
}

bool MemoryBudget::evict_volatile_by_policy(Db& db, TimePoint now) {
  for (int skipped = 0; skipped < kMaxPersistentSkips; ++skipped) {
    std::optional<Blob> persistent;
    bool live = false;
    const bool found = db.evict_policy_victim(now, [&](const Blob& record) {
      const std::optional<TimePoint> deadline = db.deadline(record.key(), now);
      if (!deadline) return;  // expired: only reclaimed
      live = true;
      if (*deadline == kNoExpiry) {
        persistent.emplace(record);  // a copy: the engine frees the original
      } else {
        evicted_key(db, record.key());
      }
    });
    if (!found) return false;
    if (!persistent) return true;  // a volatile key evicted, or an expired one reclaimed
    db.reinsert_persistent(*persistent, now);
  }
  return evict_sampled_volatile(db, now, false);
}

bool MemoryBudget::evict_random(Db& db, TimePoint now) {
  const std::optional<std::string_view> key = db.random_key(next_random(), now);
  if (!key) return false;
  const std::string victim(*key);  // the view dies with the record
  if (!db.erase_uncounted(victim, now)) return false;
  ++evicted_;  // Db::erase_uncounted told the watchers
  return true;
}

bool MemoryBudget::evict_sampled_volatile(Db& db, TimePoint now, bool nearest_deadline) {
  std::string best;
  TimePoint best_deadline = kNoExpiry;
  bool found = false;
  const auto consider = [&](std::string_view key, TimePoint deadline) {
    if (deadline == kNoExpiry) return;
    if (!found || (nearest_deadline && deadline < best_deadline)) {
      best.assign(key);
      best_deadline = deadline;
      found = true;
    }
  };
  for (std::size_t i = 0; i < settings_.samples; ++i) {
    const std::optional<std::string_view> key = db.random_key(next_random(), now);
    if (!key) break;
    const std::optional<TimePoint> deadline = db.deadline(*key, now);
    if (deadline) consider(*key, *deadline);
    if (found && !nearest_deadline) break;
  }
  if (!found) {
    // Sampling met only persistent keys: walk on from where the last walk of this database
    // stopped, until a volatile key turns up or a whole pass has found none.
    if (scans_.size() != keyspace_->count()) scans_.assign(keyspace_->count(), VolatileScan{});
    VolatileScan& scan = scans_[db.index()];
    if (scan.none_at_writes == db.deadline_writes()) return false;  // none since the last pass
    while (!found) {
      scan.cursor =
          db.scan(scan.cursor, kScanSlotsPerStep, now, [&](std::string_view key, const Blob&) {
            if (const auto deadline = db.deadline(key, now)) consider(key, *deadline);
          });
      if (found) scan.found_in_pass = true;
      if (scan.cursor != 0) continue;
      if (!scan.found_in_pass && !found) {
        scan.none_at_writes = db.deadline_writes();
        return false;
      }
      scan.found_in_pass = false;  // a new pass begins
    }
  }
  if (!found) return false;
  if (!db.erase_uncounted(best, now)) return false;
  ++evicted_;
  return true;
}

std::uint64_t MemoryBudget::next_random() {
  // splitmix64: a cheap, well-mixed sequence; eviction needs spread, not secrecy.
  std::uint64_t z = (random_state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace chronocached
