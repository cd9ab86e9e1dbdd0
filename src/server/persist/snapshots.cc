#include "server/persist/snapshots.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string_view>
#include <thread>

#include "persistence/durable_file.h"
#include "persistence/snapshot_reader.h"
#include "server/base/version.h"
#include "server/store/unix_time.h"

namespace chronocached {

namespace persistence = chronocache::persistence;
using chronocache::TimePoint;

namespace {

// The format's measured defaults (LZ4, 128 KiB blocks, a worker thread, fsync at commit). The
// worker runs as background work, five nice steps below the loop that starts it: at the loop's
// priority it took whole scheduler slices from it, and under SCHED_IDLE it starved whenever other
// processes loaded the machine (docs/performance.md, "BGSAVE beside CPU-bound processes").
persistence::WriterOptions writer_options() {
  persistence::WriterOptions options;
  options.background_priority = true;
  return options;
}

// One stored entry as the file holds it: the deadline becomes an absolute unix time.
persistence::SnapshotEntry entry_of(std::uint32_t db, std::string_view key, const Blob& value,
                                    TimePoint deadline, TimePoint now, std::int64_t unix_ms) {
  persistence::SnapshotEntry entry;
  entry.db = db;
  entry.key = key;
  entry.value = value.view();
  entry.expire_unix_ms =
      deadline == kNoExpiry ? persistence::kNoExpiryMs : unix_ms_of(deadline, now, unix_ms);
  return entry;
}

// Inserts loaded records kDepth entries behind the reader: each key's table group is prefetched
// when its record is built and the insert comes kDepth records later, so the table's cache misses
// overlap instead of stalling one insert each. In file order (a key met twice keeps the later).
class LoadPipeline {
 public:
  void push(Db& db, std::string_view key, std::string_view value, TimePoint deadline,
            TimePoint now) {
    Pending& slot = ring_[pushed_ % kDepth];
    if (pushed_ >= kDepth)
      slot.db->load_record(std::move(slot.record), slot.hash, slot.deadline, now);
    slot.db = &db;
    slot.record = db.make_record(key, value);
    slot.hash = db.prefetch_table(key);
    slot.deadline = deadline;
    ++pushed_;
  }
  void flush(TimePoint now) {
    for (std::size_t i = pushed_ > kDepth ? pushed_ - kDepth : 0; i < pushed_; ++i) {
      Pending& slot = ring_[i % kDepth];
      slot.db->load_record(std::move(slot.record), slot.hash, slot.deadline, now);
    }
    pushed_ = 0;
  }

 private:
  static constexpr std::size_t kDepth = 8;
  struct Pending {
    Db* db = nullptr;
    Blob record;
    std::uint64_t hash = 0;
    TimePoint deadline{};
  };
  Pending ring_[kDepth];
  std::size_t pushed_ = 0;
};

}  // namespace

// One engine's capture, turned into snapshot entries. The db number is the one the engine had
// when the capture began (SWAPDB may move the engine meanwhile).
class EngineSink final : public chronocache::CaptureSink<Blob, NoValue> {
 public:
  EngineSink(Engine& engine, std::uint32_t db, persistence::SnapshotWriter& writer, TimePoint now,
             std::int64_t unix_ms)
      : engine_(engine), db_(db), writer_(writer), now_(now), unix_ms_(unix_ms) {}

  void capture(const Blob& record, const NoValue&, TimePoint deadline) override {
    if (deadline != kNoExpiry && deadline <= now_) return;  // the engine skips these already
    writer_.add(entry_of(db_, record.key(), record, deadline, now_, unix_ms_));
    ++captured_;
  }

  Engine& engine() { return engine_; }
  std::uint64_t captured() const { return captured_; }

