// Pins HttpRequest (http_request.h): a request head read whole or in pieces, its method and path,
// and the refusals: malformed (400) and too long (431).
#include "server/net/http_request.h"

#include <string>

#include <gtest/gtest.h>

namespace chronocached::net {
namespace {

TEST(HttpRequest, AScrapersRequestInOneReadOrByteByByte) {
  const std::string text =
      "GET /metrics?x=1 HTTP/1.1\r\nHost: 127.0.0.1:9121\r\nAccept: text/plain\r\n\r\n";
  HttpRequest whole;
  ASSERT_EQ(whole.feed(text), HttpRequest::kComplete);
  EXPECT_EQ(whole.method(), "GET");
  EXPECT_EQ(whole.path(), "/metrics");
  HttpRequest pieces;
  for (std::size_t i = 0; i + 1 < text.size(); ++i)
    ASSERT_EQ(pieces.feed(text.substr(i, 1)), HttpRequest::kIncomplete) << i;
  EXPECT_EQ(pieces.feed(text.substr(text.size() - 1)), HttpRequest::kComplete);
  EXPECT_EQ(pieces.path(), "/metrics");
  EXPECT_EQ(pieces.feed("more"), HttpRequest::kComplete);  // the rest is not read
}

TEST(HttpRequest, MalformedHeadsAreRefusedWith400) {
  for (const char* head : {"GET\r\n\r\n", "GET /metrics\r\n\r\n", "GET  /metrics HTTP/1.1\r\n\r\n",
                           "get /metrics HTTP/1.1\r\n\r\n", "GET metrics HTTP/1.1\r\n\r\n",
                           "GET /metrics HTTP/2\r\n\r\n", " GET /metrics HTTP/1.1\r\n\r\n"}) {
    HttpRequest request;
    EXPECT_EQ(request.feed(head), HttpRequest::kBad) << head;
    EXPECT_EQ(request.status(), 400) << head;
  }
  HttpRequest head_only;
  EXPECT_EQ(head_only.feed("HEAD /healthz HTTP/1.0\r\n\r\n"), HttpRequest::kComplete);
  EXPECT_EQ(head_only.method(), "HEAD");
}

TEST(HttpRequest, AHeadLongerThanTheLimitIsRefusedWith431AndNotKept) {
  HttpRequest request;
  const std::string header = "X-Filler: " + std::string(1000, 'x') + "\r\n";
  ASSERT_EQ(request.feed("GET /metrics HTTP/1.1\r\n"), HttpRequest::kIncomplete);
  HttpRequest::State state = HttpRequest::kIncomplete;
  for (int i = 0; i < 20 && state == HttpRequest::kIncomplete; ++i) state = request.feed(header);
  EXPECT_EQ(state, HttpRequest::kBad);
  EXPECT_EQ(request.status(), 431);
}

}  // namespace
}  // namespace chronocached::net
