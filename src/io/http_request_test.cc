// Tests of the admin API's HTTP request parser: what it accepts, what it
// refuses and why, and that a request arriving in pieces parses the same.
#include "io/http_request.h"

#include <gtest/gtest.h>

#include <string>

namespace rw::io {
namespace {

Result<std::optional<HttpParsed>, HttpParseError> parse(std::string_view text) {
  return parse_http_request(as_bytes(text));
}

HttpParseError error_of(std::string_view text) {
  auto parsed = parse(text);
  EXPECT_FALSE(parsed) << text;
  return parsed ? HttpParseError::kBadHeader : parsed.error();
}

TEST(ParseHttpRequest, ParsesAGetWithHeadersAndQuery) {
  std::string text =
      "GET /records?limit=5 HTTP/1.1\r\nHost: localhost\r\nAuthorization:  Bearer abc \r\n\r\n";
  auto parsed = parse(text);
  ASSERT_TRUE(parsed);
  ASSERT_TRUE(*parsed);
  const HttpRequest& request = (*parsed)->request;
  EXPECT_EQ(request.method, "GET");
  EXPECT_EQ(request.target, "/records?limit=5");
  EXPECT_EQ(request.path, "/records");
  EXPECT_EQ(request.query, "limit=5");
  EXPECT_EQ(request.version, "HTTP/1.1");
  EXPECT_EQ(request.header_count, 2u);
  EXPECT_EQ(request.header("authorization"), "Bearer abc");
  EXPECT_EQ(request.header("host"), "localhost");
  EXPECT_FALSE(request.header("Content-Length"));
  EXPECT_EQ((*parsed)->consumed, text.size());
}

TEST(ParseHttpRequest, ReadsABodyByContentLength) {
  std::string text = "POST /members HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcdEXTRA";
  auto parsed = parse(text);
  ASSERT_TRUE(parsed && *parsed);
  EXPECT_EQ((*parsed)->request.body, "abcd");
  EXPECT_EQ((*parsed)->consumed, text.size() - 5);
}

TEST(ParseHttpRequest, AsksForMoreUntilComplete) {
  std::string text = "POST /x HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc";
  for (std::size_t size = 0; size < text.size(); ++size) {
    auto parsed = parse(std::string_view(text).substr(0, size));
    ASSERT_TRUE(parsed) << size << ": " << to_string(parsed.error());
    EXPECT_FALSE(*parsed) << size;
  }
  auto whole = parse(text);
  ASSERT_TRUE(whole && *whole);
}

TEST(ParseHttpRequest, RefusesOddRequestsWithNamedErrors) {
  EXPECT_EQ(error_of("GET / HTTP/1.1\n\n"), HttpParseError::kBadLineEnding);
  EXPECT_EQ(error_of("GET / HTTP/1.1\r\r\n"), HttpParseError::kBadLineEnding);
  EXPECT_EQ(error_of("GET /\r\n\r\n"), HttpParseError::kBadRequestLine);
  EXPECT_EQ(error_of("GET  / HTTP/1.1\r\n\r\n"), HttpParseError::kBadRequestLine);
  EXPECT_EQ(error_of("GET / HTTP/1.1 x\r\n\r\n"), HttpParseError::kBadRequestLine);
  EXPECT_EQ(error_of("get / HTTP/1.1\r\n\r\n"), HttpParseError::kBadMethod);
  EXPECT_EQ(error_of("GET http://x/ HTTP/1.1\r\n\r\n"), HttpParseError::kBadTarget);
  EXPECT_EQ(error_of("GET * HTTP/1.1\r\n\r\n"), HttpParseError::kBadTarget);
  EXPECT_EQ(error_of("GET / HTTP/2.0\r\n\r\n"), HttpParseError::kBadVersion);
  EXPECT_EQ(error_of("GET / HTTP/1.1\r\nNoColon\r\n\r\n"), HttpParseError::kBadHeader);
  EXPECT_EQ(error_of("GET / HTTP/1.1\r\nBad Name: x\r\n\r\n"), HttpParseError::kBadHeader);
  EXPECT_EQ(error_of("GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n"), HttpParseError::kObsoleteLineFolding);
  EXPECT_EQ(error_of("GET / HTTP/1.1\r\nA: b\x01\r\n\r\n"), HttpParseError::kBadHeader);
  EXPECT_EQ(error_of("POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n"), HttpParseError::kBadContentLength);
  EXPECT_EQ(error_of("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n"),
            HttpParseError::kBadContentLength);
  EXPECT_EQ(error_of("POST / HTTP/1.1\r\nContent-Length: 999999\r\n\r\n"), HttpParseError::kBodyTooLarge);
  EXPECT_EQ(error_of("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
            HttpParseError::kTransferEncoding);
}

TEST(ParseHttpRequest, RefusesTooManyHeaders) {
  std::string text = "GET / HTTP/1.1\r\n";
  for (std::size_t i = 0; i <= kHttpHeadersMax; ++i) text += "X-" + std::to_string(i) + ": v\r\n";
  text += "\r\n";
  EXPECT_EQ(error_of(text), HttpParseError::kTooManyHeaders);
}

TEST(ParseHttpRequest, RefusesAHeadThatNeverEnds) {
  std::string text = "GET / HTTP/1.1\r\nX: " + std::string(kHttpHeadBytesMax, 'a');
  EXPECT_EQ(error_of(text), HttpParseError::kHeadTooLarge);
}

TEST(ParseHttpRequest, RefusesAnOverlongTarget) {
  std::string text = "GET /" + std::string(kHttpTargetBytesMax, 'a') + " HTTP/1.1\r\n\r\n";
  EXPECT_EQ(error_of(text), HttpParseError::kBadTarget);
}

}  // namespace
}  // namespace rw::io
