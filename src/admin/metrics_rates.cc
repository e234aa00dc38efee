// Rates from /metrics pages (metrics_rates.h).
#include "admin/metrics_rates.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>

#include "admin/text_table.h"

namespace rw::admin {
namespace {

bool is_name_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
         (!first && c >= '0' && c <= '9');
}

// Reads `key="value",...}` from `line` at `at` (just past '{'); moves `at` past '}'.
std::optional<std::vector<std::pair<std::string, std::string>>> parse_labels(std::string_view line,
                                                                             std::size_t& at) {
  std::vector<std::pair<std::string, std::string>> labels;
  while (at < line.size() && line[at] != '}') {
    const std::size_t key_start = at;
    while (at < line.size() && is_name_char(line[at], at == key_start)) ++at;
    if (at == key_start || at + 1 >= line.size() || line[at] != '=' || line[at + 1] != '"')
      return std::nullopt;
    std::string key(line.substr(key_start, at - key_start));
    std::string value;
    for (at += 2; at < line.size() && line[at] != '"'; ++at) {
      if (line[at] == '\\' && at + 1 < line.size()) {
        ++at;
        value += line[at] == 'n' ? '\n' : line[at];
      } else {
        value += line[at];
      }
    }
    if (at >= line.size()) return std::nullopt;
    ++at;  // The closing quote.
    labels.emplace_back(std::move(key), std::move(value));
    if (at < line.size() && line[at] == ',') ++at;
  }
  if (at >= line.size()) return std::nullopt;
  ++at;  // '}'
  return labels;
}

std::optional<MetricSample> parse_line(std::string_view line) {
  std::size_t at = 0;
  while (at < line.size() && is_name_char(line[at], at == 0)) ++at;
  if (at == 0) return std::nullopt;
  MetricSample sample{.name = std::string(line.substr(0, at))};
  if (at < line.size() && line[at] == '{') {
    ++at;
    auto labels = parse_labels(line, at);
    if (!labels) return std::nullopt;
    sample.labels = std::move(*labels);
  }
  if (at >= line.size() || line[at] != ' ') return std::nullopt;
  const std::string_view rest = line.substr(at + 1);
  const std::string number(rest.substr(0, rest.find(' ')));  // A timestamp may follow.
  if (number.empty()) return std::nullopt;
  char* end = nullptr;
  sample.value = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size()) return std::nullopt;
  return sample;
}

// What one row of the table shows.
enum class Show {
  kRate,         // the per-second change and the total
  kRateByLabel,  // the same, then one line per value of `by` that changed
  kGauge,        // the current value only
};

struct TopRow {
  std::string_view title;
  std::string_view metric;
  std::string_view label = {};  // "key=value": only samples with it; empty: every sample, summed.
  Show show = Show::kRate;
  std::string_view by = {};  // With kRateByLabel: the label to break down by.
};

// docs/admin_api.md "/metrics" names every metric below.
constexpr TopRow kRows[] = {
    {"Access-Accepts", "radiusward_gateway_requests_total", "outcome=accept"},
    {"Access-Rejects", "radiusward_gateway_rejects_total", {}, Show::kRateByLabel, "reason"},
    {"Accounting-Requests submitted", "radiusward_gateway_accounting_total", "event=submitted"},
    {"Accounting-Responses", "radiusward_gateway_accounting_total", "event=answered"},
    {"Accounting-Requests expired", "radiusward_gateway_accounting_total", "event=expired"},
    {"datagrams dropped", "radiusward_gateway_drops_total", {}, Show::kRateByLabel, "reason"},
    {"records committed (gateway)", "radiusward_submission_events_total", "reason=records_committed"},
    {"Busy answers (gateway)", "radiusward_submission_events_total", "reason=busy"},
    {"pending records", "radiusward_submission_pending_records", {}, Show::kGauge},
    {"connected to the leader", "radiusward_submission_connected", {}, Show::kGauge},
    {"records committed", "radiusward_member_ledger_events_total", "reason=records_applied"},
    {"duplicate records", "radiusward_member_ledger_events_total", "reason=records_duplicate"},
    {"raft entries committed", "radiusward_member_commit_index"},
    {"Submits", "radiusward_member_submission_events_total", "reason=submits"},
    {"Busy answers", "radiusward_member_submission_events_total", "reason=busy"},
    {"NotLeader answers", "radiusward_member_submission_events_total", "reason=not_leader"},
    {"records exported", "radiusward_member_export_records_total", "outcome=exported"},
    {"records quarantined", "radiusward_member_export_records_total", "outcome=quarantined"},
    {"export failures", "radiusward_member_export_failures"},
    {"held records", "radiusward_member_records_held", {}, Show::kGauge},
    {"sessions", "radiusward_member_sessions", {}, Show::kGauge},
};

bool has_label(const MetricSample& sample, std::string_view spec) {
  if (spec.empty()) return true;
  const std::size_t equals = spec.find('=');
  for (const auto& [key, value] : sample.labels) {
    if (key == spec.substr(0, equals) && value == spec.substr(equals + 1)) return true;
  }
  return false;
}

// Sums of `row`'s samples: the total, and by the value of its `by` label.
struct Sums {
  bool found = false;
  double total = 0;
  std::map<std::string, double> by_label{};
};

Sums sum(const std::vector<MetricSample>& samples, const TopRow& row) {
  Sums sums;
  for (const MetricSample& sample : samples) {
    if (sample.name != row.metric || !has_label(sample, row.label)) continue;
    sums.found = true;
    sums.total += sample.value;
    for (const auto& [key, value] : sample.labels) {
      if (!row.by.empty() && key == row.by) sums.by_label[value] += sample.value;
    }
  }
  return sums;
}

std::string number(double value, const char* format) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string rate(double before, double after, double seconds) {
  return after < before ? "restarted" : number((after - before) / seconds, "%.1f");
}

}  // namespace

Result<std::vector<MetricSample>, std::string> parse_metrics(std::string_view page) {
  std::vector<MetricSample> samples;
  while (!page.empty()) {
    const std::size_t end = page.find('\n');
    const std::string_view line = page.substr(0, end);
    page = end == std::string_view::npos ? std::string_view() : page.substr(end + 1);
    if (line.empty() || line.front() == '#') continue;
    if (auto sample = parse_line(line)) samples.push_back(std::move(*sample));
  }
  if (samples.empty())
    return fail(std::string("the /metrics answer has no sample a Prometheus text page would have"));
  return samples;
}

std::string render_rates(const std::vector<MetricSample>& before, const std::vector<MetricSample>& after,
                         double seconds) {
  std::vector<std::vector<std::string>> rows;
  for (const TopRow& row : kRows) {
    const Sums now = sum(after, row);
    if (!now.found) continue;
    if (row.show == Show::kGauge) {
      rows.push_back({std::string(row.title), "", number(now.total, "%.0f")});
      continue;
    }
    const Sums then = sum(before, row);
    rows.push_back({std::string(row.title), rate(then.total, now.total, seconds), number(now.total, "%.0f")});
    for (const auto& [value, total] : now.by_label) {
      const auto earlier = then.by_label.find(value);
      const double previous = earlier == then.by_label.end() ? 0 : earlier->second;
      if (total == previous) continue;
      rows.push_back({"  " + printable(value, 48), rate(previous, total, seconds), number(total, "%.0f")});
    }
  }
  return render_columns({"", "PER SECOND", "VALUE"}, rows, {1, 2});
}

}  // namespace rw::admin
