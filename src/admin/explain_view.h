// `radiusward ctl explain` for people (docs/operations.md "Explain log"):
// one trace of GET /explain/traces as a block of lines, the request on the
// first, one step a line, the outcome last. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"

namespace rw::admin {

struct ExplainView {
  std::string text{};          // The block, ending in a newline.
  std::uint64_t sequence = 0;  // The trace's place in the gateway's ring.
};

// Errors, as sentences: the line is not a JSON object with a numeric
// "sequence" and a "steps" array. Texts from the gateway (which come from
// NAS data) are printed with control characters escaped.
[[nodiscard]] Result<ExplainView, std::string> view_trace(std::string_view line);

}  // namespace rw::admin
