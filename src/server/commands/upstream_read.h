// Read-through on a GET miss (--upstream; docs/design/server.md, "Read-through near-cache").
//
//   GET k, miss ─► read_through_miss: k queued for the fetcher (or joins k's pending fetch),
//                  ctx.wait_upstream ─► execute() returns false: the GET stays in the buffer
//   fetcher    ─► GET k + PTTL k upstream (no lock), then under the lock: stores k with
//                  min(PTTL, upstream-max-ttl-ms), writes each waiter's UpstreamWait, wakes their
//                  loops (mailbox) ─► the GET runs again and hits, or answers the outcome
//
// Only database 0 reads through (the upstream's keys are read from its database 0), and not
// inside EXEC (a transaction cannot wait): there a miss answers nil as it would without upstream.
#pragma once

#include <string_view>

#include "server/commands/command.h"

namespace chronocached {

// `key` is not stored here: answers the fetch's outcome this client waited for, or asks for a
// fetch and sets ctx.wait_upstream, or answers -TRYAGAIN when the fetch queue is full.
void read_through_miss(CommandContext& ctx, std::string_view key);

// upstream-prefetch: this client's GET of `key` (a hit, or a miss just asked for) teaches the
// model which key follows its previous one; a prefetched key read for the first time counts as
// used; and the keys predicted to follow `key` that are not stored here are fetched ahead, with
// no client waiting (FetchQueue::prefetch, never more than half the queue).
void note_upstream_read(CommandContext& ctx, std::string_view key, bool hit);

}  // namespace chronocached
