// The values of maxmemory-policy: Redis's eight and our three, each name once, in the order
// Redis's CONFIG SET error lists them (ours after Redis's). The config validates against this
// table and the store's MemoryBudget acts on the enum (store/memory_budget.h), so a new policy
// is one line here and one case there.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "server/base/ascii.h"

namespace chronocached {

enum class MaxmemoryPolicy : std::uint8_t {
  kVolatileLru,
  kVolatileLfu,
  kVolatileRandom,
  kVolatileTtl,
  kAllKeysLru,
  kAllKeysLfu,
  kAllKeysRandom,
  kNoEviction,
  kAllKeysSieve,
  kAllKeysS3Fifo,
  kAllKeysWTinyLfu,
};

struct MaxmemoryPolicyName {
  std::string_view name;
  MaxmemoryPolicy policy;
};

inline constexpr std::array<MaxmemoryPolicyName, 11> kMaxmemoryPolicies = {{
    {"volatile-lru", MaxmemoryPolicy::kVolatileLru},
    {"volatile-lfu", MaxmemoryPolicy::kVolatileLfu},
    {"volatile-random", MaxmemoryPolicy::kVolatileRandom},
    {"volatile-ttl", MaxmemoryPolicy::kVolatileTtl},
    {"allkeys-lru", MaxmemoryPolicy::kAllKeysLru},
    {"allkeys-lfu", MaxmemoryPolicy::kAllKeysLfu},
    {"allkeys-random", MaxmemoryPolicy::kAllKeysRandom},
    {"noeviction", MaxmemoryPolicy::kNoEviction},
    {"allkeys-sieve", MaxmemoryPolicy::kAllKeysSieve},
    {"allkeys-s3fifo", MaxmemoryPolicy::kAllKeysS3Fifo},
    {"allkeys-wtinylfu", MaxmemoryPolicy::kAllKeysWTinyLfu},
}};
static_assert(
    [] {
      for (std::size_t i = 0; i < kMaxmemoryPolicies.size(); ++i)
        if (static_cast<std::size_t>(kMaxmemoryPolicies[i].policy) != i) return false;
      return true;
    }(),
    "kMaxmemoryPolicies is indexed by MaxmemoryPolicy");

// The policy a name (any case) stands for, or nullptr.
constexpr const MaxmemoryPolicyName* find_maxmemory_policy(std::string_view name) {
  for (const MaxmemoryPolicyName& entry : kMaxmemoryPolicies)
    if (iequals_lower(name, entry.name)) return &entry;
  return nullptr;
}

constexpr std::string_view maxmemory_policy_name(MaxmemoryPolicy policy) {
  return kMaxmemoryPolicies[static_cast<std::size_t>(policy)].name;
}

}  // namespace chronocached
