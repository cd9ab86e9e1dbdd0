#include "server/commands/upstream_read.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "chronocache/predict/read_ahead.h"

#include "server/commands/errors.h"

namespace chronocached {

void read_through_miss(CommandContext& ctx, std::string_view key) {
  UpstreamWait& wait = ctx.client.upstream;
  if (ctx.client.db != 0 || ctx.client.in_exec) return ctx.reply.null();
  if (wait.state != UpstreamWait::State::kNone && wait.key == key) {
    switch (wait.state) {
      case UpstreamWait::State::kWaiting:  // retried before its fetch ended (a server tick)
        ctx.wait_upstream = true;
        return;
      case UpstreamWait::State::kValue:  // fetched, then expired or evicted before the retry
        ctx.reply.bulk(wait.text);
        break;
      case UpstreamWait::State::kNil:
        ctx.reply.null();
        break;
      case UpstreamWait::State::kError:
        ctx.reply.error(wait.text);
        break;
      case UpstreamWait::State::kNone:
        break;
    }
    wait = UpstreamWait{};
    return;
  }
  switch (ctx.server.upstream_fetches.request(key, ctx.client.id, ctx.unix_ms)) {
    case FetchQueue::Admission::kFull:
      return ctx.reply.error(errors::kUpstreamBusy);
    case FetchQueue::Admission::kQueued:
      ctx.server.upstream_ready.notify_one();
      break;
    case FetchQueue::Admission::kJoined:
      break;
  }
  wait = UpstreamWait{UpstreamWait::State::kWaiting, std::string(key), {}};
  ctx.wait_upstream = true;
  if (ctx.server.upstream_model) note_upstream_read(ctx, key, false);  // after its own fetch
}

void note_upstream_read(CommandContext& ctx, std::string_view key, bool hit) {
  ServerState& server = ctx.server;
  chronocache::SuccessorModel<std::string>& model = *server.upstream_model;
  std::string read(key);  // the model keeps its own copies of string keys
  if (hit && server.upstream_prefetched.erase(read) != 0) ++server.upstream_prefetches_used;
  const std::uint64_t read_hash = model.hash(read);
  chronocache::AccessStream<std::string>& stream = ctx.client.upstream_stream;
  stream.advance_prehashed(model, read, read_hash);
  std::array<chronocache::Prediction<std::string>, 2> scratch;
  bool queued = false;
  chronocache::read_ahead(
      model, stream, read, read_hash,
      {.max_per_get = scratch.size(),
       .depth = static_cast<std::size_t>(server.config.upstream_prefetch_depth)},
      std::span<chronocache::Prediction<std::string>>(scratch),
      [&model](const std::string& next) { return model.hash(next); },
      [&](const std::string& next, std::uint64_t) {
        if (server.keyspace.db(0).exists(next, ctx.now)) return;
        queued = server.upstream_fetches.prefetch(next, ctx.unix_ms) || queued;
      });
  if (queued) server.upstream_ready.notify_all();
}

}  // namespace chronocached
