// Redis 7's error replies, verbatim: clients and tools match on these texts.
// Texts with a command name or argument are built by the functions below.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace chronocached::errors {

inline constexpr std::string_view kSyntax = "ERR syntax error";
inline constexpr std::string_view kNotInteger = "ERR value is not an integer or out of range";
inline constexpr std::string_view kNotFloat = "ERR value is not a valid float";
inline constexpr std::string_view kOverflow = "ERR increment or decrement would overflow";
inline constexpr std::string_view kWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr std::string_view kNoSuchKey = "ERR no such key";
inline constexpr std::string_view kNoAuth = "NOAUTH Authentication required.";
inline constexpr std::string_view kWrongPass =
    "WRONGPASS invalid username-password pair or user is disabled.";
inline constexpr std::string_view kAuthNoPassword =
    "ERR AUTH <password> called without any password configured for the default user. Are you "
    "sure your configuration is correct?";
inline constexpr std::string_view kDbIndexOutOfRange = "ERR DB index is out of range";
inline constexpr std::string_view kMultiNested = "ERR MULTI calls can not be nested";
inline constexpr std::string_view kExecWithoutMulti = "ERR EXEC without MULTI";
inline constexpr std::string_view kDiscardWithoutMulti = "ERR DISCARD without MULTI";
inline constexpr std::string_view kWatchInMulti = "ERR WATCH inside MULTI is not allowed";
inline constexpr std::string_view kExecAbort =
    "EXECABORT Transaction discarded because of previous errors.";
inline constexpr std::string_view kMaxClients = "ERR max number of clients reached";
// Redis's shared.oomerr, verbatim: over maxmemory with nothing left to evict.
inline constexpr std::string_view kOom = "OOM command not allowed when used memory > 'maxmemory'.";
// Redis's shared.bgsaveerr, verbatim (clients match it): stop-writes-on-bgsave-error refusing.
inline constexpr std::string_view kMisconf =
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to "
    "disk. Commands that may modify the data set are disabled, because this instance is "
    "configured to report errors during writes if RDB snapshotting fails "
    "(stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB "
    "error.";
inline constexpr std::string_view kBitOffset = "ERR offset is out of range";
inline constexpr std::string_view kStringTooLong =
    "ERR string exceeds maximum allowed size (proto-max-bulk-len)";

// "ERR unknown command 'foo', with args beginning with: 'a' 'b' "
std::string unknown_command(std::string_view name, std::span<const std::string_view> args);
// "ERR wrong number of arguments for 'get' command"
std::string wrong_arity(std::string_view name);
// "ERR invalid expire time in 'set' command"
std::string invalid_expire(std::string_view command);
// "ERR unknown subcommand 'foo'. Try CONFIG HELP."
std::string unknown_subcommand(std::string_view sub, std::string_view command);

}  // namespace chronocached::errors
