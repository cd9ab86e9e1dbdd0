// Format names and recognition (see trace_format.h).
#include "sim/trace_format.h"

#include <array>
#include <utility>

namespace chronocache::sim {
namespace {

struct FormatName {
  std::string_view name;
  TraceFormat format;
};

// The first name of each format is the one printed; the others are accepted spellings.
constexpr std::array kFormatNames = {
    FormatName{"text", TraceFormat::kText},
    FormatName{"csv", TraceFormat::kCsv},
    FormatName{"oracleGeneral", TraceFormat::kOracleGeneral},
    FormatName{"lis", TraceFormat::kArcLis},
    FormatName{"int32be", TraceFormat::kInt32BigEndian},
    FormatName{"lirs", TraceFormat::kText},
    FormatName{"oracle", TraceFormat::kOracleGeneral},
    FormatName{"arc", TraceFormat::kArcLis},
    FormatName{"cache2k", TraceFormat::kInt32BigEndian},
};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

std::optional<TraceFormat> parse_trace_format(std::string_view name) {
  for (const FormatName& entry : kFormatNames)
    if (entry.name == name) return entry.format;
  return std::nullopt;
}

std::string_view trace_format_name(TraceFormat format) {
  for (const FormatName& entry : kFormatNames)
    if (entry.format == format) return entry.name;
  return "?";
}

std::optional<TraceFormat> format_from_path(std::string_view path) {
  for (std::string_view compressed : {".gz", ".xz", ".zst"}) {
    if (ends_with(path, compressed)) {
      path.remove_suffix(compressed.size());
      break;
    }
  }
  if (ends_with(path, ".csv")) return TraceFormat::kCsv;
  if (ends_with(path, ".lis")) return TraceFormat::kArcLis;
  if (ends_with(path, ".bin") || ends_with(path, ".oracleGeneral"))
    return TraceFormat::kOracleGeneral;
  if (ends_with(path, ".txt")) return TraceFormat::kText;
  return std::nullopt;
}

TraceFormat sniff_format(std::string_view first_bytes) {
  for (const char c : first_bytes) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 && c != '\n' && c != '\r' && c != '\t') return TraceFormat::kInt32BigEndian;
  }
  return TraceFormat::kText;
}

}  // namespace chronocache::sim
