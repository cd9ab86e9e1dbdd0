// The payload DUMP writes and RESTORE reads: one key's value, on its own, in ChronoCache's format.
//
//   type u8 | value bytes | format version u16 | XXH3-64 of everything before it (8)
//
// Integers are little-endian. The type byte is the snapshot entry's (kTypeString, the only one
// today); the value runs from it to the footer, so it needs no length of its own. The footer has
// the shape of Redis's (a 2-byte RDB version, then a 64-bit checksum), so each server refuses the
// other's payloads on the version alone, before any body is parsed: Redis's RESTORE rejects any
// version above its RDB_VERSION (10 in 7.0, 12 in 7.4), and 0xCC01 ("CC", format 1) is far above
// any it will reach; ours accepts only kDumpFormatVersion. The checksum is the snapshot files'
// XXH3-64 (snapshot_format.h), not a second hash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace chronocache::persistence {

inline constexpr std::uint16_t kDumpFormatVersion = 0xCC01;
inline constexpr std::size_t kDumpFooterBytes = 2 + 8;              // version, checksum
inline constexpr std::size_t kDumpMinBytes = 1 + kDumpFooterBytes;  // type, empty value, footer

// A string value as a DUMP payload.
std::string encode_dump_payload(std::string_view value);

enum class DumpStatus : std::uint8_t {
  kOk,
  // Too short for a footer, another version, or a checksum that does not match: Redis answers
  // all three with one error, and so does RESTORE.
  kBadVersionOrChecksum,
  // An intact footer around a body this build cannot read (an unknown type): Redis's "Bad data
  // format".
  kBadData,
};

struct DecodedDump {
  DumpStatus status = DumpStatus::kBadVersionOrChecksum;
  std::string_view value;  // a view into the payload, set when status is kOk
};

// Checks the footer (length, version, checksum) and then the body; trusts nothing in `payload`.
DecodedDump decode_dump_payload(std::string_view payload);

}  // namespace chronocache::persistence
