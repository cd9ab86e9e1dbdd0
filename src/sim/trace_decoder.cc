// The per-format decoding rules of trace_format.h, applied incrementally (see trace_decoder.h).
#include "sim/trace_decoder.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "chronocache/base/hash.h"

namespace chronocache::sim {
namespace {

// oracleGeneral: {u32 time; u64 obj_id; u32 obj_size; i64 next_access_vtime}, packed, LE.
constexpr std::size_t kOracleRecordBytes = 24;
constexpr std::size_t kOracleKeyOffset = 4;
constexpr std::size_t kInt32RecordBytes = 4;

// A line longer than this is not a trace line but a wrong --format (a binary file read as text);
// stopping early gives a clear error instead of buffering the whole file as one "line".
constexpr std::size_t kMaxLineBytes = 64 * 1024;

// Most fields a CSV line may have; extra fields are ignored.
constexpr std::size_t kMaxCsvFields = 16;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

bool parse_u64(std::string_view s, std::uint64_t& value) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

// Text with control bytes is a binary file read with the wrong --format, not a key.
bool is_binary(std::string_view text) {
  for (const char c : text)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t') return true;
  return false;
}

// Seconds, accepting fractions (truncated) and clamping to the uint32 range; nullopt-like false
// for text that is not a number.
bool parse_seconds(std::string_view s, std::uint32_t& seconds) {
  double value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return false;
  if (!(value > 0)) {
    seconds = 0;
  } else if (value >= 4294967295.0) {
    seconds = 4294967295U;
  } else {
    seconds = static_cast<std::uint32_t>(value);
  }
  return true;
}

std::size_t split(std::string_view line, char separator,
                  std::array<std::string_view, kMaxCsvFields>& fields) {
  std::size_t count = 0;
  while (count < fields.size()) {
    const std::size_t at = line.find(separator);
    fields[count++] = trim(line.substr(0, at));
    if (at == std::string_view::npos) break;
    line.remove_prefix(at + 1);
  }
  return count;
}

bool is_one_of(std::string_view name, std::initializer_list<std::string_view> names) {
  for (std::string_view candidate : names)
    if (candidate == name) return true;
  return false;
}

}  // namespace

TraceDecoder::TraceDecoder(TraceFormat format, Trace& out)
    : format_(format),
      out_(out),
      record_bytes_(format == TraceFormat::kOracleGeneral    ? kOracleRecordBytes
                    : format == TraceFormat::kInt32BigEndian ? kInt32RecordBytes
                                                             : 0) {}

void TraceDecoder::feed(std::string_view bytes) {
  if (record_bytes_ != 0) {
    feed_records(bytes);
  } else {
    feed_lines(bytes);
  }
}

void TraceDecoder::finish() {
  if (carry_.empty()) return;
  if (record_bytes_ != 0) fail("ends inside a record");
  std::string last;
  last.swap(carry_);
  decode_line(last);
}

void TraceDecoder::feed_lines(std::string_view bytes) {
  if (!carry_.empty()) {
    const std::size_t newline = bytes.find('\n');
    if (newline == std::string_view::npos) {
      carry_.append(bytes);
      if (carry_.size() > kMaxLineBytes) fail("line too long (wrong --format?)");
      return;
    }
    carry_.append(bytes.substr(0, newline));
    decode_line(carry_);
    carry_.clear();
    bytes.remove_prefix(newline + 1);
  }
  for (std::size_t newline; (newline = bytes.find('\n')) != std::string_view::npos;) {
    decode_line(bytes.substr(0, newline));
    bytes.remove_prefix(newline + 1);
  }
  if (bytes.size() > kMaxLineBytes) fail("line too long (wrong --format?)");
  carry_.assign(bytes);
}

void TraceDecoder::feed_records(std::string_view bytes) {
  if (!carry_.empty()) {
    const std::size_t missing = record_bytes_ - carry_.size();
    if (bytes.size() < missing) {
      carry_.append(bytes);
      return;
    }
    carry_.append(bytes.substr(0, missing));
    decode_record(reinterpret_cast<const unsigned char*>(carry_.data()));
    carry_.clear();
    bytes.remove_prefix(missing);
  }
  while (bytes.size() >= record_bytes_) {
    decode_record(reinterpret_cast<const unsigned char*>(bytes.data()));
    bytes.remove_prefix(record_bytes_);
  }
  carry_.assign(bytes);
}

void TraceDecoder::decode_record(const unsigned char* record) {
  if (format_ == TraceFormat::kOracleGeneral) {
    std::uint64_t key = 0;
    for (int i = 7; i >= 0; --i) key = (key << 8) | record[kOracleKeyOffset + i];
    out_.keys.push_back(key);
  } else {
    const std::uint32_t bits = (std::uint32_t{record[0]} << 24) | (std::uint32_t{record[1]} << 16) |
                               (std::uint32_t{record[2]} << 8) | std::uint32_t{record[3]};
    // Java ints, as cache2k writes them: signed, widened to 64 bits by sign extension.
    out_.keys.push_back(static_cast<std::uint64_t>(std::int64_t{static_cast<std::int32_t>(bits)}));
  }
  offset_ += record_bytes_;
}

void TraceDecoder::decode_line(std::string_view line) {
  ++line_number_;
  switch (format_) {
    case TraceFormat::kText:
      decode_text_line(line);
      return;
    case TraceFormat::kCsv:
      decode_csv_line(line);
      return;
    case TraceFormat::kArcLis:
      decode_lis_line(line);
      return;
    case TraceFormat::kOracleGeneral:
    case TraceFormat::kInt32BigEndian:
      break;
  }
  fail("not a line format");
}

std::uint64_t TraceDecoder::key_of(std::string_view field) const {
  std::uint64_t value = 0;
  if (parse_u64(field, value)) return value;
  if (is_binary(field)) fail("binary data in a text trace (wrong --format?)");
  return hash_bytes(field.data(), field.size());
}

void TraceDecoder::decode_text_line(std::string_view line) {
  line = trim(line);
  if (line.empty() || line == "*") return;  // LIRS checkpoint markers and blank lines
  out_.keys.push_back(key_of(line));
}

void TraceDecoder::decode_csv_line(std::string_view line) {
  line = trim(line);
  if (line.empty()) return;
  std::array<std::string_view, kMaxCsvFields> fields;
  const std::size_t count = split(line, ',', fields);

  if (!csv_started_) {
    csv_started_ = true;
    std::uint64_t ignored = 0;
    std::uint32_t ignored_seconds = 0;
    const bool header =
        !parse_seconds(fields[0], ignored_seconds) && !(count > 1 && parse_u64(fields[1], ignored));
    if (header) {
      csv_columns_ = CsvColumns{-1, -1, -1};
      for (std::size_t i = 0; i < count; ++i) {
        const int column = static_cast<int>(i);
        if (is_one_of(fields[i], {"key", "obj_id", "id", "lbn", "object"}))
          csv_columns_.key = column;
        if (is_one_of(fields[i], {"timestamp", "time", "ts"})) csv_columns_.time = column;
        if (fields[i] == "ttl") csv_columns_.ttl = column;
      }
      if (csv_columns_.key < 0) fail("CSV header names no key column (key, obj_id, id, lbn)");
      return;
    }
    // Positional: timestamp,key[,size[,ttl]]; TTLs only if the first line has the fourth field.
    if (count < 2) fail("CSV line needs timestamp,key");
    if (count < 4) csv_columns_.ttl = -1;
  }

  const auto field = [&](int column) -> std::string_view {
    return column >= 0 && static_cast<std::size_t>(column) < count ? fields[column]
                                                                   : std::string_view();
  };
  const std::string_view key = field(csv_columns_.key);
  if (key.empty()) fail("CSV line has no key");
  out_.keys.push_back(key_of(key));
  if (csv_columns_.ttl >= 0) {
    std::uint32_t time = 0;
    std::uint32_t ttl = 0;
    if (!parse_seconds(field(csv_columns_.time), time)) fail("CSV timestamp is not a number");
    const std::string_view ttl_text = field(csv_columns_.ttl);
    if (!ttl_text.empty() && !parse_seconds(ttl_text, ttl)) fail("CSV ttl is not a number");
    out_.times_s.push_back(time);
    out_.ttls_s.push_back(ttl);
  }
}

void TraceDecoder::decode_lis_line(std::string_view line) {
  line = trim(line);
  if (line.empty()) return;
  std::array<std::string_view, kMaxCsvFields> fields;
  // Fields are separated by single spaces in the ARC traces; tolerate runs of blanks too.
  std::size_t count = 0;
  while (!line.empty() && count < fields.size()) {
    const std::size_t end = line.find_first_of(" \t");
    fields[count++] = line.substr(0, end);
    if (end == std::string_view::npos) break;
    line.remove_prefix(end);
    line = trim(line);
  }
  std::uint64_t start = 0;
  std::uint64_t n = 0;
  if (count < 2 || !parse_u64(fields[0], start) || !parse_u64(fields[1], n))
    fail(".lis line needs \"start n ...\"");
  for (std::uint64_t i = 0; i < n; ++i) out_.keys.push_back(start + i);
}

void TraceDecoder::fail(std::string_view what) const {
  std::string message = record_bytes_ != 0 ? "byte " : "line ";
  message.append(std::to_string(record_bytes_ != 0 ? offset_ : line_number_));
  message.append(": ");
  message.append(what);
  throw std::runtime_error(message);
}

Trace decode_trace(std::string_view bytes, TraceFormat format) {
  Trace trace;
  TraceDecoder decoder(format, trace);
  decoder.feed(bytes);
  decoder.finish();
  return trace;
}

}  // namespace chronocache::sim
