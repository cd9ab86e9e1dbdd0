// TraceFormat: the trace encodings chronocache-sim reads, and how a file's format is recognised.
//
// The parsing rule of each format is the one the sample traces' README states (the
// traces make bench-hitratio replays; no test reads them) (the rules the
// reference hit ratios were computed with), so our numbers are comparable with libCacheSim's and
// Caffeine's:
//
//   kText           one decimal key per line; lines "*" (LIRS checkpoints) and empty lines are
//                   skipped; CRLF accepted. A non-numeric key is hashed to 64 bits.
//   kCsv            timestamp,key[,size[,ttl]] per line; or, with a header line naming the columns,
//                   any order (libCacheSim's cloudPhysicsIO.csv: version,time,op,size,lbn).
//                   Timestamps and TTLs are in seconds (as in libCacheSim's Twitter traces); a
//                   TTL of 0 or an empty one means "no expiry". Sizes are read and ignored.
//   kOracleGeneral  libCacheSim binary: packed little-endian 24-byte records
//                   {u32 time; u64 obj_id; u32 obj_size; i64 next_access_vtime}.
//   kArcLis         ARC's .lis text: "start n ignore reqno" expands to keys start .. start+n-1.
//   kInt32BigEndian cache2k: consecutive big-endian signed 32-bit keys.
//
// The format is taken from --format, else from the extension under any compression suffix
// (.csv, .bin/.oracleGeneral, .lis); ".trace" is shared by the LIRS text and the cache2k binary
// traces, so for it (and for unknown extensions) the first decoded bytes decide.
#pragma once

#include <optional>
#include <string_view>

namespace chronocache::sim {

enum class TraceFormat { kText, kCsv, kOracleGeneral, kArcLis, kInt32BigEndian };

// "text" (or "lirs"), "csv", "oracleGeneral" (or "oracle"), "lis" (or "arc"), "int32be" (or
// "cache2k"); nullopt for anything else.
std::optional<TraceFormat> parse_trace_format(std::string_view name);
std::string_view trace_format_name(TraceFormat format);

// The format named by the file's extension, ignoring a trailing .gz/.xz/.zst; nullopt when the
// extension does not decide (".trace", none, unknown).
std::optional<TraceFormat> format_from_path(std::string_view path);

// For an undecided extension: text unless the first bytes hold control characters other than
// line ends and tabs; then the cache2k binary (its keys are big-endian ints, rich in NUL bytes).
TraceFormat sniff_format(std::string_view first_bytes);

}  // namespace chronocache::sim
