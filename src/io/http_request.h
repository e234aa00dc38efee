// A deliberately small HTTP/1.1 request parser (RFC 9112) for the admin API:
// one request per connection, origin-form targets, Content-Length bodies
// only. Anything unusual is refused with a named error that the server turns
// into 400, rather than guessed at. Pure: no I/O, no allocation; the parsed
// request borrows the caller's buffer.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

#include "base/bytes.h"
#include "base/result.h"

namespace rw::io {

// Request line and headers together, CRLFs included.
inline constexpr std::size_t kHttpHeadBytesMax = 8192;
inline constexpr std::size_t kHttpHeadersMax = 32;
inline constexpr std::size_t kHttpTargetBytesMax = 2048;
inline constexpr std::size_t kHttpBodyBytesMax = 64 * 1024;

enum class HttpParseError {
  kHeadTooLarge,         // No end of headers within kHttpHeadBytesMax.
  kBadLineEnding,        // A bare CR or LF: RFC 9112 §2.2 lets us refuse it.
  kBadRequestLine,       // Not "METHOD SP target SP HTTP/1.x".
  kBadMethod,            // Not 1..16 uppercase letters.
  kBadTarget,            // Not origin-form ("/..."), too long, or a byte outside VCHAR.
  kBadVersion,           // Not HTTP/1.0 or HTTP/1.1.
  kBadHeader,            // No colon, empty or non-token name, a control byte in the value.
  kObsoleteLineFolding,  // RFC 9112 §5.2: a header line starting with SP or HTAB.
  kTooManyHeaders,       // More than kHttpHeadersMax.
  kBadContentLength,     // Not digits, or given twice.
  kBodyTooLarge,         // Content-Length above kHttpBodyBytesMax.
  kTransferEncoding,     // Chunked bodies are not supported; refused rather than misread.
};

[[nodiscard]] std::string_view to_string(HttpParseError error);

struct HttpHeader {
  std::string_view name{};
  std::string_view value{};  // Without surrounding whitespace.
};

// A parsed request; every view points into the buffer given to the parser.
struct HttpRequest {
  std::string_view method{};
  std::string_view target{};  // "/records?limit=10"
  std::string_view path{};    // "/records"
  std::string_view query{};   // "limit=10", empty without '?'
  std::string_view version{};
  std::array<HttpHeader, kHttpHeadersMax> headers{};
  std::size_t header_count = 0;
  std::string_view body{};

  // The first header named `name`, compared case-insensitively (RFC 9110 §5.1).
  [[nodiscard]] std::optional<std::string_view> header(std::string_view name) const;
};

struct HttpParsed {
  HttpRequest request{};
  std::size_t consumed = 0;  // Bytes of head and body.
};

// Parses the request at the start of `buffer`. No request (and no error)
// means: the bytes so far are a valid beginning; read more and call again.
[[nodiscard]] Result<std::optional<HttpParsed>, HttpParseError> parse_http_request(Bytes buffer);

}  // namespace rw::io
