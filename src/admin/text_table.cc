// Plain-text tables (text_table.h).
#include "admin/text_table.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace rw::admin {

std::string render_key_values(const std::vector<KeyValue>& rows) {
  std::size_t width = 0;
  for (const KeyValue& row : rows) {
    if (!row.value.empty()) width = std::max(width, 2 * static_cast<std::size_t>(row.depth) + row.key.size());
  }
  std::string out;
  for (const KeyValue& row : rows) {
    std::string line(2 * static_cast<std::size_t>(row.depth), ' ');
    line += row.key;
    if (!row.value.empty()) {
      line.resize(width + 2, ' ');
      line += row.value;
    }
    out += line + "\n";
  }
  return out;
}

std::string render_columns(const std::vector<std::string>& header,
                           const std::vector<std::vector<std::string>>& rows,
                           const std::vector<std::size_t>& right_aligned) {
  std::vector<std::size_t> widths(header.size(), 0);
  const auto measure = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size() && i < widths.size(); ++i)
      widths[i] = std::max(widths[i], cells[i].size());
  };
  measure(header);
  for (const auto& row : rows) measure(row);
  const auto line_of = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t i = 0; i < widths.size(); ++i) {
      const std::string cell = i < cells.size() ? cells[i] : std::string();
      const std::string padding(widths[i] - cell.size(), ' ');
      const bool right = std::find(right_aligned.begin(), right_aligned.end(), i) != right_aligned.end();
      if (i > 0) line += "  ";
      line += right ? padding + cell : cell + padding;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
  };
  std::string out = line_of(header);
  for (const auto& row : rows) out += line_of(row);
  return out;
}

std::string printable(std::string_view text, std::size_t bytes_max) {
  std::string out;
  for (const char c : text.substr(0, std::min(text.size(), bytes_max))) {
    const auto byte = static_cast<unsigned char>(c);
    out += byte < 0x20 || byte == 0x7f ? '?' : c;
  }
  if (text.size() > bytes_max) out += "...";
  return out;
}

std::string utc_text(std::int64_t unix_ms) {
  // Years 1..9999: what the format holds, and what gmtime_r takes everywhere.
  constexpr std::int64_t kFirst = -62135596800;  // 0001-01-01T00:00:00Z
  constexpr std::int64_t kLast = 253402300799;   // 9999-12-31T23:59:59Z
  const std::int64_t seconds = unix_ms / 1000 - (unix_ms % 1000 < 0 ? 1 : 0);
  if (seconds < kFirst || seconds > kLast) return "-";
  const auto when = static_cast<std::time_t>(seconds);
  std::tm parts{};
  if (::gmtime_r(&when, &parts) == nullptr) return "-";
  char text[80];  // Room for any int the format could be given.
  std::snprintf(text, sizeof text, "%04d-%02d-%02d %02d:%02d:%02d", parts.tm_year + 1900, parts.tm_mon + 1,
                parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec);
  return text;
}

}  // namespace rw::admin
