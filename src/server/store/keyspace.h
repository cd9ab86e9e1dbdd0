// Keyspace: chronocached's numbered databases, each one chronocache::Cache of Blob -> Blob.
//
// Commands reach the engine through Db, which adds only what Redis semantics need around the
// engine's own operations: building Blobs from request bytes, telling WATCHing clients that a
// key changed, and counting the change for save rules (Keyspace::changes(), Redis's `dirty`).
// Both happen here, in the write itself, so no command handler can forget either. Expiry, lookup
// and storage are the engine's; nothing here re-implements them. Every call takes `now`, read
// once per event-loop batch (Redis freezes time per command too).
//
// Counting follows Redis's: one change per key a write stores, erases or re-times; a flush
// counts the keys it removed; SWAPDB and RENAME count one. Expiry and eviction count none (they
// change nothing a snapshot would have wanted to keep).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "chronocache/base/assert.h"
#include "chronocache/cache.h"
#include "chronocache/memory/record_arena.h"
#include "chronocache/policy/lfu.h"
#include "chronocache/policy/lru.h"
#include "chronocache/policy/s3fifo.h"
#include "chronocache/policy/sieve.h"
#include "chronocache/policy/switchable_policy.h"
#include "chronocache/policy/ttl_only.h"
#include "chronocache/policy/w_tinylfu.h"
#include "server/store/blob.h"
#include "server/store/key_hash_hints.h"
#include "server/store/loop_clock.h"

namespace chronocached {

using chronocache::TimePoint;
// The engine stores records: each key Blob carries its value (blob.h), so the engine's value is
// empty and a slot is one pointer plus the deadline.
struct NoValue {};
// The eviction order is chosen at run time (CONFIG SET maxmemory-policy): the engine's policy is
// a switch among these, TtlOnly (no order, nothing allocated) first. EnginePolicy names the
// alternatives by their index; store/memory_budget.h maps Redis's policy names onto them.
using ServerPolicy =
    chronocache::SwitchablePolicy<chronocache::TtlOnly, chronocache::Lru, chronocache::Lfu,
                                  chronocache::Sieve, chronocache::S3Fifo, chronocache::WTinyLfu>;
enum class EnginePolicy : std::uint8_t { kNone, kLru, kLfu, kSieve, kS3Fifo, kWTinyLfu };
static_assert(static_cast<std::size_t>(EnginePolicy::kWTinyLfu) + 1 == ServerPolicy::kAlternatives);
// Counting keys with a deadline keeps INFO keyspace's expires= exact (Redis's expires dict).
using Engine = chronocache::Cache<Blob, NoValue, ServerPolicy, LoopClock, BlobHash, BlobEq,
                                  chronocache::CacheFeatures{.count_volatile = true}>;
inline constexpr TimePoint kNoExpiry = chronocache::kNoExpiry;
static_assert(Engine::slot_bytes() == 13,
              "a slot is a Blob and a 32-bit deadline: 12 bytes and a control byte (the policy's "
              "word, while a policy keeps one, is in the table's meta column)");

// Clients WATCHing keys: a Db reports each changed key here, and EXEC of a transaction whose
// watched key changed fails. Empty (and free to consult) while nobody watches.
class WatchRegistry {
 public:
  using ClientId = std::uint64_t;
  void watch(ClientId client, std::size_t db, std::string_view key);
  void unwatch_all(ClientId client);
  // True once a key the client watches has changed since its WATCH.
  bool dirty(ClientId client) const;

  void touch(std::size_t db, std::string_view key) {
    if (!watched_.empty()) touch_slow(db, key);
  }
  // A whole database changed (FLUSHDB, SWAPDB): as Redis, only watchers of keys that
  // existed(db, key) are told; a watched key that was absent and still is changes nothing.
  template <class Exists>
  void touch_db(std::size_t db, Exists existed) {
    if (watched_.empty()) return;
    for (const Watch& w : watched_)
      if (w.db == db && existed(w.key)) dirty_[w.client] = true;
  }

 private:
  struct Watch {
    std::size_t db;
    std::string key;
    ClientId client;
  };
  void touch_slow(std::size_t db, std::string_view key);

