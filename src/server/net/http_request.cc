#include "server/net/http_request.h"

#include <algorithm>

namespace chronocached::net {

HttpRequest::State HttpRequest::feed(std::string_view bytes) {
  if (state_ != kIncomplete) return state_;
  head_.append(bytes.substr(0, kMaxHead + 4 - std::min(head_.size(), kMaxHead + 4)));
  const std::size_t end = head_.find("\r\n\r\n");
  if (end == std::string::npos) {
    if (head_.size() > kMaxHead) {
      status_ = 431;
      return state_ = kBad;
    }
    return state_;
  }
  return state_ = parse_head(std::string_view(head_).substr(0, end));
}

// "METHOD SP target SP HTTP/1.x", then header lines, which are not needed.
HttpRequest::State HttpRequest::parse_head(std::string_view head) {
  status_ = 400;
  const std::string_view line = head.substr(0, head.find("\r\n"));
  const std::size_t first = line.find(' ');
  const std::size_t second = first == std::string_view::npos ? first : line.find(' ', first + 1);
  if (first == 0 || second == std::string_view::npos || second == first + 1) return kBad;
  const std::string_view version = line.substr(second + 1);
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return kBad;
  const std::string_view target = line.substr(first + 1, second - first - 1);
  if (target[0] != '/') return kBad;
  for (char c : line.substr(0, first))
    if (c < 'A' || c > 'Z') return kBad;
  method_ = line.substr(0, first);
  path_ = target.substr(0, target.find('?'));
  status_ = 0;
  return kComplete;
}

}  // namespace chronocached::net
