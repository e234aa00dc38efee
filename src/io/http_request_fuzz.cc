// libFuzzer target for the admin API's HTTP request parser. Properties:
// never crashes; a parsed request's views lie inside the input and its
// consumed count does not exceed it; the request one byte shorter is never
// complete. Corpus: tests/corpus/http_request_fuzz/.
#include <cstddef>
#include <cstdint>

#include "io/http_request.h"

namespace {

using namespace rw;
using namespace rw::io;

bool inside(std::string_view view, std::string_view whole) {
  return view.empty() ||
         (view.data() >= whole.data() && view.data() + view.size() <= whole.data() + whole.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes input(data, size);
  auto parsed = parse_http_request(input);
  if (!parsed || !*parsed) return 0;
  const HttpParsed& result = **parsed;
  const std::string_view whole = as_chars(input);
  if (result.consumed > size) __builtin_trap();
  const HttpRequest& request = result.request;
  for (std::string_view view : {request.method, request.target, request.path, request.query, request.body}) {
    if (!inside(view, whole)) __builtin_trap();
  }
  for (std::size_t i = 0; i < request.header_count; ++i) {
    if (!inside(request.headers[i].name, whole) || !inside(request.headers[i].value, whole)) __builtin_trap();
  }
  // One byte short of the request must never parse as a complete request.
  if (result.consumed > 0) {
    auto shorter = parse_http_request(input.first(result.consumed - 1));
    if (shorter && *shorter) __builtin_trap();
  }
  return 0;
}
