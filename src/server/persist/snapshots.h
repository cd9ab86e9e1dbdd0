// Snapshots: the server's SAVE, BGSAVE, save rules, LASTSAVE, load at start and SHUTDOWN's save,
// on the snapshot files of src/persistence/ (docs/design/snapshot-format.md).
//
// BGSAVE without fork(). Every database's engine begins a point-in-time capture at one `now`
// (chronocache/capture.h): every 16-slot group is marked pending, and each reaches an EngineSink
// exactly once, either because the loop's tick walks it (step(), a slice of at most kStepBudget
// per tick that ends early when a client waits) or because a write is about to change it (the
// engine hands it over first). So the file holds exactly the contents at the BGSAVE's start
// while clients keep reading and writing, and no page is duplicated (Redis's fork can double
// memory under writes). Entries go to a SnapshotWriter whose worker thread compresses, checksums
// and writes; when every capture is complete the worker also fsyncs and renames (start_commit),
// and the tick polls for the end.
//
//   BGSAVE ──begin_capture(all engines)──► kCapturing ──all complete──► kCommitting ──done──► idle
//                    │ step(): ≤ kStepBudget of capture_step per tick, tick ≤ 1 ms meanwhile
//                    └ a write to a pending group hands it over first (engine)
//
// A capture belongs to an engine, not to a database number: SWAPDB moves engines between Db
// objects during a capture, and each sink keeps the number its engine had at the start.
// FLUSHDB/FLUSHALL complete the capture inside the engine's clear() first (under save rules
// FLUSHALL abandons it instead and saves the emptied data set, as Redis).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chronocache/clock/clock.h"
#include "persistence/snapshot_writer.h"
#include "server/base/logger.h"
#include "server/config/server_config.h"
#include "server/store/keyspace.h"

namespace chronocached {

class EngineSink;

class Snapshots {
 public:
  // The longest one tick spends advancing a BGSAVE's capture (the expiry slice's budget, for the
  // same reason); a slice also ends early once a client is waiting (step()).
  static constexpr auto kStepBudget = std::chrono::microseconds(250);
  // After a failed BGSAVE, save rules wait this long before trying again (Redis's
  // CONFIG_BGSAVE_RETRY_DELAY): a full disk is not hammered every tick.
  static constexpr std::int64_t kRetryDelayMs = 5000;

  // What snapshots need of the server's configuration (server_state.h derives it from
  // ServerConfig at start and after CONFIG SET).
  struct Settings {
    std::string path;                    // dir/dbfilename
    std::vector<SavePoint> save_points;  // empty: no automatic saves
  };

  // Saves and loads `keyspace`, which must outlive this; reports through `logger`.
  Snapshots(Keyspace& keyspace, Logger logger);
  ~Snapshots();  // abandons a running BGSAVE (its temporary file is removed)
  Snapshots(const Snapshots&) = delete;
  Snapshots& operator=(const Snapshots&) = delete;

  void configure(Settings settings) { settings_ = std::move(settings); }
  bool has_save_points() const { return !settings_.save_points.empty(); }
  // Save points count time from here when nothing was saved yet (the server's start).
  void set_last_save(std::int64_t unix_ms) { last_save_ms_ = unix_ms; }

  // SAVE: writes every live key to the file, blocking. False on failure (logged).
  bool save(chronocache::TimePoint now, std::int64_t unix_ms);
  // DEBUG RELOAD, as Redis's: saves, empties the keyspace and loads the file back. The save is
  // not counted in rdb_saves, and neither the emptying nor the load counts as changes: the
  // server is as clean as after the save. On a load error, `load_error` says why.
  enum class Reload { kOk, kSaveFailed, kLoadFailed };
  Reload reload(chronocache::TimePoint now, std::int64_t unix_ms, std::string& load_error);

