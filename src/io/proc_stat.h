// One process's line of /proc/PID/stat (proc(5)): what the bench's samplers
// read of it. Shared by the load generator's process sampler
// (src/loadgen_shell/bench_process_sampler.cc) and the export sink
// benchmark's count of PostgreSQL's CPU (src/member_shell/sql_export_sink_bench.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace rw::io {

struct ProcStat {
  int parent_pid = 0;           // field 4
  std::uint64_t cpu_ticks = 0;  // utime + stime, fields 14 and 15, in clock ticks (sysconf(_SC_CLK_TCK))
};

// Parses a /proc/PID/stat line. The command (field 2) is parenthesised and
// may itself hold spaces or parentheses, so fields are counted from the
// last ')'. nullopt when the line is cut short or a field is not a number.
[[nodiscard]] std::optional<ProcStat> parse_proc_stat(std::string_view line);

// The stat line of process `pid` parsed; nullopt when it is gone.
[[nodiscard]] std::optional<ProcStat> read_proc_stat(int pid);

}  // namespace rw::io
