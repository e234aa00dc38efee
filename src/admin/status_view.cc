// The /status table and health verdict (status_view.h).
#include "admin/status_view.h"

#include <utility>

#include "admin/json_text.h"
#include "admin/text_table.h"

namespace rw::admin {
namespace {

using Rows = std::vector<KeyValue>;

// The rows of a table and the verdict, before the health line is added.
struct Parts {
  Rows rows;
  Health health;
};

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const std::string& part : parts) {
    if (!out.empty()) out += separator;
    out += part;
  }
  return out;
}

std::string duration_text(const Json& seconds_value) {
  const std::optional<std::int64_t> seconds = integer_of(seconds_value);
  if (!seconds || *seconds < 0) return text_of(seconds_value);
  const std::int64_t s = *seconds;
  std::string out;
  if (s >= 86400) out += std::to_string(s / 86400) + " d ";
  if (s >= 3600) out += std::to_string(s / 3600 % 24) + " h ";
  if (s >= 60) out += std::to_string(s / 60 % 60) + " min ";
  return out + std::to_string(s % 60) + " s";
}

std::string leader_text(const Json& leader) {
  if (leader.is_null()) return "none known";
  std::string out =
      "member " + text_of(member(leader, "id")) + ", raft " + text_of(member(leader, "address"));
  return out + ", submission " + text_of(member(leader, "submission"));
}

// The exporter's rows (docs/operations.md "Export to SQL") and its problems.
void add_export(const Json& exporter, Rows& rows, Health& health) {
  std::vector<std::string> state{text_of(member(exporter, "database"))};
  state.push_back(member(exporter, "active") == true ? "active" : "inactive (not the ready leader)");
  state.push_back(member(exporter, "connected") == true ? "connected" : "not connected");
  rows.push_back({0, "export", join(state, ", ")});
  rows.push_back({1, "exported to", text_of(member(exporter, "exported_through"))});
  rows.push_back({1, "lag",
                  text_of(member(exporter, "lag_records")) + " records, " +
                      text_of(member(exporter, "lag_seconds")) + " s"});
  rows.push_back({1, "exported",
                  text_of(member(exporter, "records_exported")) + " records in " +
                      text_of(member(exporter, "batches")) + " batches"});
  rows.push_back({1, "quarantined", text_of(member(exporter, "records_quarantined"))});
  rows.push_back({1, "resent", text_of(member(exporter, "records_resent"))});
  rows.push_back({1, "failures", text_of(member(exporter, "failures"))});
  const std::optional<std::string> last_error = string_of(member(exporter, "last_error"));
  if (last_error && !last_error->empty()) rows.push_back({1, "last error", printable(*last_error)});
  const Json& alarm = member(exporter, "cursor_alarm");
  if (alarm.is_null()) {
    rows.push_back({1, "cursor alarm", "none"});
    return;
  }
  const std::string text = "the database's cursor " + text_of(member(alarm, "database_cursor")) +
                           " is below the cluster's " + text_of(member(alarm, "ledger_exported_through"));
  rows.push_back({1, "cursor alarm", "RAISED: " + text});
  health.problems.push_back("export cursor alarm: " + text + " (docs/operations.md \"Export cursor alarm\")");
}

