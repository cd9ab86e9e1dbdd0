#include "server/store/keyspace.h"

#include <algorithm>
#include <utility>

#include "chronocache/base/assert.h"

namespace chronocached {

void WatchRegistry::watch(ClientId client, std::size_t db, std::string_view key) {
  for (const Watch& w : watched_)
    if (w.client == client && w.db == db && w.key == key) return;
  watched_.push_back(Watch{db, std::string(key), client});
  dirty_.try_emplace(client, false);
}

void WatchRegistry::unwatch_all(ClientId client) {
  std::erase_if(watched_, [client](const Watch& w) { return w.client == client; });
  dirty_.erase(client);
}

bool WatchRegistry::dirty(ClientId client) const {
  const auto it = dirty_.find(client);
  return it != dirty_.end() && it->second;
}

void WatchRegistry::touch_slow(std::size_t db, std::string_view key) {
  for (const Watch& w : watched_)
    if (w.db == db && w.key == key) dirty_[w.client] = true;
}

Db::Db(std::size_t index, BlobHash key_hash, WatchRegistry& watches, std::uint64_t& changes,
       chronocache::RecordArena& arena, KeyHashHints& hints, LoopClock clock)
    : index_(index),
      watches_(&watches),
      changes_(&changes),
      arena_(&arena),
      hints_(&hints),
      engine_(std::make_unique<Engine>(chronocache::CacheOptions{}, clock, key_hash)) {}

void Db::put(std::string_view key, std::string_view value, TimePoint deadline, TimePoint now) {
  engine_->upsert_prehashed(key, hashed(key), now, chronocache::Access::kPeek,
                            [&](Engine::Upsert& entry) CC_ALWAYS_INLINE_LAMBDA {
                              write(entry, key, value, deadline, now);
                            });
  changed(key);
}

bool Db::erase(std::string_view key, TimePoint now) {
  const bool erased = engine_->erase_prehashed(key, hashed(key), now);
  if (erased) changed(key);
  return erased;
}

bool Db::erase_uncounted(std::string_view key, TimePoint now) {
  const bool erased = engine_->erase_prehashed(key, hashed(key), now);
  if (erased) touch(key);
  return erased;
}

void Db::put_copy(std::string_view target, const Blob& record, TimePoint deadline, TimePoint now) {
  const bool grown = record.grown();
  put(target, record.view(), deadline, now);
  if (!grown) return;
  Blob* stored =
      engine_->find_key_prehashed(target, hashed(target), now, chronocache::Access::kPeek);
  if (stored != nullptr) stored->mark_grown();
}

void Db::rename(std::string_view source, std::string_view target, TimePoint now) {
  // The source's record stays in place (its bytes are read) until the target holds the copy.
  const Blob* record = peek(source, now);
  const std::optional<TimePoint> deadline = this->deadline(source, now);
  CC_CHECK(record != nullptr && deadline && source != target, "RENAME of a missing key");
  put_copy(target, *record, *deadline, now);  // the one change
  if (engine_->erase_prehashed(source, hashed(source), now)) touch(source);
}

Blob& Db::insert_for_edit(std::string_view key, TimePoint now) {
  const chronocache::Hashed h = hashed(key);
  engine_->put_prehashed(Blob::record(key, std::string_view(), arena_), NoValue{}, kNoExpiry, h,
                         now);
  return *engine_->find_key_prehashed(key, h, now, chronocache::Access::kPeek);
}

bool Db::set_deadline(std::string_view key, TimePoint deadline, TimePoint now) {
  if (deadline != kNoExpiry) ++deadline_writes_;
  const bool live = engine_->set_deadline_prehashed(key, hashed(key), deadline, now);
  if (live) changed(key);
  return live;
}

std::size_t Db::clear(TimePoint now) {
  watches_->touch_db(index_, [&](std::string_view key) { return exists(key, now); });
  const std::size_t removed = engine_->stored_size();
  engine_->clear();
  *changes_ += removed;
  return removed;
}

void Db::select_policy(EnginePolicy policy) {
  if (policy == policy_) return;
  policy_ = policy;
  engine_->policy().select_index(static_cast<std::size_t>(policy));
  engine_->reset_policy();
}

void Db::swap_contents(Db& other) noexcept {
  std::swap(engine_, other.engine_);
  std::swap(policy_, other.policy_);  // every database has the same one; kept with its engine
  // Both counters move on: a database found without volatile keys is looked at again.
  ++deadline_writes_;
  ++other.deadline_writes_;
}

Keyspace::Keyspace(std::size_t databases, BlobHash key_hash,
                   const chronocache::TimePoint* batch_now) {
  dbs_.reserve(databases);
  for (std::size_t i = 0; i < databases; ++i)
    dbs_.push_back(std::make_unique<Db>(i, key_hash, watches_, changes_, *arena_, hints_,
                                        LoopClock(batch_now)));
}

void Keyspace::swap(std::size_t a, std::size_t b, TimePoint now) {
  ++changes_;  // as Redis, a swap of a database with itself too
  if (a == b) return;
  // Watchers of a key that exists in either database before the swap are told (Redis's rule).
  const auto in_either = [&](std::string_view key) {
    return dbs_[a]->exists(key, now) || dbs_[b]->exists(key, now);
  };
  watches_.touch_db(a, in_either);
  watches_.touch_db(b, in_either);
  dbs_[a]->swap_contents(*dbs_[b]);
}

std::size_t Keyspace::clear_all(TimePoint now) {
  std::size_t removed = 0;
  for (auto& db : dbs_) removed += db->clear(now);
  return removed;
}

}  // namespace chronocached
