// TraceDecoder: turns a trace's bytes, fed in chunks of any size, into Trace requests.
//
// Decoding is incremental because ByteSource hands over a fixed-size chunk at a time (see
// byte_source.h): a line or a binary record may straddle two chunks, so the decoder keeps the
// unfinished tail (at most one line or one record) and completes it with the next chunk. Feeding
// a whole file at once or one byte at a time gives the same Trace, which the tests check.
//
// Keys: decimal keys are used as they are (so a key's identity is the trace's own number); any
// other key text is hashed to 64 bits (chronocache::hash_bytes; a collision among a trace's
// distinct keys has probability ~n^2/2^65, negligible for the traces this reads).
//
// Errors throw std::runtime_error naming the line (text formats) or the byte offset (binary).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sim/trace.h"
#include "sim/trace_format.h"

namespace chronocache::sim {

class TraceDecoder {
 public:
  // Appends the decoded requests to `out`, which must outlive the decoder.
  TraceDecoder(TraceFormat format, Trace& out);

  void feed(std::string_view bytes);
  // The end of the input: decodes a last line that has no newline; a partial binary record is an
  // error.
  void finish();

 private:
  // Which CSV field holds what; -1 = absent.
  struct CsvColumns {
    int time = 0;
    int key = 1;
    int ttl = 3;
  };

  void feed_lines(std::string_view bytes);
  void feed_records(std::string_view bytes);
  void decode_line(std::string_view line);
  void decode_record(const unsigned char* record);
  void decode_text_line(std::string_view line);
  void decode_csv_line(std::string_view line);
  void decode_lis_line(std::string_view line);
  // A key field: its decimal value, else the hash of its text.
  std::uint64_t key_of(std::string_view field) const;
  [[noreturn]] void fail(std::string_view what) const;

  TraceFormat format_;
  Trace& out_;
  std::size_t record_bytes_;  // 0 for the line formats
  std::string carry_;         // the unfinished line or record from the previous chunk
  std::uint64_t line_number_ = 0;
  std::uint64_t offset_ = 0;  // binary formats: bytes decoded so far
  bool csv_started_ = false;  // the first CSV line (header or data) has been seen
  CsvColumns csv_columns_;
};

// Decodes a complete in-memory trace (tests, small inputs).
Trace decode_trace(std::string_view bytes, TraceFormat format);

}  // namespace chronocache::sim
