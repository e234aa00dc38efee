// JSON conversions of bench results (report.h).
#include "bench/report.h"

#include <fmt/format.h>

namespace rw::bench {

nlohmann::json to_json(const StepResult& result) {
  return {
      {"target_rate", result.target_rate},
      {"duration_s", result.duration_s},
      {"sent", result.sent},
      {"answered", result.answered},
      {"answered_rate", result.answered_rate()},
      {"lost", result.lost},
      {"retransmissions", result.retransmissions},
      {"invalid", result.invalid},
      {"p50_us", result.p50.ns / 1000},
      {"p99_us", result.p99.ns / 1000},
      {"max_us", result.max.ns / 1000},
  };
}

nlohmann::json to_json(const ProcessUsage& usage) {
  return {{"pid", usage.pid},
          {"name", usage.name},
          {"cpu_avg_percent", usage.cpu_avg_percent},
          {"cpu_max_percent", usage.cpu_max_percent},
          {"rss_peak_kib", usage.rss_peak_kib},
          {"samples", usage.samples}};
}

nlohmann::json to_json(const StepRecord& step) {
  nlohmann::json json = to_json(step.result);
  json["passed"] = step.verdict.passed;
  json["reason"] = step.verdict.reason;
  json["processes"] = nlohmann::json::array();
  for (const ProcessUsage& usage : step.processes) json["processes"].push_back(to_json(usage));
  json["invalid_by_reason"] = nlohmann::json::object();
  for (const auto& [reason, count] : step.invalid_by_reason) json["invalid_by_reason"][reason] = count;
  return json;
}

nlohmann::json to_json(const Ceiling& ceiling) {
  return {{"rate", ceiling.rate}, {"lower_bound", ceiling.lower_bound}, {"text", format_ceiling(ceiling)}};
}

std::optional<StepResult> step_result_from_json(const nlohmann::json& json) {
  try {
    StepResult result;
    result.target_rate = json.at("target_rate").get<double>();
    result.duration_s = json.at("duration_s").get<double>();
    result.sent = json.at("sent").get<std::uint64_t>();
    result.answered = json.at("answered").get<std::uint64_t>();
    result.lost = json.at("lost").get<std::uint64_t>();
    result.retransmissions = json.at("retransmissions").get<std::uint64_t>();
    result.invalid = json.at("invalid").get<std::uint64_t>();
    result.p50 = Duration::microseconds(json.at("p50_us").get<std::int64_t>());
    result.p99 = Duration::microseconds(json.at("p99_us").get<std::int64_t>());
    result.max = Duration::microseconds(json.at("max_us").get<std::int64_t>());
    return result;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

nlohmann::json histogram_to_json(const LatencyHistogram& histogram) {
  nlohmann::json buckets = nlohmann::json::array();
  for (std::size_t i = 0; i < LatencyHistogram::kBucketCount; ++i) {
    if (histogram.bucket_count(i) != 0) buckets.push_back({i, histogram.bucket_count(i)});
  }
  return {{"buckets", buckets}, {"max_us", histogram.max().ns / 1000}};
}

std::optional<LatencyHistogram> histogram_from_json(const nlohmann::json& json) {
  try {
    LatencyHistogram histogram;
    const auto max_us = json.at("max_us").get<std::uint64_t>();
    for (const auto& pair : json.at("buckets")) {
      const auto bucket = pair.at(0).get<std::size_t>();
      if (bucket >= LatencyHistogram::kBucketCount) return std::nullopt;
      histogram.add_to_bucket(bucket, pair.at(1).get<std::uint64_t>(), max_us);
    }
    return histogram;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

std::string format_ceiling(const Ceiling& ceiling) {
  const auto rate = static_cast<std::uint64_t>(ceiling.rate);
  // Thousands separators, written from the right (the g++ 12 -Wrestrict
  // false positive rules out std::string::insert here).
  const std::string plain = fmt::format("{}", rate);
  std::string digits;
  for (std::size_t i = 0; i < plain.size(); ++i) {
    if (i != 0 && (plain.size() - i) % 3 == 0) digits.push_back(',');
    digits.push_back(plain[i]);
  }
  return fmt::format("{}{}/s", ceiling.lower_bound ? "≥ " : "", digits);
}

}  // namespace rw::bench
