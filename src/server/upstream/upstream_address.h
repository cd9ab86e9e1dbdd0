// The upstream's address as --upstream gives it, "host:port": an IPv4 or IPv6 address (IPv6 may
// be bracketed, "[::1]:6379"), or "localhost", taken as 127.0.0.1. No DNS lookup: the fetcher
// connects to what it was given, and a name it cannot use is refused at start.
#pragma once

#include <charconv>
#include <optional>
#include <string>
#include <string_view>

namespace chronocached {

struct UpstreamAddress {
  std::string ip;
  int port = 0;
  std::string text;  // as given, for errors and INFO
};

inline std::optional<UpstreamAddress> parse_upstream_address(std::string_view text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  std::string_view host = text.substr(0, colon);
  const std::string_view port_text = text.substr(colon + 1);
  int port = 0;
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 1 || port > 65535)
    return std::nullopt;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  UpstreamAddress address;
  address.ip = host == "localhost" ? std::string("127.0.0.1") : std::string(host);
  address.port = port;
  address.text = std::string(text);
  return address;
}

}  // namespace chronocached