 private:
  Engine& engine_;
  std::uint32_t db_;
  persistence::SnapshotWriter& writer_;
  TimePoint now_;
  std::int64_t unix_ms_;
  std::uint64_t captured_ = 0;
};

Snapshots::Snapshots(Keyspace& keyspace, Logger logger)
    : keyspace_(keyspace), logger_(std::move(logger)) {}

Snapshots::~Snapshots() {
  for (auto& sink : sinks_)
    if (sink->engine().capturing()) sink->engine().abandon_capture();
  sinks_.clear();
  writer_.reset();  // removes the temporary file unless committed
}

std::uint64_t Snapshots::keys_processed() const {
  std::uint64_t n = 0;
  for (const auto& sink : sinks_) n += sink->captured();
  return n;
}

void Snapshots::save_succeeded(std::int64_t unix_ms, std::uint64_t changes_before,
                               Counted counted) {
  // Writes made while the snapshot was taken are not in it: they stay counted (Redis's
  // dirty -= dirty_before_bgsave).
  keyspace_.forget_changes(changes_before);
  last_save_ms_ = unix_ms;
  last_bgsave_ok_ = true;  // as Redis: any save that succeeds lifts stop-writes-on-bgsave-error
  if (counted == Counted::kYes) ++saves_;
}

bool Snapshots::save(TimePoint now, std::int64_t unix_ms) {
  if (!write_file(now, unix_ms)) return false;
  save_succeeded(unix_ms, keyspace_.changes());
  return true;
}

Snapshots::Reload Snapshots::reload(TimePoint now, std::int64_t unix_ms, std::string& load_error) {
  if (!write_file(now, unix_ms)) return Reload::kSaveFailed;
  save_succeeded(unix_ms, keyspace_.changes(), Counted::kNo);
  keyspace_.clear_all(now);
  const LoadResult loaded = load(now, unix_ms);
  keyspace_.forget_changes(keyspace_.changes());  // the emptying and the load wrote nothing new
  if (!loaded.ok) {
    load_error = loaded.error;
    return Reload::kLoadFailed;
  }
  return Reload::kOk;
}

bool Snapshots::write_file(TimePoint now, std::int64_t unix_ms) {
  const std::string& path = settings_.path;
  persistence::SnapshotError error;
  auto writer =
      persistence::SnapshotWriter::open(path, unix_ms, kVersion, writer_options(), &error);
  bool ok = writer != nullptr;
  if (ok) {
    for (std::size_t i = 0; i < keyspace_.count(); ++i) {
      const auto db = static_cast<std::uint32_t>(i);
      keyspace_.db(i).for_each(now, [&](std::string_view key, const Blob& value, TimePoint d) {
        writer->add(entry_of(db, key, value, d, now, unix_ms));
      });
    }
    ok = writer->commit(&error);
  }
  if (!ok) {
    logger_.log("warning", "Failed saving the DB: " + error.message());
    return false;
  }
  logger_.log("notice", "DB saved on disk");
  return true;
}

Snapshots::Start Snapshots::start_bgsave(TimePoint now, std::int64_t unix_ms) {
  if (phase_ != Phase::kIdle) return Start::kAlreadyRunning;
  persistence::SnapshotError error;
  writer_ = persistence::SnapshotWriter::open(settings_.path, unix_ms, kVersion, writer_options(),
                                              &error);
  if (writer_ == nullptr) {
    logger_.log("warning", "Can't save in background: " + error.message());
    last_bgsave_ok_ = false;
    last_try_ms_ = unix_ms;
    return Start::kFailed;
  }
  sinks_.clear();
  keys_total_ = 0;
  for (std::size_t i = 0; i < keyspace_.count(); ++i) {
    Db& db = keyspace_.db(i);
    keys_total_ += db.stored_size();
    sinks_.push_back(std::make_unique<EngineSink>(
        db.capture_engine(), static_cast<std::uint32_t>(i), *writer_, now, unix_ms));
    db.capture_engine().begin_capture(*sinks_.back(), now);
  }
  phase_ = Phase::kCapturing;
  changes_before_ = keyspace_.changes();
  started_ms_ = unix_ms;
  started_steady_ = std::chrono::steady_clock::now();
  scheduled_ = false;
  logger_.log("notice", "Background saving started");
  return Start::kStarted;
}

// Hands over pending groups until every capture is complete, the slice is used up or a client
// is waiting; the clock and the clients are looked at between calls of kSlotsPerCall slots (tens
// of microseconds each), not per group.
void Snapshots::advance_capture(const std::function<bool()>& clients_waiting) {
  constexpr std::size_t kSlotsPerCall = 1024;
  if (slice_slots_ == 0) return;  // paused by DEBUG SNAPSHOT-SLICE 0
  const auto stop_at = std::chrono::steady_clock::now() + kStepBudget;
  std::size_t left = slice_slots_;
  bool stepped = false;
  bool complete = true;
  for (auto& sink : sinks_) {
    Engine& engine = sink->engine();
    while (engine.capturing() && left != 0) {
      if (stepped && (std::chrono::steady_clock::now() >= stop_at || clients_waiting())) {
        left = 0;  // the slice ends here, for every engine
        break;
      }
      const std::size_t slots = std::min(left, kSlotsPerCall);
      if (left != kUnlimited) left -= slots;
      engine.capture_step(slots);
      stepped = true;
    }
    if (engine.capturing()) complete = false;
  }
  if (!complete) return;
  writer_->start_commit();  // last block, trailer, fsync, rename: on the writer's thread
  phase_ = Phase::kCommitting;
}

void Snapshots::finish_bgsave(std::int64_t unix_ms) {
  persistence::SnapshotError error;
  const bool ok = writer_->commit_result(&error);
  last_bgsave_seconds_ = std::chrono::duration_cast<std::chrono::seconds>(
                             std::chrono::steady_clock::now() - started_steady_)
                             .count();
  writer_.reset();
  sinks_.clear();
  phase_ = Phase::kIdle;
  last_bgsave_ok_ = ok;
  if (ok) {
    logger_.log("notice", "DB saved on disk");
    logger_.log("notice", "Background saving terminated with success");
    save_succeeded(unix_ms, changes_before_);
  } else {
    logger_.log("warning", "Background saving error: " + error.message());
    last_try_ms_ = unix_ms;
  }
}

// The first save rule whose seconds and changes are both reached (Redis's serverCron order).
std::optional<SavePoint> Snapshots::rule_due(std::int64_t unix_ms) const {
  if (!last_bgsave_ok_ && unix_ms - last_try_ms_ < kRetryDelayMs) return std::nullopt;
  for (const SavePoint& point : settings_.save_points) {
    if (keyspace_.changes() >= static_cast<std::uint64_t>(point.changes) &&
        unix_ms - last_save_ms_ >= point.seconds * 1000)
      return point;
  }
  return std::nullopt;
}

void Snapshots::step(TimePoint now, std::int64_t unix_ms,
                     const std::function<bool()>& clients_waiting) {
  if (phase_ == Phase::kCapturing) advance_capture(clients_waiting);
  if (phase_ == Phase::kCommitting && writer_->commit_done()) finish_bgsave(unix_ms);
  if (phase_ != Phase::kIdle || (!has_save_points() && !scheduled_)) return;
  if (!scheduled_) {
    const std::optional<SavePoint> due = rule_due(unix_ms);
    if (!due) return;
    logger_.log("notice", std::to_string(due->changes) + " changes in " +
                              std::to_string(due->seconds) + " seconds. Saving...");
  }
  start_bgsave(now, unix_ms);
  scheduled_ = false;
}

void Snapshots::abandon_bgsave() {
  if (phase_ == Phase::kIdle) return;
  if (phase_ == Phase::kCommitting) {
    // Every entry is written and the worker is finishing the file: let it, and count the save
    // (stopping now would gain a few milliseconds and lose a complete snapshot).
    while (!writer_->commit_done()) std::this_thread::yield();
    const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started_steady_);
    finish_bgsave(started_ms_ + elapsed.count());
    return;
  }
  for (auto& sink : sinks_)
    if (sink->engine().capturing()) sink->engine().abandon_capture();
  writer_->abandon();
  writer_.reset();
  sinks_.clear();
  phase_ = Phase::kIdle;
  logger_.log("warning", "Background saving abandoned");
}

