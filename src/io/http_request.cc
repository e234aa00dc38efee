// The admin API's HTTP/1.1 request parser (http_request.h), after RFC 9112
// §2-§6 with everything optional left out.
#include "io/http_request.h"

#include <algorithm>

namespace rw::io {
namespace {

constexpr std::size_t kMethodBytesMax = 16;

// RFC 9110 §5.6.2: tchar.
bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_vchar(char c) { return c >= 0x21 && c <= 0x7e; }

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); });
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// Finds CRLF CRLF; refuses a bare CR or LF anywhere before it.
Result<std::optional<std::size_t>, HttpParseError> find_head_end(std::string_view text) {
  const std::size_t limit = std::min(text.size(), kHttpHeadBytesMax);
  for (std::size_t i = 0; i < limit; ++i) {
    if (text[i] == '\n') return fail(HttpParseError::kBadLineEnding);
    if (text[i] != '\r') continue;
    if (i + 1 >= text.size()) return std::optional<std::size_t>{};
    if (text[i + 1] != '\n') return fail(HttpParseError::kBadLineEnding);
    if (i + 3 < text.size() && text[i + 2] == '\r' && text[i + 3] == '\n') {
      return std::optional<std::size_t>{i + 4};
    }
    ++i;  // Past the LF of this CRLF.
  }
  if (text.size() >= kHttpHeadBytesMax) return fail(HttpParseError::kHeadTooLarge);
  return std::optional<std::size_t>{};
}

Result<void, HttpParseError> parse_request_line(std::string_view line, HttpRequest& request) {
  const std::size_t first = line.find(' ');
  if (first == std::string_view::npos) return fail(HttpParseError::kBadRequestLine);
  const std::size_t second = line.find(' ', first + 1);
  if (second == std::string_view::npos || line.find(' ', second + 1) != std::string_view::npos) {
    return fail(HttpParseError::kBadRequestLine);
  }
  request.method = line.substr(0, first);
  request.target = line.substr(first + 1, second - first - 1);
  request.version = line.substr(second + 1);
  if (request.method.empty() || request.method.size() > kMethodBytesMax ||
      !std::all_of(request.method.begin(), request.method.end(),
                   [](char c) { return c >= 'A' && c <= 'Z'; })) {
    return fail(HttpParseError::kBadMethod);
  }
  // RFC 9112 §3.2.1: origin-form only; absolute-form and '*' are for proxies.
  if (request.target.empty() || request.target.front() != '/' ||
      request.target.size() > kHttpTargetBytesMax ||
      !std::all_of(request.target.begin(), request.target.end(), is_vchar)) {
    return fail(HttpParseError::kBadTarget);
  }
  if (request.version != "HTTP/1.1" && request.version != "HTTP/1.0")
    return fail(HttpParseError::kBadVersion);
  const std::size_t question = request.target.find('?');
  request.path = request.target.substr(0, question);
  request.query =
      question == std::string_view::npos ? std::string_view() : request.target.substr(question + 1);
  return {};
}

Result<void, HttpParseError> parse_header_line(std::string_view line, HttpRequest& request) {
  if (line.front() == ' ' || line.front() == '\t') return fail(HttpParseError::kObsoleteLineFolding);
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return fail(HttpParseError::kBadHeader);
  std::string_view name = line.substr(0, colon);
  // RFC 9112 §5.1: no whitespace between the name and the colon.
  if (!std::all_of(name.begin(), name.end(), is_tchar)) return fail(HttpParseError::kBadHeader);
  std::string_view value = trim(line.substr(colon + 1));
  if (!std::all_of(value.begin(), value.end(), [](char c) {
        return is_vchar(c) || c == ' ' || c == '\t' || static_cast<unsigned char>(c) >= 0x80;
      })) {
    return fail(HttpParseError::kBadHeader);
  }
  if (request.header_count == kHttpHeadersMax) return fail(HttpParseError::kTooManyHeaders);
  request.headers[request.header_count++] = HttpHeader{name, value};
  return {};
}

Result<std::size_t, HttpParseError> content_length(const HttpRequest& request) {
  std::optional<std::size_t> length;
  for (std::size_t i = 0; i < request.header_count; ++i) {
    const HttpHeader& header = request.headers[i];
    if (equal_ignoring_case(header.name, "Transfer-Encoding")) return fail(HttpParseError::kTransferEncoding);
    if (!equal_ignoring_case(header.name, "Content-Length")) continue;
    // RFC 9112 §6.3: differing or repeated lengths are a framing attack; refuse both.
    if (length || header.value.empty() || header.value.size() > 9 ||
        !std::all_of(header.value.begin(), header.value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return fail(HttpParseError::kBadContentLength);
    }
    std::size_t value = 0;
    for (char c : header.value) value = value * 10 + static_cast<std::size_t>(c - '0');
    length = value;
  }
  if (length.value_or(0) > kHttpBodyBytesMax) return fail(HttpParseError::kBodyTooLarge);
  return length.value_or(0);
}

}  // namespace

std::string_view to_string(HttpParseError error) {
  switch (error) {
    case HttpParseError::kHeadTooLarge:
      return "head_too_large";
    case HttpParseError::kBadLineEnding:
      return "bad_line_ending";
    case HttpParseError::kBadRequestLine:
      return "bad_request_line";
    case HttpParseError::kBadMethod:
      return "bad_method";
    case HttpParseError::kBadTarget:
      return "bad_target";
    case HttpParseError::kBadVersion:
      return "bad_version";
    case HttpParseError::kBadHeader:
      return "bad_header";
    case HttpParseError::kObsoleteLineFolding:
      return "obsolete_line_folding";
    case HttpParseError::kTooManyHeaders:
      return "too_many_headers";
    case HttpParseError::kBadContentLength:
      return "bad_content_length";
    case HttpParseError::kBodyTooLarge:
      return "body_too_large";
    case HttpParseError::kTransferEncoding:
      return "transfer_encoding";
  }
  return "unknown";
}

std::optional<std::string_view> HttpRequest::header(std::string_view name) const {
  for (std::size_t i = 0; i < header_count; ++i) {
    if (equal_ignoring_case(headers[i].name, name)) return headers[i].value;
  }
  return std::nullopt;
}

Result<std::optional<HttpParsed>, HttpParseError> parse_http_request(Bytes buffer) {
  const std::string_view text = as_chars(buffer);
  auto head_end = find_head_end(text);
  if (!head_end) return fail(head_end.error());
  if (!*head_end) return std::optional<HttpParsed>{};
  HttpParsed parsed;
  HttpRequest& request = parsed.request;
  std::string_view head = text.substr(0, **head_end - 2);  // Each line below ends in CRLF.
  std::size_t line_end = head.find("\r\n");
  if (auto line = parse_request_line(head.substr(0, line_end), request); !line) return fail(line.error());
  head.remove_prefix(line_end + 2);
  while (!head.empty()) {
    line_end = head.find("\r\n");
    if (auto header = parse_header_line(head.substr(0, line_end), request); !header)
      return fail(header.error());
    head.remove_prefix(line_end + 2);
  }
  auto length = content_length(request);
  if (!length) return fail(length.error());
  if (text.size() - **head_end < *length) return std::optional<HttpParsed>{};
  request.body = text.substr(**head_end, *length);
  parsed.consumed = **head_end + *length;
  return std::optional<HttpParsed>{parsed};
}

}  // namespace rw::io
