// Plain-text tables for `radiusward ctl` (docs/admin_api.md "radiusward
// ctl"): aligned key/value lists and column tables, with every text from an
// answer made safe to print on a terminal. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rw::admin {

// One line of a key/value list; `depth` indents it under the line above.
// A row with an empty value is a heading.
struct KeyValue {
  int depth = 0;
  std::string key{};
  std::string value{};
};

// The rows with every value starting in the same column, one line each.
[[nodiscard]] std::string render_key_values(const std::vector<KeyValue>& rows);

// A table with a header line and its columns padded to their widest cell;
// the columns in `right_aligned` (indices) are aligned right (numbers).
[[nodiscard]] std::string render_columns(const std::vector<std::string>& header,
                                         const std::vector<std::vector<std::string>>& rows,
                                         const std::vector<std::size_t>& right_aligned = {});

// `text` with control bytes (C0, DEL) shown as '?', so that an answer cannot
// move the cursor or change the terminal, cut to `bytes_max` bytes with "..."
// when longer.
[[nodiscard]] std::string printable(std::string_view text, std::size_t bytes_max = 200);

// Unix milliseconds as UTC "2026-11-30 01:07:03"; "-" outside years 1..9999.
[[nodiscard]] std::string utc_text(std::int64_t unix_ms);

}  // namespace rw::admin
