#include "persistence/dump_payload.h"

#include <xxhash.h>

#include "persistence/snapshot_format.h"

namespace chronocache::persistence {
namespace {

void put_u16(char* out, std::uint16_t v) {
  out[0] = static_cast<char>(v);
  out[1] = static_cast<char>(v >> 8);
}
std::uint16_t get_u16(const char* in) {
  return static_cast<std::uint16_t>(static_cast<unsigned char>(in[0]) |
                                    static_cast<unsigned char>(in[1]) << 8);
}

}  // namespace

std::string encode_dump_payload(std::string_view value) {
  std::string payload(1 + value.size() + kDumpFooterBytes, '\0');
  char* p = payload.data();
  *p++ = static_cast<char>(kTypeString);
  value.copy(p, value.size());
  p += value.size();
  put_u16(p, kDumpFormatVersion);
  p += 2;
  put_u64(p, XXH3_64bits(payload.data(), static_cast<std::size_t>(p - payload.data())));
  return payload;
}

DecodedDump decode_dump_payload(std::string_view payload) {
  // As Redis's verifyDumpPayload: what holds a footer is checked by it, and a footer with nothing
  // before it is then bad data, not a bad checksum.
  if (payload.size() < kDumpFooterBytes) return {DumpStatus::kBadVersionOrChecksum, {}};
  const char* const footer = payload.data() + payload.size() - kDumpFooterBytes;
  if (get_u16(footer) != kDumpFormatVersion) return {DumpStatus::kBadVersionOrChecksum, {}};
  const std::size_t summed = payload.size() - 8;  // everything before the checksum
  if (XXH3_64bits(payload.data(), summed) != get_u64(footer + 2))
    return {DumpStatus::kBadVersionOrChecksum, {}};
  if (payload.size() < kDumpMinBytes || static_cast<std::uint8_t>(payload[0]) != kTypeString)
    return {DumpStatus::kBadData, {}};
  return {DumpStatus::kOk, payload.substr(1, payload.size() - kDumpMinBytes)};
}

}  // namespace chronocache::persistence
