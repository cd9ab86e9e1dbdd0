// Trace writer (test-only): the inverse of read_trace, so that the simulator's tests make the
// traces they read instead of depending on sample files outside the repository.
//
// Each encode_* function turns a key sequence into the bytes of one format of trace_format.h,
// with the quirks the real sample traces have (LIRS "*" checkpoint lines, CRLF line ends,
// libCacheSim's CSV header naming its columns). write_trace_file() then stores the bytes
// compressed with the codec the file name's suffix asks for (.gz, .xz, .zst, else as is), through
// the same three libraries ByteSource decodes with. A test builds its keys so that the right
// answer (requests, unique keys, hits) is known by construction, writes them in a scratch
// directory, and asserts on what read_trace or chronocache-sim makes of the file.
//
// Linked by tests only (target cc_sim_trace_writer), never by chronocache-sim.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/byte_source.h"

namespace chronocache::sim::test_support {

// `count` consecutive keys from `start`: one line of ARC's .lis format.
struct KeyRun {
  std::uint64_t start;
  std::uint64_t count;
};

std::vector<std::uint64_t> expand_runs(std::span<const KeyRun> runs);

// One decimal key per line ending in `line_end` ("\n" or "\r\n"), with a LIRS "*" checkpoint
// line after every 100th key.
std::string encode_text(std::span<const std::uint64_t> keys, std::string_view line_end);
// Positional CSV: "timestamp,key,size" per line, timestamp = the request's index.
std::string encode_csv(std::span<const std::uint64_t> keys);
// libCacheSim's cloudPhysicsIO.csv layout: the header "version,time,op,size,lbn", key in lbn.
std::string encode_csv_with_header(std::span<const std::uint64_t> keys);
// libCacheSim oracleGeneral: 24-byte little-endian records, key in obj_id.
std::string encode_oracle_general(std::span<const std::uint64_t> keys);
// cache2k: big-endian 32-bit keys. Precondition: every key < 2^31.
std::string encode_int32_big_endian(std::span<const std::uint64_t> keys);
// ARC .lis: "start count 0 request_number" per run.
std::string encode_arc_lis(std::span<const KeyRun> runs);

// `bytes` compressed as `compression` (one complete stream: gzip member, xz stream, zstd frame).
std::string compress(std::string_view bytes, Compression compression);
// Writes `bytes` to `path`, compressed as compression_from_path(path) says. Throws
// std::runtime_error if the file cannot be written.
void write_trace_file(const std::string& path, std::string_view bytes);

}  // namespace chronocache::sim::test_support
