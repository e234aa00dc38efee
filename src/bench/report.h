// The JSON model of bench output (docs/benchmarking.md "Output"): one step,
// a whole ceiling search, and the sparse form of a latency histogram that
// generator processes hand to their parent. Pure; nlohmann-json's
// exceptions are caught here and turned into nothing (docs/style.md §5).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/ceiling.h"
#include "bench/histogram.h"

namespace rw::bench {

// CPU and memory of one process under test during one step, from /proc.
struct ProcessUsage {
  int pid = 0;
  std::string name;
  double cpu_avg_percent = 0;  // Over the whole step; 100 = one core.
  double cpu_max_percent = 0;  // Highest over one sampling interval.
  std::uint64_t rss_peak_kib = 0;
  int samples = 0;
};

// One step as reported: what was measured, the verdict, the processes.
struct StepRecord {
  StepResult result;
  StepVerdict verdict;
  std::vector<ProcessUsage> processes;
  std::vector<std::pair<std::string, std::uint64_t>> invalid_by_reason;
};

[[nodiscard]] nlohmann::json to_json(const StepResult& result);
[[nodiscard]] nlohmann::json to_json(const ProcessUsage& usage);
[[nodiscard]] nlohmann::json to_json(const StepRecord& step);
[[nodiscard]] nlohmann::json to_json(const Ceiling& ceiling);

// Reads what to_json(StepResult) wrote; nothing when a field is missing
// or of the wrong type.
[[nodiscard]] std::optional<StepResult> step_result_from_json(const nlohmann::json& json);

// [[bucket, count], ...] for non-empty buckets, and the exact max.
[[nodiscard]] nlohmann::json histogram_to_json(const LatencyHistogram& histogram);
[[nodiscard]] std::optional<LatencyHistogram> histogram_from_json(const nlohmann::json& json);

// The ceiling as the report prints it: "12,000/s" or "≥ 64,000/s".
[[nodiscard]] std::string format_ceiling(const Ceiling& ceiling);

}  // namespace rw::bench
