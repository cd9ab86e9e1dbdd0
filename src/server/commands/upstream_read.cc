#include "server/commands/upstream_read.h"

#include <string>

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
}

}  // namespace chronocached
