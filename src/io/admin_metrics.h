// Helpers for the admin API's common endpoints (docs/admin_api.md): the
// Prometheus text exposition format 0.0.4 for /metrics, /version, and JSON
// and newline-delimited JSON answers.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/admin_server.h"

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
  [[nodiscard]] const std::string& text() const { return text_; }

 private:
  void sample(std::string_view name, std::string_view help, std::string_view type, std::string_view value,
              const MetricLabels& labels);

  std::string text_;
  std::set<std::string, std::less<>> described_;
};

// Adds GET /version: {"name": "radiusward", "version": `version`, "role": `role`}.
void add_version_route(AdminServer& server, std::string version, std::string role);

// Adds GET /metrics: `collect` fills the page on the admin thread (so it
// must only read thread-safe state), then the admin server's own counters
// are appended.
void add_metrics_route(AdminServer& server, std::function<void(PrometheusText&)> collect);

// A 200 answer of newline-delimited JSON: one object per line, each line
// ending in '\n' (the /records format).
[[nodiscard]] AdminResponse ndjson_response(std::string lines);

}  // namespace rw::io
