// Readable names for typed tests over eviction policies (gtest's third TYPED_TEST_SUITE
// argument): "Lru" instead of "3".
#pragma once

#include <string>
#include <type_traits>

#include "chronocache/policy/lfu.h"
#include "chronocache/policy/lru.h"
#include "chronocache/policy/s3fifo.h"
#include "chronocache/policy/sieve.h"
#include "chronocache/policy/ttl_only.h"
#include "chronocache/policy/w_tinylfu.h"

namespace chronocache::test_support {

struct PolicyNames {
  template <class T>
  static std::string GetName(int) {
    if (std::is_same_v<T, TtlOnly>) return "TtlOnly";
    if (std::is_same_v<T, Lru>) return "Lru";
    if (std::is_same_v<T, Lfu>) return "Lfu";
    if (std::is_same_v<T, Sieve>) return "Sieve";
    if (std::is_same_v<T, S3Fifo>) return "S3Fifo";
    if (std::is_same_v<T, WTinyLfu>) return "WTinyLfu";
    return "Switchable";  // the one other policy the suites list
  }
};

}  // namespace chronocache::test_support