Result<Parts, std::string> view_member(const Json& status) {
  const std::optional<std::string> raft_role = string_of(member(status, "raft_role"));
  if (!raft_role) return fail(std::string("the member's /status has no \"raft_role\" text"));
  const Json& leader = member(status, "leader");
  if (!leader.is_null() && !leader.is_object()) {
    return fail(std::string("the member's /status has a \"leader\" that is neither an object nor null"));
  }
  Rows rows;
  Health health;
  bool transient = true;
  const auto problem = [&](std::string text, bool clears_by_itself) {
    health.problems.push_back(std::move(text));
    transient = transient && clears_by_itself;
  };
  const bool ready = member(status, "ready_for_work") == true;
  rows.push_back({0, "role", "member " + text_of(member(status, "id"))});
  rows.push_back({0, "raft role", printable(*raft_role) + (ready ? ", ready for work" : "")});
  rows.push_back({0, "leader", leader_text(leader)});
  rows.push_back({0, "term", text_of(member(status, "term"))});
  rows.push_back({0, "commit index", text_of(member(status, "commit_index"))});
  rows.push_back({0, "applied index", text_of(member(status, "applied_index"))});
  rows.push_back({0, "pending submits", text_of(member(status, "pending_submissions"))});
  rows.push_back({0, "sessions", text_of(member(status, "sessions"))});
  rows.push_back(
      {0, "held records",
       text_of(member(status, "records_held")) + " (" + text_of(member(status, "held_bytes")) + " bytes)"});
  const bool accepting = member(status, "accepting") != false;
  rows.push_back({0, "accepting", accepting ? "yes" : "NO: the held records reached their bound"});
  const std::optional<std::int64_t> clock = integer_of(member(status, "log_clock_unix_ms"));
  rows.push_back(
      {0, "log clock", clock ? utc_text(*clock) + " UTC" : text_of(member(status, "log_clock_unix_ms"))});
  if (*raft_role == "unavailable") problem("raft unavailable", false);
  if (const Json& storage = member(status, "storage_error"); !storage.is_null()) {
    rows.push_back({0, "storage error", text_of(storage)});
    problem("storage error: " + text_of(storage), false);
  }
  if (leader.is_null() && *raft_role != "unavailable") problem("no leader known", true);
  if (*raft_role == "leader" && !ready) problem("leader not ready for work yet", true);
  if (!accepting) problem("not accepting submissions: the held records reached their bound", false);
  if (const Json& exporter = member(status, "export"); exporter.is_object()) {
    const std::size_t before = health.problems.size();
    add_export(exporter, rows, health);
    if (health.problems.size() > before) transient = false;
  }
  health.transient = !health.healthy() && transient;
  return Parts{std::move(rows), std::move(health)};
}

Result<Parts, std::string> view_gateway(const Json& status) {
  const Json& submission = member(status, "submission");
  if (!submission.is_null() && !submission.is_object()) {
    return fail(std::string("the gateway's /status has a \"submission\" that is neither an object nor null"));
  }
  Rows rows;
  Health health;
  rows.push_back({0, "role", "gateway"});
  rows.push_back({0, "uptime", duration_text(member(status, "uptime_s"))});
  if (submission.is_null()) {
    rows.push_back(
        {0, "submission", "none: no accounting section (Accounting-Requests are dropped unanswered)"});
    return Parts{std::move(rows), std::move(health)};
  }
  const std::optional<std::string> state = string_of(member(submission, "state"));
  if (!state) return fail(std::string("the gateway's /status has no \"submission.state\" text"));
  const std::string address = text_of(member(submission, "address"));
  rows.push_back(
      {0, "submission", printable(*state) + (*state == "ready" ? ", connected to " : ", next: ") + address});
  // The oldest pending record's wait: absent from a gateway built before
  // /status showed it (then the line is as it was).
  const Json& oldest = member(submission, "oldest_pending_ms");
  rows.push_back({1, "pending",
                  text_of(member(submission, "pending_records")) + " records, " +
                      text_of(member(submission, "pending_bytes")) + " bytes" +
                      (oldest.is_number() ? ", the oldest waiting " + text_of(oldest) + " ms" : "")});
  rows.push_back({1, "queued", text_of(member(submission, "queued_records")) + " records"});
  rows.push_back({1, "in flight",
                  text_of(member(submission, "in_flight_batches")) + " batches, " +
                      text_of(member(submission, "in_flight_records")) + " records"});
  const Json& counters = member(submission, "counters");
  if (counters.is_object() && !counters.empty()) {
    rows.push_back({1, "counters", ""});
    for (const auto& [name, value] : counters.items())
      rows.push_back({2, printable(name, 64), text_of(value)});
  }
  if (*state != "ready") {
    health.problems.push_back("submission " + printable(*state) + ": not connected to the leader (" +
                              address + ")");
    health.transient = true;
  }
  return Parts{std::move(rows), std::move(health)};
}

}  // namespace

Result<StatusView, std::string> view_status(std::string_view body) {
  const Json status = parse_json(body);
  if (!status.is_object()) return fail(std::string("the /status answer is not a JSON object"));
  const std::optional<std::string> role = string_of(member(status, "role"));
  Result<Parts, std::string> parts =
      fail(std::string("the /status answer has no \"role\" of gateway or member"));
  if (role == "member") parts = view_member(status);
  if (role == "gateway") parts = view_gateway(status);
  if (!parts) return fail(std::move(parts.error()));
  const Health& health = parts->health;
  parts->rows.push_back({0, "health", health.healthy() ? "ok" : "UNHEALTHY: " + join(health.problems, "; ")});
  return StatusView{render_key_values(parts->rows), std::move(parts->health)};
}

}  // namespace rw::admin