  std::vector<Watch> watched_;  // few at a time in practice: linear scans are fine
  std::unordered_map<ClientId, bool> dirty_;
};

// A SET-family write, parsed (commands/strings.cc): what Db::set does in one probe.
struct SetOptions {
  enum class Condition : std::uint8_t { kAlways, kIfAbsent, kIfPresent };  // -, NX, XX
  Condition condition = Condition::kAlways;
  bool keep_ttl = false;  // KEEPTTL: a live key keeps its deadline (`deadline` is then ignored)
  bool get = false;       // GET: the old value is handed over before the write
  TimePoint deadline = kNoExpiry;  // EX/PX/EXAT/PXAT; at or before now: the write removes the key
};
enum class SetOutcome : std::uint8_t { kWritten, kDeclined };  // kDeclined: NX or XX said no

class Db {
 public:
  // `changes`: the keyspace's change counter, which every write here advances. `arena`: where
  // records are packed (the keyspace's, shared by its databases, so SWAPDB moves no record).
  // `key_hash`: the table's hash (seeded; slot-prefixed in cluster mode, blob.h). `hints`: the
  // keyspace's, hashes a batch's prefetch computed (key_hash_hints.h).
  Db(std::size_t index, BlobHash key_hash, WatchRegistry& watches, std::uint64_t& changes,
     chronocache::RecordArena& arena, KeyHashHints& hints, LoopClock clock);

  // ---- Reads ------------------------------------------------------------------------------
  // The live value, or nullptr; counts a keyspace hit or miss. Valid until the next write.
  // Read-only, so a BGSAVE's capture never hands a segment over for it (a batch of GETs meeting
  // many pending segments stalled for milliseconds: docs/design/server.md, "Snapshots").
  const Blob* find(std::string_view key, TimePoint now) {
    return engine_->read_key_prehashed(key, hashed(key), now);
  }
  // find, as Redis's LOOKUP_NOTOUCH: a keyspace hit or miss, but the key keeps its place in the
  // eviction order and its LFU count (TTL, EXISTS and TYPE: redis-cli --bigkeys asks TYPE of
  // every key, which would otherwise make every key recent).
  const Blob* find_untouched(std::string_view key, TimePoint now) {
    return engine_->read_key_prehashed(key, hashed(key), now, chronocache::Access::kNoTouch);
  }
  // OBJECT's look at a key, as Redis's LOOKUP_NOTOUCH: a keyspace hit or miss, but the key keeps
  // its place in the eviction order (redis-cli --hotkeys would otherwise make every key it
  // scans recent, and count one more access for each). `lfu_count`: how many accesses the LFU
  // policy has seen (1 at insert, +1 for each read or overwrite, up to 255), while it is the
  // policy (allkeys-lfu, volatile-lfu). record == nullptr: no live key.
  struct Inspection {
    const Blob* record = nullptr;
    std::optional<std::uint32_t> lfu_count;
  };
  Inspection inspect(std::string_view key, TimePoint now) {
    const auto found = engine_->inspect_prehashed(key, hashed(key), now);
    Inspection out{found.key, std::nullopt};
    if (found.key != nullptr) {
      if (const auto* lfu = engine_->policy().template get_if<chronocache::Lfu>())
        out.lfu_count = lfu->count_of(ServerPolicy::meta_as<chronocache::Lfu>(*found.meta));
    }
    return out;
  }
  // The live value, or nullptr, for a command that has read it already or is about to replace
  // it (LCS's second look, RENAME's source): neither a keyspace hit or miss nor an access for
  // the eviction policy.
  const Blob* peek(std::string_view key, TimePoint now) {
    return engine_->read_key_prehashed(key, hashed(key), now, chronocache::Access::kPeek);
  }
  // For in-place edits (APPEND, SETRANGE): change the record only through edit(), which keeps
  // the engine's byte count exact and tells watchers. The lookup of a write, as Redis's
  // lookupKeyWrite: an access for the eviction policy, but no keyspace hit or miss.
  Blob* find_mutable(std::string_view key, TimePoint now) {
    return engine_->find_key_prehashed(key, hashed(key), now, chronocache::Access::kWrite);
  }
  bool exists(std::string_view key, TimePoint now) const {
    return engine_->contains_prehashed(key, hashed(key), now);
  }
  // nullopt: no live key; kNoExpiry: a key without a deadline.
  std::optional<TimePoint> deadline(std::string_view key, TimePoint now) const {
    return engine_->deadline_prehashed(key, hashed(key), now);
  }
  std::size_t size(TimePoint now) const { return engine_->size_at(now); }
  // The engine's W-TinyLFU while it is the eviction policy (allkeys-wtinylfu), else nullptr: its
  // window and segments, for the metrics.
  const chronocache::WTinyLfu* wtinylfu() const {
    return engine_->policy().template get_if<chronocache::WTinyLfu>();
  }
  // Keyspace::pause_expiry, for this database.
  void set_reads_remove_expired(bool remove) { engine_->set_reads_remove_expired(remove); }
  // Keys held, expired ones not yet reclaimed included, in O(1): what Redis's DBSIZE and INFO
  // keyspace report (size() is exact but may scan the table).
  std::size_t stored_size() const { return engine_->stored_size(); }
  // Of those, the keys with a TTL, in O(1): INFO keyspace's expires=.
  std::size_t volatile_stored_size() const { return engine_->volatile_stored_size(); }

