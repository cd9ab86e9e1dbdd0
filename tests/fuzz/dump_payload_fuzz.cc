// libFuzzer target for the DUMP payload decoder (persistence/dump_payload.h), which RESTORE runs
// on whatever bytes a client sends. Checks, for any input:
//   - decoding never crashes, and a value it hands out lies inside the input;
//   - what decodes is canonical: encoding the value again gives the input back, byte for byte;
//   - the input taken as a value round-trips through encode and decode.
// The checksum is compared here as in production: a mutation that keeps it valid is a payload
// the encoder would have written, which the round trip already covers.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "persistence/dump_payload.h"

using chronocache::persistence::decode_dump_payload;
using chronocache::persistence::DecodedDump;
using chronocache::persistence::DumpStatus;
using chronocache::persistence::encode_dump_payload;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  const DecodedDump decoded = decode_dump_payload(input);
  if (decoded.status == DumpStatus::kOk) {
    if (decoded.value.data() < input.data() ||
        decoded.value.data() + decoded.value.size() > input.data() + input.size())
      std::abort();
    if (encode_dump_payload(decoded.value) != input) std::abort();
  } else if (!decoded.value.empty()) {
    std::abort();
  }

  const std::string payload = encode_dump_payload(input);
  const DecodedDump again = decode_dump_payload(payload);
  if (again.status != DumpStatus::kOk || again.value != input) std::abort();
  return 0;
}
