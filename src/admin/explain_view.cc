// view_trace: a /explain/traces line as lines for a terminal.
#include "admin/explain_view.h"

#include <nlohmann/json.hpp>

#include "admin/text_table.h"

namespace rw::admin {
namespace {

std::string text_at(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end()) return "-";
  return printable(it->is_string() ? it->get<std::string>() : it->dump());
}

}  // namespace

Result<ExplainView, std::string> view_trace(std::string_view line) {
  const nlohmann::json trace = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!trace.is_object()) return fail(std::string("a trace is not a JSON object"));
  const auto sequence = trace.find("sequence");
  const auto steps = trace.find("steps");
  if (sequence == trace.end() || !sequence->is_number_unsigned()) {
    return fail(std::string("a trace has no numeric \"sequence\""));
  }
  if (steps == trace.end() || !steps->is_array()) return fail(std::string("a trace has no \"steps\" array"));
  ExplainView view;
  view.sequence = sequence->get<std::uint64_t>();
  const auto when = trace.find("unix_ms");
  view.text = (when != trace.end() && when->is_number_integer() ? utc_text(when->get<std::int64_t>()) : "-") +
              " #" + std::to_string(view.sequence) + " " + text_at(trace, "request") + " from " +
              text_at(trace, "from") + " client " + text_at(trace, "client") + " user \"" +
              text_at(trace, "user") + "\"\n";
  for (const nlohmann::json& step : *steps) {
    view.text += "    " + printable(step.is_string() ? step.get<std::string>() : step.dump(), 1000) + "\n";
  }
  view.text += "  => " + text_at(trace, "outcome") + "\n";
  return view;
}

}  // namespace rw::admin