  // Prefetching for a batch of pipelined commands: stage 1 for every key, then stage 2 for every
  // key, then the commands run with their table lines and records already in the cache.
  std::uint64_t prefetch_table(std::string_view key) const {
    const chronocache::Hashed h{engine_->hash_of(key)};  // computed: this is what hints hold
    engine_->prefetch(h);
    return h.value;
  }
  void prefetch_record(std::uint64_t hash) const {
    engine_->prefetch_keys(chronocache::Hashed{hash},
                           [](const Blob& record) { record.prefetch(); });
  }

  // ---- Writes (each one tells watchers and counts its change) ---------------------------------
  // Each write hashes the key once and probes the table once (the engine's upsert): a live key's
  // record is rewritten in place (no allocation when the value fits its block), a new key's
  // record is built once. The overwrite is an access for an ordering policy, as Redis's SET
  // refreshes the key's LRU clock and LFU counter; it is no keyspace hit or miss.
  void put(std::string_view key, std::string_view value, TimePoint deadline, TimePoint now);
  void put(std::string_view key, const Blob& value, TimePoint deadline, TimePoint now) {
    put(key, value.view(), deadline, now);
  }
  // SET with its options, and the older forms (SETNX, SETEX, PSETEX, GETSET), in one probe.
  // With options.get, on_old(const Blob* old) is called first with the live record (nullptr:
  // none), valid during the call only, and the lookup counts a keyspace hit or miss (Redis's
  // SET ... GET reads the key); on_old must not use this Db. Then NX/XX decide, and a write
  // stores `value` with options.deadline (keep_ttl: the live key's own deadline, if any).
  template <class OnOld>
  SetOutcome set(std::string_view key, std::string_view value, const SetOptions& options,
                 TimePoint now, OnOld&& on_old) {
    using Condition = SetOptions::Condition;
    const SetOutcome outcome = engine_->upsert_prehashed(
        key, hashed(key), now,
        options.get ? chronocache::Access::kRead : chronocache::Access::kPeek,
        [&](Engine::Upsert& entry) CC_ALWAYS_INLINE_LAMBDA {
          const bool found = entry.found();
          if (options.get) on_old(found ? &entry.key() : nullptr);
          if (found ? options.condition == Condition::kIfAbsent
                    : options.condition == Condition::kIfPresent)
            return SetOutcome::kDeclined;
          write(entry, key, value, options.keep_ttl && found ? entry.deadline() : options.deadline,
                now);
          return SetOutcome::kWritten;
        });
    if (outcome == SetOutcome::kWritten) changed(key);
    return outcome;
  }
  bool erase(std::string_view key, TimePoint now);
  // Removes a key without counting a change; watchers are told. For maxmemory's evictions (not a
  // write a snapshot misses, as in Redis) and MOVE's source (the copy to the target is the one
  // change Redis counts). False when the key was not live.
  bool erase_uncounted(std::string_view key, TimePoint now);
  // Stores a copy of `record`'s value under `target` with `deadline`, keeping the "raw" mark
  // OBJECT ENCODING reports (Redis moves or duplicates the object, encoding included). Records
  // embed their key (store/blob.h), so the bytes are copied into the target's own record.
  void put_copy(std::string_view target, const Blob& record, TimePoint deadline, TimePoint now);
  // RENAME: the live `source` moves to `target` with its deadline; one change, as Redis counts
  // it (watchers of both keys are told). The source must be live and differ from the target.
  void rename(std::string_view source, std::string_view target, TimePoint now);
  // SETRANGE on a missing key: an empty record for the edit() that must follow at once (the edit
  // is the change, and tells the watchers).
  Blob& insert_for_edit(std::string_view key, TimePoint now);
  // GETDEL in one probe: calls on_value(const Blob& record) with the live record, then removes
  // it; counts a keyspace hit or miss. False (on_value not called) when there is no live key.
  template <class OnValue>
  bool erase_after(std::string_view key, TimePoint now, OnValue&& on_value) {
    const bool erased =
        engine_->upsert_prehashed(key, hashed(key), now, chronocache::Access::kRead,
                                  [&](Engine::Upsert& entry) CC_ALWAYS_INLINE_LAMBDA {
                                    if (!entry.found()) return false;
                                    on_value(std::as_const(entry.key()));
                                    return entry.erase();
                                  });
    if (erased) changed(key);
    return erased;
  }
  // Sets a live key's deadline (kNoExpiry: persist); a deadline at or before now deletes it.
  bool set_deadline(std::string_view key, TimePoint deadline, TimePoint now);
  // Empties the database; returns how many keys it held (expired ones not yet reclaimed too, as
  // Redis counts a flush's changes).
  std::size_t clear(TimePoint now);
  // Changes a record found by find_mutable in place: edit(Blob&) returns the Blob::Resize of
  // the mutator it called, reported to the engine (maxmemory counts it); tells watchers of `key`.
  template <class Edit>
  void edit(std::string_view key, Blob& record, Edit&& edit) {
    const Blob::Resize resize = edit(record);
    if (resize.old_bytes != resize.new_bytes)
      engine_->note_heap_resize(resize.old_bytes, resize.new_bytes);
    changed(key);
  }
  // A record changed through find_mutable outside edit() (COPY's encoding mark): tells the
  // watchers of `key` without counting a change of its own.
  void touch(std::string_view key) { watches_->touch(index_, key); }