bool Snapshots::prepare_shutdown(bool save_first, bool force, TimePoint now, std::int64_t unix_ms) {
  if (bgsave_in_progress()) {
    logger_.log("warning", "There is a background save in progress. Stopping it!");
    abandon_bgsave();
  }
  if (!save_first) return true;
  logger_.log("notice", "Saving the final snapshot before exiting.");
  if (save(now, unix_ms)) return true;
  if (force) {  // Redis's texts, both ways
    logger_.log("warning", "Error trying to save the DB. Exit anyway.");
    return true;
  }
  logger_.log("warning", "Error trying to save the DB, can't exit.");
  logger_.log("warning",
              "Errors trying to shut down the server. Check the logs for more information.");
  return false;
}

Snapshots::LoadResult Snapshots::load(TimePoint now, std::int64_t unix_ms) {
  LoadResult result;
  const std::string& path = settings_.path;
  const std::size_t stale = persistence::remove_stale_temp_files(path);
  if (stale != 0) {
    logger_.log("notice", "Removed " + std::to_string(stale) +
                              " temporary snapshot file(s) left by a killed save");
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) return result;  // nothing to load
  result.found = true;
  const auto started = std::chrono::steady_clock::now();
  persistence::SnapshotError error;
  auto reader = persistence::SnapshotReader::open(path, persistence::ReaderLimits{}, &error);
  Keyspace& keyspace = keyspace_;
  std::uint64_t loaded = 0, expired = 0;
  bool ok = reader != nullptr;
  if (ok) {
    // The trailer's count is not covered by a checksum until for_each checks it: a reservation
    // is capped by what the file's size can hold (an entry takes at least a few bytes even
    // compressed), so a flipped count cannot make us allocate absurd memory. Snapshots are
    // written database by database, so the first database met usually holds most keys.
    const std::uint64_t hint =
        std::min<std::uint64_t>(reader->entry_count_hint(), reader->file_bytes() / 4);
    bool reserved = false;
    std::string bad_db;
    LoadPipeline pipeline;
    ok = reader->for_each(
        [&](const persistence::SnapshotEntry& e) {
          if (e.db >= keyspace.count()) {
            if (bad_db.empty()) {
              bad_db = "database " + std::to_string(e.db) + " is out of range (databases is " +
                       std::to_string(keyspace.count()) + ")";
            }
            return;
          }
          if (e.expire_unix_ms != persistence::kNoExpiryMs && e.expire_unix_ms <= unix_ms) {
            ++expired;
            return;
          }
          Db& db = keyspace.db(e.db);
          if (!reserved) {
            db.reserve(static_cast<std::size_t>(hint));
            reserved = true;
          }
          const TimePoint deadline = e.expire_unix_ms == persistence::kNoExpiryMs
                                         ? kNoExpiry
                                         : deadline_at_unix_ms(e.expire_unix_ms, now, unix_ms);
          pipeline.push(db, e.key, e.value, deadline, now);
          ++loaded;
        },
        &error);
    if (ok) pipeline.flush(now);
    if (ok && !bad_db.empty()) {
      ok = false;
      error.file = path;
      error.offset = 0;
      error.reason = bad_db;
    }
  }
  if (!ok) {
    keyspace.clear_all(now);  // all or nothing
    result.ok = false;
    result.error = error.message();
    return result;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  char text[64];
  std::snprintf(text, sizeof(text), "DB loaded from disk: %.3f seconds", seconds);
  logger_.log("notice", text);
  logger_.log("notice", "Done loading RDB, keys loaded: " + std::to_string(loaded) +
                            ", keys expired: " + std::to_string(expired) + ".");
  last_load_loaded_ = loaded;
  last_load_expired_ = expired;
  last_save_ms_ = unix_ms;  // as Redis: the data on disk equals the data in memory
  return result;
}

}  // namespace chronocached
