// read_trace: a trace file (any format of trace_format.h, any compression of byte_source.h)
// decoded into memory in one pass.
//
// Memory is the decoded Trace plus one fixed read buffer and the codec's state: the raw bytes are
// never held whole (see byte_source.h). Throws std::runtime_error (naming the file) on I/O or
// format errors.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "sim/trace.h"
#include "sim/trace_format.h"

namespace chronocache::sim {

struct TraceFile {
  Trace trace;
  TraceFormat format;  // the one used: given, or recognised from the name or the first bytes
};

// Called after each chunk with the compressed bytes consumed and the file's size.
using ReadProgress = std::function<void(std::uint64_t consumed, std::uint64_t total)>;

TraceFile read_trace(const std::string& path, std::optional<TraceFormat> format = std::nullopt,
                     const ReadProgress& progress = {});

}  // namespace chronocache::sim
