#include "server/store/record_compactor.h"

namespace chronocached {

bool RecordCompactor::worth_a_pass() const {
  const chronocache::RecordArena& arena = keyspace_->arena();
  const std::size_t waste = arena.waste_bytes();
  return waste > settings_.ignore_bytes &&
         waste * 100 > arena.packed_record_bytes() * settings_.threshold_percent;
}

void RecordCompactor::step(TimePoint now, const std::function<bool()>& keep_going) {
  if (!running_) {
    if (!settings_.enabled || now < next_pass_at_ || !worth_a_pass()) return;
    if (keyspace_->arena().plan_compaction() == 0) return;  // nothing the plan could empty
    running_ = true;
    pass_started_ = now;
    ++passes_;
    db_ = 0;
    cursor_ = 0;
  }
  Db::CompactionTally tally;
  while (keep_going()) {
    cursor_ =
        keyspace_->db(db_).compact_records(cursor_, kSlotsPerCheck, now + kSpareHorizon, tally);
    if (cursor_ != 0) continue;
    if (++db_ < keyspace_->count()) continue;
    // Every database walked: the marked pages have emptied, or will as their spared records
    // expire.
    running_ = false;
    ended_passes_time_ += now - pass_started_;
    next_pass_at_ = now + kPassCooldown;
    break;
  }
  moved_ += tally.moved;
  spared_ += tally.spared;
}

}  // namespace chronocached
