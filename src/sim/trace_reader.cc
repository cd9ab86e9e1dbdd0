// One pass: ByteSource -> (format from the name, else sniffed from the first chunk) ->
// TraceDecoder (see trace_reader.h).
#include "sim/trace_reader.h"

#include <stdexcept>
#include <string_view>
#include <vector>

#include "sim/byte_source.h"
#include "sim/trace_decoder.h"

namespace chronocache::sim {
namespace {

// Decoded bytes per chunk: amortises the per-chunk work; a multiple of both record sizes (4, 24)
// is not required (the decoder carries partial records) but keeps carries rare.
constexpr std::size_t kChunkBytes = 1 << 20;

}  // namespace

TraceFile read_trace(const std::string& path, std::optional<TraceFormat> format,
                     const ReadProgress& progress) {
  try {
    std::unique_ptr<ByteSource> source = open_byte_source(path);
    std::vector<char> buffer(kChunkBytes);
    std::size_t got = source->read(buffer);
    if (!format) format = format_from_path(path);
    if (!format)
      format = sniff_format(std::string_view(buffer.data(), std::min<std::size_t>(got, 4096)));

    TraceFile file{Trace{}, *format};
    TraceDecoder decoder(*format, file.trace);
    while (got != 0) {
      decoder.feed(std::string_view(buffer.data(), got));
      if (progress) progress(source->consumed_file_bytes(), source->file_bytes());
      got = source->read(buffer);
    }
    decoder.finish();
    file.trace.keys.shrink_to_fit();
    return file;
  } catch (const std::runtime_error& error) {
    if (std::string_view(error.what()).starts_with(path)) throw;
    std::string message = path;
    message.append(": ");
    message.append(error.what());
    throw std::runtime_error(message);
  }
}

}  // namespace chronocache::sim
