// /metrics and /version plumbing for the admin API (admin_metrics.h).
#include "io/admin_metrics.h"

#include <nlohmann/json.hpp>

#include "base/assert.h"

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

// Exposition format: backslash, double quote and line feed are escaped in label values.
void append_label_value(std::string& out, std::string_view value) {
  for (char c : value) {
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

}  // namespace

void PrometheusText::sample(std::string_view name, std::string_view help, std::string_view type,
                            std::string_view value, const MetricLabels& labels) {
  RW_ASSERT(valid_name(name));
  if (described_.find(name) == described_.end()) {
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
    return AdminResponse{200, std::string(kPrometheusContentType), page.text()};
  });
}

AdminResponse ndjson_response(std::string lines) {
  return AdminResponse{200, std::string(kNdjsonContentType), std::move(lines)};
}

}  // namespace rw::io
