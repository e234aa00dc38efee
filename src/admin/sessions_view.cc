// The /sessions table (sessions_view.h).
#include "admin/sessions_view.h"

#include <vector>

#include "admin/json_text.h"
#include "admin/text_table.h"

namespace rw::admin {
namespace {

std::string time_of(const Json& unix_ms) {
  const std::optional<std::int64_t> value = integer_of(unix_ms);
  return value ? utc_text(*value) : text_of(unix_ms);
}

// "-" for an absent text, else the text made printable and cut to 40 bytes.
std::string cell(std::string_view text) { return text.empty() ? "-" : printable(text, 40); }

std::vector<std::string> row_of(const Json& session, const SessionFields& fields) {
  const std::string_view nas = !fields.nas_address.empty()      ? fields.nas_address
                               : !fields.nas_identifier.empty() ? fields.nas_identifier
                                                                : fields.client;
  return {cell(fields.user_name),
          cell(nas),
          cell(fields.calling_station_id),
          cell(fields.framed_address),
          cell(fields.acct_session_id),
          text_of(member(session, "Acct-Status-Type")),
          time_of(member(session, "started_unix_ms")),
          time_of(member(session, "updated_unix_ms")),
          text_of(member(session, "Acct-Session-Time")),
          text_of(member(session, "Acct-Input-Octets")),
          text_of(member(session, "Acct-Output-Octets"))};
}

}  // namespace

Result<SessionsView, std::string> view_sessions(std::string_view body, const SessionFilter& filter) {
  const Json parsed = parse_json(body);
  const Json& sessions = member(parsed, "sessions");
  if (!sessions.is_array())
    return fail(std::string("the /sessions answer is not a JSON object with a \"sessions\" array"));
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    const Json& session = sessions[i];
    if (!session.is_object()) {
      return fail("the /sessions answer's session " + std::to_string(i + 1) + " is not a JSON object");
    }
    const SessionFields fields = session_fields_of(session);
    if (matches(filter, fields)) rows.push_back(row_of(session, fields));
  }
  SessionsView view;
  view.shown = rows.size();
  view.table = render_columns({"USER", "NAS", "CALLING-STATION-ID", "FRAMED-IP", "ACCT-SESSION-ID", "STATUS",
                               "STARTED (UTC)", "UPDATED (UTC)", "TIME (s)", "IN (octets)", "OUT (octets)"},
                              rows, {8, 9, 10});
  view.table += std::to_string(view.shown) + (view.shown == 1 ? " session" : " sessions") +
                (filter.empty() ? "" : " matching the filter") + "\n";
  return view;
}

}  // namespace rw::admin
