// parse_proc_stat, read_proc_stat (proc_stat.h).
#include "io/proc_stat.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <string>

namespace rw::io {

std::optional<ProcStat> parse_proc_stat(std::string_view line) {
  const std::size_t close = line.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  line.remove_prefix(close + 1);
  ProcStat stat;
  std::uint64_t utime = 0;
  // Fields from 3 (state) on, separated by single spaces.
  int index = 2;
  while (index < 15) {
    const std::size_t start = line.find_first_not_of(' ');
    if (start == std::string_view::npos) return std::nullopt;
    line.remove_prefix(start);
    const std::size_t end = std::min(line.find(' '), line.size());
    const std::string_view field = line.substr(0, end);
    line.remove_prefix(end);
    ++index;
    if (index != 4 && index != 14 && index != 15) continue;
    std::uint64_t value = 0;
    const auto [rest, error] = std::from_chars(field.data(), field.data() + field.size(), value);
    if (error != std::errc{} || rest != field.data() + field.size()) return std::nullopt;
    if (index == 4) stat.parent_pid = static_cast<int>(value);
    if (index == 14) utime = value;
    if (index == 15) stat.cpu_ticks = utime + value;
  }
  return stat;
}

std::optional<ProcStat> read_proc_stat(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  return parse_proc_stat(line);
}

}  // namespace rw::io