  // ---- Memory and eviction (store/memory_budget.h drives these) ------------------------------
  // Bytes this database holds: table, policy structures and record blocks. O(1).
  std::size_t memory_used() const { return engine_->memory_used(); }
  // Makes the engine order its entries by `policy` (O(n) when it changes: every entry joins).
  void select_policy(EnginePolicy policy);
  EnginePolicy policy() const { return policy_; }
  // Counts the writes that gave a key a deadline (put with one, set_deadline): while it stands
  // still, a database found without volatile keys still has none (volatile-* eviction).
  std::uint64_t deadline_writes() const { return deadline_writes_; }
  // Removes the engine policy's victim, calling fn(const Blob& record) before it goes; false
  // when the policy names none. Tells no watcher (fn may).
  template <class Fn>
  bool evict_policy_victim(TimePoint now, Fn&& fn) {
    return engine_->evict_one(now, [&](const Blob& record, NoValue) { fn(record); });
  }
  // Stores a copy of a record again, without a deadline and without telling watchers: its value
  // did not change (volatile-lru puts back a persistent victim the policy named).
  void reinsert_persistent(const Blob& record, TimePoint now) {
    const std::string_view key = record.key();
    engine_->put_prehashed(make_record(key, record.view()), NoValue{}, kNoExpiry, hashed(key), now);
  }

