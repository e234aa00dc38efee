// SQL user rows to a users file; see sql_users.h.
#include "auth/sql_users.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

namespace rw::auth {

namespace {

constexpr std::string_view kOperators[] = {
    ":=", "=", "+=", "==", "!=", "<", "<=", ">", ">=", "=~", "!~", "=*", "!*"};

bool is_regex(std::string_view op) { return op == "=~" || op == "!~"; }

// Appends `text` as a double-quoted users-file string. Regular expressions
// keep their backslashes (the reader passes them to regcomp as written).
void append_quoted(std::string& out, std::string_view text, bool regex) {
  out.push_back('"');
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if (c == '"') {
      out += "\\\"";
    } else if (c == '\\' && !regex) {
      out += "\\\\";
    } else if (byte < 0x20 && !regex) {
      char octal[8];
      std::snprintf(octal, sizeof octal, "\\%03o", byte);
      out += octal;
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
}

bool is_fall_through(const SqlItemRow& row) { return row.attribute == "Fall-Through"; }

// rlm_sql's fall_through(): the value of the first Fall-Through reply item.
enum class FallThrough { kNo, kYes, kDefault };
FallThrough fall_through_of(const std::vector<SqlItemRow>& reply) {
  auto it = std::find_if(reply.begin(), reply.end(), is_fall_through);
  if (it == reply.end()) return FallThrough::kDefault;
  std::string value = it->value;
  std::transform(value.begin(), value.end(), value.begin(), [](unsigned char c) { return std::tolower(c); });
  return value == "yes" || value == "1" ? FallThrough::kYes : FallThrough::kNo;
}

}  // namespace

Result<std::shared_ptr<const SqlUser>, std::string> compile_sql_user(
    std::string_view user_name, const SqlUserRows& rows,
    std::shared_ptr<const radius::Dictionary> dictionary) {
  // One entry per user or group: check items on the first line, reply
  // items on one indented line, as a users file writes them.
  std::string text;
  auto append_entry = [&](const std::vector<SqlItemRow>& check, const std::vector<SqlItemRow>& reply,
                          std::string_view check_table, std::string_view reply_table,
                          bool fall_through) -> Result<void, config::SourceError> {
    append_quoted(text, user_name, false);
    auto write = [&](const std::vector<SqlItemRow>& items, std::string_view table,
                     std::string_view separator) -> Result<bool, config::SourceError> {
      bool any = false;
      for (std::size_t i = 0; i < items.size(); ++i) {
        const SqlItemRow& row = items[i];
        if (is_fall_through(row)) continue;
        auto where = [&](std::string what) {
          return config::SourceError{fmt::format("sql:{}", table), static_cast<int>(i + 1), 1,
                                     std::move(what)};
        };
        std::string_view op = row.op;
        if (std::find(std::begin(kOperators), std::end(kOperators), op) == std::end(kOperators)) {
          return fail(where(fmt::format("unknown operator '{}' on {}", row.op, row.attribute)));
        }
        bool name_ok =
            !row.attribute.empty() && std::all_of(row.attribute.begin(), row.attribute.end(), [](char c) {
              return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
                     c == ':';
            });
        if (!name_ok) return fail(where(fmt::format("bad attribute name '{}'", row.attribute)));
        text += any ? separator : std::string_view(" ");
        any = true;
        text += row.attribute;
        text.push_back(' ');
        text += op;
        text.push_back(' ');
        append_quoted(text, row.value, is_regex(op));
      }
      return any;
    };
    auto checked = write(check, check_table, ", ");
    if (!checked) return fail(checked.error());
    text += "\n";
    std::size_t reply_start = text.size();
    text += "\t";
    auto replied = write(reply, reply_table, ", ");
    if (!replied) return fail(replied.error());
    if (fall_through) text += *replied ? ", Fall-Through = Yes" : " Fall-Through = Yes";
    if (!*replied && !fall_through) {
      text.erase(reply_start);
    } else {
      text += "\n";
    }
    return {};
  };

  if (!rows.check.empty() || !rows.reply.empty()) {
    // rlm_sql goes on to the groups unless radreply said Fall-Through = No.
    bool to_groups = fall_through_of(rows.reply) != FallThrough::kNo;
    if (auto ok = append_entry(rows.check, rows.reply, "radcheck", "radreply", to_groups); !ok)
      return fail(ok.error().to_string());
  }
  for (const SqlGroupRows& group : rows.groups) {
    // rlm_sql_process_groups continues past an applied group only on Fall-Through = Yes.
    bool next = fall_through_of(group.reply) == FallThrough::kYes;
    if (auto ok = append_entry(group.check, group.reply, "radgroupcheck " + group.name,
                               "radgroupreply " + group.name, next);
        !ok)
      return fail(ok.error().to_string());
  }
  const radius::AttributeDef* nt_password = dictionary->find("NT-Password");
  auto parsed = config::UsersFile::parse(text, "sql", std::move(dictionary));
  if (!parsed) return fail(parsed.error().to_string());
  auto user = std::make_shared<SqlUser>();
  user->users = std::move(*parsed);
  user->known = !rows.empty();
  // The credentials point at the items where they now live, in `user`.
  if (auto loaded = user->credentials.load(user->users, nt_password); !loaded) return fail(loaded.error());
  return std::shared_ptr<const SqlUser>(std::move(user));
}

}  // namespace rw::auth
