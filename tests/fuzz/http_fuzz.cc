// libFuzzer target for the metrics endpoint's request reader (server/net/http_request.h): any
// bytes, fed in pieces whose sizes the input's first byte chooses. Checks what the endpoint
// relies on: the state never goes back, a complete head has an upper-case method and a path
// that starts with '/', a refusal carries 400 or 431, and the reader keeps at most a bounded head.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "server/net/http_request.h"

using chronocached::net::HttpRequest;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t piece = 1 + data[0] % 64;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  HttpRequest request;
  HttpRequest::State last = HttpRequest::kIncomplete;
  while (!input.empty()) {
    const std::string_view bytes = input.substr(0, piece);
    input.remove_prefix(bytes.size());
    const HttpRequest::State state = request.feed(bytes);
    if (last != HttpRequest::kIncomplete && state != last) std::abort();  // never goes back
    last = state;
  }
  if (last == HttpRequest::kComplete) {
    if (request.method().empty() || request.path().empty() || request.path()[0] != '/')
      std::abort();
    for (char c : request.method())
      if (c < 'A' || c > 'Z') std::abort();
    if (request.path().size() > HttpRequest::kMaxHead) std::abort();
  }
  if (last == HttpRequest::kBad && request.status() != 400 && request.status() != 431) std::abort();
  return 0;
}
