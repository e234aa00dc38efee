// Helpers for the admin API's common endpoints (docs/admin_api.md): the
// Prometheus text exposition format 0.0.4 for /metrics, /version, and JSON
// and newline-delimited JSON answers.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/admin_server.h"
#include "io/metric_histogram.h"

namespace rw::io {

inline constexpr std::string_view kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";
inline constexpr std::string_view kNdjsonContentType = "application/x-ndjson";

// Label pairs of one sample, in the order given.
using MetricLabels = std::vector<std::pair<std::string_view, std::string_view>>;

// Builds a Prometheus text page. The # HELP and # TYPE lines of a family
// are written before its first sample; samples of one family must be added
// together. Names must match [a-zA-Z_:][a-zA-Z0-9_:]* (asserted: they are
// written in code, never taken from input); label values are escaped.
class PrometheusText {
 public:
  void counter(std::string_view name, std::string_view help, std::uint64_t value,
               const MetricLabels& labels = {});
  void gauge(std::string_view name, std::string_view help, std::int64_t value,
             const MetricLabels& labels = {});
  // A histogram family `name`: cumulative name_bucket{le="..."} samples up
  // to le="+Inf", then name_sum and name_count. Bounds and the sum are
  // divided by `scale` (1e6 turns microseconds into the seconds Prometheus
  // expects; 1 keeps counts as they are).
  void histogram(std::string_view name, std::string_view help, const HistogramSnapshot& snapshot,
                 double scale = 1, const MetricLabels& labels = {});
  [[nodiscard]] const std::string& text() const { return text_; }

 private:
  void sample(std::string_view name, std::string_view help, std::string_view type, std::string_view value,
              const MetricLabels& labels);
  void describe(std::string_view name, std::string_view help, std::string_view type);
  void append_sample(std::string_view name, std::string_view value, const MetricLabels& labels);

  std::string text_;
  std::set<std::string, std::less<>> described_;
};

// Adds GET /version: {"name": "radiusward", "version": `version`, "role": `role`}.
void add_version_route(AdminServer& server, std::string version, std::string role);

// The process's resident memory in bytes, from /proc/self/statm; nothing
// when it cannot be read.
[[nodiscard]] std::optional<std::uint64_t> resident_memory_bytes();

// The heap's figures (heap_figures()) as the gauge family `name` with a
// `kind` label: in_use, free, mapped, arena (docs/admin_api.md).
void add_heap_metrics(PrometheusText& page, std::string_view name);

// Adds GET /metrics: `collect` fills the page on the admin thread (so it
// must only read thread-safe state), then the admin server's own counters
// and the process's resident memory are appended.
void add_metrics_route(AdminServer& server, std::function<void(PrometheusText&)> collect);

// A 200 answer of newline-delimited JSON: one object per line, each line
// ending in '\n' (the /records format).
[[nodiscard]] AdminResponse ndjson_response(std::string lines);

}  // namespace rw::io
