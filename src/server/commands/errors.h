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
// A monitor is a replica to Redis (CLIENT_SLAVE), and a replica may not touch the keyspace.
inline constexpr std::string_view kReplicaKeyspace = "ERR Replica can't interact with the keyspace";
inline constexpr std::string_view kReadOnlyReplica =
    "READONLY You can't write against a read only replica.";
// --upstream: a miss found the fetch queue full (FetchQueue's capacity).
inline constexpr std::string_view kUpstreamBusy = "TRYAGAIN upstream busy";
inline constexpr std::string_view kExecAbort =
    "EXECABORT Transaction discarded because of previous errors.";
inline constexpr std::string_view kMaxClients = "ERR max number of clients reached";
// Redis 7.0's protected-mode refusal, verbatim (typo included): clients and people search for
// it, and every remedy it lists works here too (CONFIG SET protected-mode, --protected-mode no,
// a password).
inline constexpr std::string_view kProtectedMode =
    "DENIED Redis is running in protected mode because protected mode is enabled and no password "
    "is set for the default user. In this mode connections are only accepted from the loopback "
    "interface. If you want to connect from external computers to Redis you may adopt one of the "
    "following solutions: 1) Just disable protected mode sending the command 'CONFIG SET "
    "protected-mode no' from the loopback interface by connecting to Redis from the same host the "
    "server is running, however MAKE SURE Redis is not publicly accessible from internet if you do "
    "so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable "
    "the protected mode by editing the Redis configuration file, and setting the protected mode "
    "option to 'no', and then restarting the server. 3) If you started the server manually just "
    "for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication "
    "password for the default user. NOTE: You only need to do one of the above things in order "
    "for the server to start accepting connections from the outside.";
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

// Strings and LCS
inline constexpr std::string_view kIncrNanOrInfinity =
    "ERR increment would produce NaN or Infinity";
inline constexpr std::string_view kDecrementOverflow = "ERR decrement would overflow";
inline constexpr std::string_view kLcsWrongType =
    "ERR The specified keys must contain string values";
inline constexpr std::string_view kLcsIdxAndLen =
    "ERR If you want both the length and indexes, please just use IDX.";
inline constexpr std::string_view kLcsTooLong = "ERR String too long for LCS";
inline constexpr std::string_view kLcsNoMemory =
    "ERR Insufficient memory, failed allocating transient memory for LCS";
inline constexpr std::string_view kLcsOverProtoMaxBulkLen =
    "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len";

// TTL
inline constexpr std::string_view kExpireNxXxGtLt =
    "ERR NX and XX, GT or LT options at the same time are not compatible";
inline constexpr std::string_view kExpireGtAndLt =
    "ERR GT and LT options at the same time are not compatible";

// Keyspace
inline constexpr std::string_view kInvalidCursor = "ERR invalid cursor";
inline constexpr std::string_view kSameObject = "ERR source and destination objects are the same";
inline constexpr std::string_view kNotInt32 =
    "ERR value is out of range, value must between -2147483648 and 2147483647";
inline constexpr std::string_view kInvalidFirstDb = "ERR invalid first DB index";
inline constexpr std::string_view kInvalidSecondDb = "ERR invalid second DB index";

// DUMP, RESTORE (kDumpPayload is Redis's one text for a short payload, another version and a
// checksum mismatch alike)
inline constexpr std::string_view kBusyKey = "BUSYKEY Target key name already exists.";
inline constexpr std::string_view kInvalidTtl = "ERR Invalid TTL value, must be >= 0";
inline constexpr std::string_view kDumpPayload = "ERR DUMP payload version or checksum are wrong";
inline constexpr std::string_view kBadDataFormat = "ERR Bad data format";
inline constexpr std::string_view kInvalidIdletime = "ERR Invalid IDLETIME value, must be >= 0";
inline constexpr std::string_view kInvalidFreq = "ERR Invalid FREQ value, must be >= 0 and <= 255";

// OBJECT
inline constexpr std::string_view kNoLfuPolicy =
    "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
    "that when switching between policies at runtime LRU and LFU data will take some time to "
    "adjust.";
inline constexpr std::string_view kLfuPolicyNoIdle =
    "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
    "switching between policies at runtime LRU and LFU data will take some time to adjust.";

// Connection: HELLO, SELECT, CLIENT
inline constexpr std::string_view kBadProtocolVersion =
    "ERR Protocol version is not an integer or out of range";
inline constexpr std::string_view kNoProto = "NOPROTO unsupported protocol version";
inline constexpr std::string_view kHelloNoAuth =
    "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO "
    "AUTH <user> <pass> option can be used to authenticate the client and select the RESP "
    "protocol version at the same time";
inline constexpr std::string_view kInvalidClientId = "ERR Invalid client ID";
inline constexpr std::string_view kClientIdNotPositive = "ERR client-id should be greater than 0";
inline constexpr std::string_view kNoSuchClient = "ERR No such client";
inline constexpr std::string_view kBadClientName =
    "ERR Client names cannot contain spaces, newlines or special characters.";
