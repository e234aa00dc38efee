// /metrics and /version plumbing for the admin API (admin_metrics.h).
#include "io/admin_metrics.h"

#include <unistd.h>

#include <array>
#include <charconv>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/assert.h"
#include "base/utf8.h"
#include "io/heap.h"

namespace rw::io {
namespace {

bool valid_name(std::string_view name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

// Exposition format: label values are UTF-8, with backslash, double quote
// and line feed escaped. A value that is not well-formed UTF-8 (operator
// text such as a shortname) has each bad byte replaced by U+FFFD: Prometheus
// refuses a whole scrape over one invalid label value.
void append_label_value(std::string& out, std::string_view value) {
  for (char c : well_formed_utf8(value)) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

// A float as the exposition format reads it: the shortest fixed-point text
// that reads back the same ("0.0005", "2.5", "4096"). Values here are at
// most 2^64 divided by a positive scale, so 64 bytes always suffice.
std::string number_text(double value) {
  char text[64];
  const auto [end, error] = std::to_chars(text, text + sizeof(text), value, std::chars_format::fixed);
  RW_ASSERT(error == std::errc());
  return std::string(text, end);
}

}  // namespace

void PrometheusText::describe(std::string_view name, std::string_view help, std::string_view type) {
  RW_ASSERT(valid_name(name));
  if (described_.find(name) != described_.end()) return;
  described_.emplace(name);
  text_ += "# HELP ";
  text_ += name;
  text_ += ' ';
  // Help text escapes backslash and line feed.
  for (char c : help)
    text_ += c == '\n' ? std::string("\\n") : c == '\\' ? std::string("\\\\") : std::string(1, c);
  text_ += "\n# TYPE ";
  text_ += name;
  text_ += ' ';
  text_ += type;
  text_ += '\n';
}

void PrometheusText::append_sample(std::string_view name, std::string_view value,
                                   const MetricLabels& labels) {
  RW_ASSERT(valid_name(name));
  text_ += name;
  if (!labels.empty()) {
    text_ += '{';
    for (std::size_t i = 0; i < labels.size(); ++i) {
      RW_ASSERT(valid_name(labels[i].first));
      if (i > 0) text_ += ',';
      text_ += labels[i].first;
      text_ += "=\"";
      append_label_value(text_, labels[i].second);
      text_ += '"';
    }
    text_ += '}';
  }
  text_ += ' ';
  text_ += value;
  text_ += '\n';
}

void PrometheusText::sample(std::string_view name, std::string_view help, std::string_view type,
                            std::string_view value, const MetricLabels& labels) {
  describe(name, help, type);
  append_sample(name, value, labels);
}

void PrometheusText::histogram(std::string_view name, std::string_view help,
                               const HistogramSnapshot& snapshot, double scale, const MetricLabels& labels) {
  RW_ASSERT(scale > 0 && snapshot.buckets.size() == snapshot.bounds.size() + 1);
  describe(name, help, "histogram");
  const std::string base(name);
  MetricLabels with_le = labels;
  with_le.emplace_back("le", "");
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < snapshot.buckets.size(); ++i) {
    cumulative += snapshot.buckets[i];
    const std::string le =
        i < snapshot.bounds.size() ? number_text(static_cast<double>(snapshot.bounds[i]) / scale) : "+Inf";
    with_le.back().second = le;
    append_sample(base + "_bucket", std::to_string(cumulative), with_le);
  }
  append_sample(base + "_sum", number_text(static_cast<double>(snapshot.sum) / scale), labels);
  append_sample(base + "_count", std::to_string(cumulative), labels);
}

void PrometheusText::counter(std::string_view name, std::string_view help, std::uint64_t value,
                             const MetricLabels& labels) {
  sample(name, help, "counter", std::to_string(value), labels);
}

void PrometheusText::gauge(std::string_view name, std::string_view help, std::int64_t value,
                           const MetricLabels& labels) {
  sample(name, help, "gauge", std::to_string(value), labels);
}

void add_version_route(AdminServer& server, std::string version, std::string role) {
  nlohmann::json body{{"name", "radiusward"}, {"version", std::move(version)}, {"role", std::move(role)}};
  std::string text = body.dump() + "\n";
  server.route("GET", "/version", [text](const AdminRequest&) {
    return AdminResponse{200, "application/json", text};
  });
}

void add_metrics_route(AdminServer& server, std::function<void(PrometheusText&)> collect) {
  server.route("GET", "/metrics", [&server, collect = std::move(collect)](const AdminRequest&) {
    PrometheusText page;
    if (collect) collect(page);
    page.counter("radiusward_admin_requests_total", "Admin API requests, by outcome.", server.served(),
                 {{"outcome", "answered"}});
    page.counter("radiusward_admin_requests_total", "Admin API requests, by outcome.", server.refused(),
                 {{"outcome", "refused"}});
    // The name client libraries use, so that existing dashboards find it.
    if (std::optional<std::uint64_t> resident = resident_memory_bytes()) {
      page.gauge("process_resident_memory_bytes", "Resident memory size in bytes.",
                 static_cast<std::int64_t>(*resident));
    }
    return AdminResponse{200, std::string(kPrometheusContentType), page.text()};
  });
}

std::optional<std::uint64_t> resident_memory_bytes() {
  // statm: "size resident shared text lib data dt", in pages (proc(5)).
  std::FILE* file = std::fopen("/proc/self/statm", "r");
  if (file == nullptr) return std::nullopt;
  unsigned long long size = 0;
  unsigned long long resident = 0;
  const int read = std::fscanf(file, "%llu %llu", &size, &resident);
  std::fclose(file);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (read != 2 || page <= 0) return std::nullopt;
  return static_cast<std::uint64_t>(resident) * static_cast<std::uint64_t>(page);
}

AdminResponse ndjson_response(std::string lines) {
  return AdminResponse{200, std::string(kNdjsonContentType), std::move(lines)};
}

void add_heap_metrics(PrometheusText& page, std::string_view name) {
  const HeapFigures heap = heap_figures();
  const std::array<std::pair<std::string_view, std::uint64_t>, 4> heap_bytes = {
      {{"in_use", heap.in_use_bytes},
       {"free", heap.free_bytes},
       {"mapped", heap.mapped_bytes},
       {"arena", heap.arena_bytes}}};
  for (const auto& [kind, bytes] : heap_bytes) {
    page.gauge(name,
               "glibc malloc: bytes in use (mapped included), free in the arenas, in their own mappings, "
               "and of the arenas.",
               static_cast<std::int64_t>(bytes), {{"kind", kind}});
  }
}

}  // namespace rw::io
