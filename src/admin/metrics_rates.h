// `radiusward ctl top` (docs/admin_api.md "radiusward ctl"): two /metrics
// pages taken some seconds apart become per-second rates of the counters
// that tell how a gateway or member is doing (requests answered and dropped,
// records committed and exported) next to their totals. Pure: pages and the
// time between them in, a table out.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

namespace rw::admin {

// One line of a Prometheus text page (format 0.0.4).
struct MetricSample {
  std::string name{};
  std::vector<std::pair<std::string, std::string>> labels{};
  double value = 0;
};

// The samples of a page. Comment lines are skipped and so is a line that
// does not parse (a name, optional {labels}, a number); error when no line
// parses, so that an answer that is not a metrics page is said to be one.
[[nodiscard]] Result<std::vector<MetricSample>, std::string> parse_metrics(std::string_view page);

// The table of rates between `before` and `after`, `seconds` apart
// (Requires: seconds > 0). Rows whose metric `after` lacks are left out, so
// one list serves gateways and members; a counter that went down (the
// process restarted) shows "restarted" instead of a rate.
[[nodiscard]] std::string render_rates(const std::vector<MetricSample>& before,
                                       const std::vector<MetricSample>& after, double seconds);

}  // namespace rw::admin