  enum class Start { kStarted, kAlreadyRunning, kFailed };
  // BGSAVE: begins the capture and returns; step() does the rest.
  Start start_bgsave(chronocache::TimePoint now, std::int64_t unix_ms);
  // BGSAVE SCHEDULE while one runs: another starts when it ends.
  void schedule_bgsave() { scheduled_ = true; }
  // From the loop's tick: advances a running BGSAVE, finishes it, or starts one that a save rule
  // or SCHEDULE asks for. The capture's slice ends early once `clients_waiting()` says a client
  // is waiting, after at least one step (so a BGSAVE under full load still moves every tick).
  void step(chronocache::TimePoint now, std::int64_t unix_ms,
            const std::function<bool()>& clients_waiting);
  // Stops a running BGSAVE and removes its temporary file (SHUTDOWN, DEBUG RELOAD).
  void abandon_bgsave();

  // SHUTDOWN [SAVE|NOSAVE] [FORCE] and SIGTERM: stops a BGSAVE, then saves if `save`. False
  // when that save failed and not `force`: the server must keep running (Redis).
  bool prepare_shutdown(bool save, bool force, chronocache::TimePoint now, std::int64_t unix_ms);

  struct LoadResult {
    bool ok = true;
    bool found = false;  // a file was there
    std::string error;   // "<file>: <reason> at offset <N>"
  };
  // Loads the file into the (empty) keyspace; all-or-nothing: on error the keyspace is
  // emptied again. Entries whose deadline has passed are counted, not loaded. Removes the
  // temporary files a killed writer left beside it first.
  LoadResult load(chronocache::TimePoint now, std::int64_t unix_ms);

  // ---- For INFO persistence, LASTSAVE and DEBUG ----------------------------------------------
  std::int64_t last_save_ms() const { return last_save_ms_; }  // unix ms of the last good save
  bool bgsave_in_progress() const { return phase_ != Phase::kIdle; }
  bool last_bgsave_ok() const { return last_bgsave_ok_; }
  std::int64_t last_bgsave_seconds() const { return last_bgsave_seconds_; }
  std::int64_t bgsave_started_ms() const { return started_ms_; }
  std::uint64_t saves() const { return saves_; }
  void reset_saves() { saves_ = 0; }  // CONFIG RESETSTAT, as Redis zeroes rdb_saves
  std::uint64_t keys_processed() const;
  std::uint64_t keys_total() const { return keys_total_; }
  std::uint64_t last_load_loaded() const { return last_load_loaded_; }
  std::uint64_t last_load_expired() const { return last_load_expired_; }
  // DEBUG SNAPSHOT-SLICE: slots one tick hands over (0: the capture pauses; kUnlimited: as many
  // as kStepBudget allows, the default). Lets tests write while a BGSAVE provably runs.
  static constexpr std::size_t kUnlimited = ~std::size_t{0};
  void set_slice_slots(std::size_t slots) { slice_slots_ = slots; }

 private:
  enum class Phase { kIdle, kCapturing, kCommitting };
  void advance_capture(const std::function<bool()>& clients_waiting);
  void finish_bgsave(std::int64_t unix_ms);
  std::optional<SavePoint> rule_due(std::int64_t unix_ms) const;
  enum class Counted : bool { kNo, kYes };  // in rdb_saves
  void save_succeeded(std::int64_t unix_ms, std::uint64_t changes_before,
                      Counted counted = Counted::kYes);
  bool write_file(chronocache::TimePoint now, std::int64_t unix_ms);

  Keyspace& keyspace_;
  Logger logger_;
  Settings settings_;
  std::int64_t last_save_ms_ = 0;
  Phase phase_ = Phase::kIdle;
  std::unique_ptr<chronocache::persistence::SnapshotWriter> writer_;
  std::vector<std::unique_ptr<EngineSink>> sinks_;  // one per engine, while a BGSAVE runs
  std::uint64_t changes_before_ = 0;                // Keyspace::changes() when the capture began
  std::int64_t started_ms_ = 0;  // unix ms; with the steady time for the duration
  std::chrono::steady_clock::time_point started_steady_{};
  std::uint64_t keys_total_ = 0;
  bool scheduled_ = false;
  std::size_t slice_slots_ = kUnlimited;

  bool last_bgsave_ok_ = true;
  std::int64_t last_bgsave_seconds_ = -1;
  std::int64_t last_try_ms_ = 0;  // unix ms of the last BGSAVE that failed
  std::uint64_t saves_ = 0;
  std::uint64_t last_load_loaded_ = 0;
  std::uint64_t last_load_expired_ = 0;
};

}  // namespace chronocached
