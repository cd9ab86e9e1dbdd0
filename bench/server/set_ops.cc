// set_ops: the server's SET path from parsed arguments to the stored record, for counting
// instructions and table probes with callgrind (bench/engine/run_instruction_counts.py).
//
// run_ops() is the only function callgrind collects in (--toggle-collect), as in engine_ops. The
// scenarios overwrite one existing key, as a SET of a hot key does; what a handler adds around
// Db (option parsing, the reply) is not counted, so the rows compare the engine work one SET
// costs. Every probe of the table compares the stored key with memcmp (an out-of-line libc call
// for keys of run-time length): callgrind's call count of memcmp per operation is the number of
// probes that met the key.
//
//   set_ops <scenario> <ops>    scenarios: setPlain (SET k v), setGetKeepTtl (SET k v XX GET
//                               KEEPTTL)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "server/store/keyspace.h"

namespace chronocached::bench {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kKey = "key:000000000042";
constexpr std::string_view kValue = "value:0000000042";

enum class Scenario { kSetPlain, kSetGetKeepTtl };

// Keeps the old value a GET hands over alive, as the reply writer's copy would.
void consume(std::string_view bytes) { asm volatile("" : : "r"(bytes.data()), "r"(bytes.size())); }

[[gnu::noinline]] void run_ops(Db& db, Scenario scenario, long ops, TimePoint now) {
  for (long i = 0; i < ops; ++i) {
    std::string_view key = kKey;
    asm volatile("" : "+r"(key));  // a key the optimiser cannot see through, as a parsed one
    switch (scenario) {
      case Scenario::kSetPlain:
        db.put(key, kValue, kNoExpiry, now);
        break;
      case Scenario::kSetGetKeepTtl:  // strings.cc's set_generic for XX GET KEEPTTL
        db.set(key, kValue,
               SetOptions{.condition = SetOptions::Condition::kIfPresent,
                          .keep_ttl = true,
                          .get = true,
                          .deadline = kNoExpiry},
               now, [](const Blob* old) { consume(old != nullptr ? old->view() : ""); });
        break;
    }
  }
}

}  // namespace
}  // namespace chronocached::bench

int main(int argc, char** argv) {
  using namespace chronocached;
  using namespace chronocached::bench;
  if (argc != 3) {
    std::fprintf(stderr, "usage: set_ops <scenario> <ops>\n");
    return 2;
  }
  const std::string_view name = argv[1];
  Scenario scenario;
  if (name == "setPlain") {
    scenario = Scenario::kSetPlain;
  } else if (name == "setGetKeepTtl") {
    scenario = Scenario::kSetGetKeepTtl;
  } else {
    std::fprintf(stderr, "set_ops: unknown scenario %s\n", argv[1]);
    return 2;
  }
  const TimePoint now = TimePoint{} + 1000s;
  Keyspace keyspace(1, BlobHash(/*hash_seed=*/42), &now);
  Db& db = keyspace.db(0);
  db.put(kKey, kValue, now + 1h, now);
  run_ops(db, scenario, std::atol(argv[2]), now);
  return 0;
}