  // ---- Walks ------------------------------------------------------------------------------
  template <class Fn>  // fn(std::string_view key, const Blob& value, TimePoint deadline)
  void for_each(TimePoint now, Fn&& fn) const {
    engine_->for_each_live(now, [&](const Blob& r, NoValue, TimePoint d) { fn(r.key(), r, d); });
  }
  template <class Fn>  // fn(std::string_view key, const Blob& value)
  std::uint64_t scan(std::uint64_t cursor, std::size_t slots, TimePoint now, Fn&& fn) const {
    return engine_->scan(cursor, slots, now, [&](const Blob& r, NoValue) { fn(r.key(), r); });
  }
  // The key's cluster hash slot (cluster mode: the table's hash carries it), from the batch's
  // hint when there is one, else computed.
  std::uint32_t hash_slot_of(std::string_view key) const {
    if (!hints_->empty())
      if (const std::uint64_t* hint = hints_->find(key))
        return static_cast<std::uint32_t>(*hint >> (64 - BlobHash::kSlotBits));
    return key_hash_slot(key);
  }
  // Whether a new `key` fits: false only in cluster mode, once so many keys share the key's hash
  // slot (one hash tag, most likely) that the table cannot grow their part (blob.h); a write that
  // would add it must be refused. One load and a branch until then.
  bool has_room_for(std::string_view key) const {
    return !slot_crowded() || engine_->has_room_for_prehashed(hashed(key));
  }
  // Some hash slot's keys have outgrown a regular share of the table (sticky): only then is
  // has_room_for worth asking.
  bool slot_crowded() const { return engine_->hash_prefix_skewed(); }
  // Cluster mode only (a slot-prefixed hash): calls fn(std::string_view key, const Blob& value)
  // for each live key of hash slot `slot` until fn returns false. The work is that slot's keys
  // (plus, while the database is small, the rest of one table segment), not the keyspace.
  template <class Fn>
  void for_each_in_slot(std::uint32_t slot, TimePoint now, Fn&& fn) const {
    CC_ASSERT(engine_->hash_function().slot_prefixed && slot < kClusterSlots);
    engine_->for_each_live_with_hash_prefix(slot, BlobHash::kSlotBits, now,
                                            [&](const Blob& r, NoValue) { return fn(r.key(), r); });
  }
  std::optional<std::string_view> random_key(std::uint64_t random, TimePoint now) const {
    const Blob* record = engine_->sample_key(random, now);
    if (record == nullptr) return std::nullopt;
    return record->key();
  }
  // What a compaction slice did with the records on evacuating pages.
  struct CompactionTally {
    std::size_t moved = 0;   // to a page the arena keeps
    std::size_t spared = 0;  // left where they are: due soon, or no memory to move into
  };
  // Moves the records of about `slots` slots from `cursor` that the arena is evacuating
  // (Blob::compact), except those due before `spare_due_before` (expiry frees them soon enough);
  // adds to `tally` and returns the next cursor, 0 at the end.
  std::uint64_t compact_records(std::uint64_t cursor, std::size_t slots, TimePoint spare_due_before,
                                CompactionTally& tally) {
    return engine_->rewrite_keys(cursor, slots, [&](Blob& record, TimePoint deadline) {
      if (!record.on_evacuating_page(*arena_)) return;
      if (deadline >= spare_due_before && record.compact(*arena_)) {
        ++tally.moved;
      } else {
        ++tally.spared;
      }
    });
  }
  // Frees expired entries among at most `slots` slots; returns how many.
  std::size_t reclaim_expired(std::size_t slots, TimePoint now) {
    return engine_->reclaim_expired_at(slots, now);
  }
  // Refits table segments that deletes left loose while keep_going() says so (asked before each
  // one, in one pass over the segments); returns how many.
  template <class KeepGoing>
  std::size_t shrink_loose_segments_while(KeepGoing&& keep_going) {
    return engine_->shrink_loose_segments_while(keep_going);
  }

  const Engine& engine() const { return *engine_; }

  // ---- Snapshots (server/persist/snapshots.h) ----------------------------------------------
  // The engine itself, for a point-in-time capture: a capture belongs to the engine and must
  // follow it when SWAPDB moves it to another Db. Writes through it bypass watchers.
  Engine& capture_engine() { return *engine_; }
  // Makes room for `entries` before a load.
  void reserve(std::size_t entries) { engine_->reserve(entries); }
  // A record as this database stores it (packed in the keyspace's arena), for load_record.
  Blob make_record(std::string_view key, std::string_view value) {
    return Blob::record(key, value, arena_);
  }
  // Stores one loaded record (its hash from prefetch_table) with the engine's put, straight: no
  // rehash, no watcher told (nobody is connected yet).
  void load_record(Blob&& record, std::uint64_t hash, TimePoint deadline, TimePoint now) {
    if (deadline != kNoExpiry) ++deadline_writes_;
    engine_->put_prehashed(std::move(record), NoValue{}, deadline, chronocache::Hashed{hash}, now);
  }
  // The engine's counters: keyspace hits and misses are the reads commands made (GET, SET ...
  // GET, EXISTS, TTL), never the lookup of a write (INCR, APPEND, RENAME), as Redis counts them.
  chronocache::CacheStats stats() const { return engine_->stats(); }
  std::size_t table_bytes() const { return engine_->memory_bytes(); }
  std::size_t index() const { return index_; }
  void swap_contents(Db& other) noexcept;

