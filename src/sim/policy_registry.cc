// The list of replayable policies: the engine's classes, by the names the command line uses.
// Adding a policy to the simulator is one include and one line here.
#include "sim/policy_registry.h"

#include <array>

#include "chronocache/policy/default_policy.h"
#include "chronocache/policy/lfu.h"
#include "chronocache/policy/lru.h"
#include "chronocache/policy/s3fifo.h"
#include "chronocache/policy/sieve.h"
#include "chronocache/policy/w_tinylfu.h"

namespace chronocache::sim {
namespace {

constexpr auto kPolicies = std::to_array<PolicyEntry>({
    {"lru", "chronocache::Lru", &replay<Lru>},
    {"sieve", "chronocache::Sieve", &replay<Sieve>},
    {"s3fifo", "chronocache::S3Fifo", &replay<S3Fifo>},
    {"wtinylfu", "chronocache::WTinyLfu", &replay<WTinyLfu>},
    {"default", "chronocache::DefaultPolicy", &replay<DefaultPolicy>},
    {"lfu", "chronocache::Lfu", &replay<Lfu>},
});

}  // namespace

std::span<const PolicyEntry> all_policies() { return kPolicies; }

const PolicyEntry* find_policy(std::string_view name) {
  for (const PolicyEntry& entry : kPolicies)
    if (entry.name == name) return &entry;
  return nullptr;
}

}  // namespace chronocache::sim
