// The versions chronocached reports (INFO server, HELLO, --version).
#pragma once

namespace chronocached {

inline constexpr const char* kVersion = "0.1.0";
// The Redis version whose commands and replies we follow; HELLO and INFO report it as
// redis_version so clients enable the same features they would against that Redis.
inline constexpr const char* kRedisVersion = "7.0.15";

}  // namespace chronocached