inline constexpr std::string_view kPauseMode = "ERR CLIENT PAUSE mode must be WRITE or ALL";
inline constexpr std::string_view kTimeoutNotInteger =
    "ERR timeout is not an integer or out of range";
inline constexpr std::string_view kTimeoutNegative = "ERR timeout is negative";
inline constexpr std::string_view kTimeoutOutOfRange = "ERR timeout is out of range";

// Server: SAVE, BGSAVE, SHUTDOWN, MONITOR, CONFIG, DEBUG (kSaveFailed is Redis's shared.err: the
// reason goes to the log)
inline constexpr std::string_view kNotInTransaction =
    "ERR Command not allowed inside a transaction";
inline constexpr std::string_view kSaveFailed = "ERR";
inline constexpr std::string_view kBgsaveRunning = "ERR Background save already in progress";
inline constexpr std::string_view kShutdownFailed = "ERR Errors trying to SHUTDOWN. Check logs.";
inline constexpr std::string_view kNoShutdownInProgress = "ERR No shutdown in progress.";
inline constexpr std::string_view kMonitorDenyBlocking =
    "ERR MONITOR isn't allowed for DENY BLOCKING client";
inline constexpr std::string_view kNoConfigFile = "ERR The server is running without a config file";
inline constexpr std::string_view kDebugNotAllowed =
    "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you "
    "can run it from a local connection, otherwise you need to set this option in the "
    "configuration file, and then restart the server.";
inline constexpr std::string_view kDebugSaveFailed = "ERR Error trying to save the DB";
inline constexpr std::string_view kDebugProtocolType =
    "ERR Wrong protocol type name. Please use one of the following: "
    "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false";
inline constexpr std::string_view kResp2Unsupported = "ERR RESP2 is not supported by this command";
inline constexpr std::string_view kDebugLoadFailed =
    "ERR Error trying to load the RDB dump, check server logs.";

// COMMAND, SLOWLOG, FUNCTION, SCRIPT
inline constexpr std::string_view kInvalidCommand = "ERR Invalid command specified";
inline constexpr std::string_view kCommandHasNoKeys = "ERR The command has no key arguments";
inline constexpr std::string_view kCommandKeysArity =
    "ERR Invalid number of arguments specified for command";
inline constexpr std::string_view kCommandKeysArguments =
    "ERR Invalid arguments specified for command";
inline constexpr std::string_view kSlowlogCount = "ERR count should be greater than or equal to -1";
// LATENCY GRAPH of an event with samples: Redis draws ASCII art, chronocached does not.
inline constexpr std::string_view kLatencyGraph =
    "ERR LATENCY GRAPH is not supported by chronocached: LATENCY HISTORY <event> gives the "
    "samples";
inline constexpr std::string_view kFunctionFlushMode =
    "ERR FUNCTION FLUSH only supports SYNC|ASYNC option";
inline constexpr std::string_view kLibraryNameMissing = "ERR library name argument was not given";
inline constexpr std::string_view kScriptFlushMode =
    "ERR SCRIPT FLUSH only support SYNC|ASYNC option";

// "ERR unknown command 'foo', with args beginning with: 'a' 'b' "
std::string unknown_command(std::string_view name, std::span<const std::string_view> args);
// "ERR wrong number of arguments for 'get' command"
std::string wrong_arity(std::string_view name);
// "ERR upstream 127.0.0.1:6379 unavailable: Connection refused" (--upstream: a fetch failed)
std::string upstream_unavailable(std::string_view address, std::string_view reason);
// "ERR invalid expire time in 'set' command"
std::string invalid_expire(std::string_view command);
// "ERR unknown subcommand 'foo'. Try CONFIG HELP."
std::string unknown_subcommand(std::string_view sub, std::string_view command);
// "ERR unknown subcommand or wrong number of arguments for 'get'. Try SLOWLOG HELP."
std::string subcommand_syntax(std::string_view sub, std::string_view command);
// "ERR Unsupported option foo", as Redis's addReplyErrorFormat prints the option: read as a C
// string (it ends at a NUL byte), trailing CR/LF trimmed, inner ones turned into spaces.
std::string unsupported_option(std::string_view option);
// "ERR Syntax error in HELLO option 'foo'"
std::string hello_option(std::string_view option);
// "ERR Unknown client type 'foo'", "ERR No such user 'foo'"
std::string unknown_client_type(std::string_view type);
std::string no_such_user(std::string_view user);
// "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"
std::string config_set_unknown(std::string_view name);
// "ERR CONFIG SET failed (possibly related to argument 'foo') - <problem>"
std::string config_set_failed(std::string_view name, std::string_view problem);
// "ERR Rewriting config file: <reason>"
std::string config_rewrite_failed(std::string_view reason);
// "ERR No samples available for event 'foo'" (LATENCY GRAPH)
std::string no_latency_samples(std::string_view event);
// "ERR Unknown argument foo" (FUNCTION LIST)
std::string unknown_argument(std::string_view argument);
// "EXECABORT Transaction discarded because of: <error without its ERR>"
std::string exec_abort_because(std::string_view error);

}  // namespace chronocached::errors