 private:
  // The one place a write reports itself: watchers are told and the change is counted.
  void changed(std::string_view key) {
    ++*changes_;
    touch(key);
  }
  chronocache::Hashed hashed(std::string_view key) const {
    if (!hints_->empty())
      if (const std::uint64_t* hint = hints_->find(key)) return chronocache::Hashed{*hint};
    return chronocache::Hashed{engine_->hash_of(key)};
  }
  // The write of put and set, inside the engine's upsert: rewrites the live record in place or
  // builds a new one; a deadline at or before now removes the key and builds nothing.
  CC_ALWAYS_INLINE void write(Engine::Upsert& entry, std::string_view key, std::string_view value,
                              TimePoint deadline, TimePoint now) {
    if (deadline != kNoExpiry) ++deadline_writes_;
    if (deadline <= now) [[unlikely]] {
      if (entry.found()) entry.erase();
    } else if (entry.found()) {
      const Blob::Resize resize = entry.mutable_key().assign(value);
      entry.update(deadline, resize.old_bytes, resize.new_bytes);
    } else {
      entry.insert(Blob::record(key, value, arena_), NoValue{}, deadline);
    }
  }

  std::size_t index_;
  WatchRegistry* watches_;
  std::uint64_t* changes_;
  chronocache::RecordArena* arena_;
  KeyHashHints* hints_;
  std::unique_ptr<Engine> engine_;  // a pointer so SWAPDB swaps contents in O(1)
  EnginePolicy policy_ = EnginePolicy::kNone;
  std::uint64_t deadline_writes_ = 0;
};

class Keyspace {
 public:
  // `batch_now`: where the event loop keeps the time of its current batch (LoopClock).
  // `key_hash`: every database's table hash (BlobHash: seeded, and slot-prefixed in cluster
  // mode so each database indexes its keys by hash slot).
  Keyspace(std::size_t databases, BlobHash key_hash,
           const chronocache::TimePoint* batch_now = nullptr);
  std::size_t count() const { return dbs_.size(); }
  Db& db(std::size_t index) { return *dbs_[index]; }
  const Db& db(std::size_t index) const { return *dbs_[index]; }
  WatchRegistry& watches() { return watches_; }
  void swap(std::size_t a, std::size_t b, TimePoint now);  // SWAPDB: one change
  std::size_t clear_all(TimePoint now);                    // every database; the keys they held
  // While `paused` (CLIENT PAUSE), a read that meets an expired key reports it missing and leaves
  // it stored, so DBSIZE and expired_keys stay put, as in Redis 7; writes still remove what they
  // meet. Cheap to call per command: only a change reaches the databases.
  void pause_expiry(bool paused) {
    if (paused == expiry_paused_) [[likely]]
      return;
    expiry_paused_ = paused;
    for (const auto& db : dbs_) db->set_reads_remove_expired(!paused);
  }

  // Hashes a batch's prefetch computed, for its commands (key_hash_hints.h): filled and cleared
  // by the session running the batch.
  KeyHashHints& hash_hints() { return hints_; }

  // The records' arena: what it holds (INFO, MEMORY STATS), and its compaction plans.
  chronocache::RecordArena& arena() { return *arena_; }
  const chronocache::RecordArena& arena() const { return *arena_; }

  // Writes since the last successful save (Redis's rdb_changes_since_last_save). A save that
  // began when the count was `at_start` forgets those; writes made during it stay counted.
  std::uint64_t changes() const { return changes_; }
  void forget_changes(std::uint64_t at_start) { changes_ -= std::min(changes_, at_start); }

 private:
  WatchRegistry watches_;
  std::uint64_t changes_ = 0;
  KeyHashHints hints_;  // before the databases, which point at it
  bool expiry_paused_ = false;
  // Before the databases, so it outlives the records they hold; a pointer, so it never moves.
  std::unique_ptr<chronocache::RecordArena> arena_ = std::make_unique<chronocache::RecordArena>();
  std::vector<std::unique_ptr<Db>> dbs_;
};

}  // namespace chronocached
