// HttpRequest: the head of one HTTP/1.x request (request line and headers), read from bytes as
// they arrive, for the metrics endpoint (GET /metrics, GET /healthz). Only what a scraper sends
// is understood: a method, a path, a version; headers are skipped and bodies are not read (the
// connection serves one request and closes). Bounded: a head longer than kMaxHead is refused.
//
//   HttpRequest request;
//   switch (request.feed(bytes)) {
//     case HttpRequest::kIncomplete: ...read more...
//     case HttpRequest::kComplete:   request.method(), request.path()   // "GET", "/metrics"
//     case HttpRequest::kBad:        request.status()                    // 400 or 431
//   }
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace chronocached::net {

class HttpRequest {
 public:
  static constexpr std::size_t kMaxHead = 8192;
  enum State { kIncomplete, kComplete, kBad };

  // Appends bytes and says how far the head has come. After kComplete or kBad, further bytes
  // change nothing.
  State feed(std::string_view bytes);

  State state() const noexcept { return state_; }
  std::string_view method() const noexcept { return method_; }
  std::string_view path() const noexcept { return path_; }  // without a query string
  int status() const noexcept { return status_; }           // for kBad: 400, or 431 (too long)

 private:
  State parse_head(std::string_view head);

  std::string head_;
  std::string method_;
  std::string path_;
  State state_ = kIncomplete;
  int status_ = 0;
};

}  // namespace chronocached::net
