// FreeRADIUS's SQL user schema (radcheck, radreply, radusergroup,
// radgroupcheck, radgroupreply) with rlm_sql's authorize semantics
// (FreeRADIUS 3.2), compiled onto the users-file policy so that one
// evaluator (auth/users_policy.h) and one decision type serve both stores.
// Pure: rows come in from whoever read them (src/gateway_shell/sql_user_source.h).
// docs/authentication.md describes the mapping.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "auth/user_credentials.h"
#include "base/result.h"
#include "config/freeradius_lexer.h"
#include "config/users_file.h"
#include "radius/dictionary.h"

namespace rw::auth {

// One row of radcheck, radreply, radgroupcheck or radgroupreply: the
// `attribute`, `op` and `value` columns, in `id` order.
struct SqlItemRow {
  std::string attribute;
  std::string op;
  std::string value;
};

// One group the user belongs to, with its radgroupcheck and radgroupreply rows.
struct SqlGroupRows {
  std::string name;
  std::vector<SqlItemRow> check;
  std::vector<SqlItemRow> reply;
};

// Everything rlm_sql's authorize reads for one user: the user's own rows and
// the groups of radusergroup in ascending `priority`.
struct SqlUserRows {
  std::vector<SqlItemRow> check;
  std::vector<SqlItemRow> reply;
  std::vector<SqlGroupRows> groups;

  [[nodiscard]] bool empty() const { return check.empty() && reply.empty() && groups.empty(); }
};

// One user's rows compiled for the policy: evaluate_users(users, name, ...)
// decides with rlm_sql's semantics, credentials holds the parsed passwords.
// Immutable; shared by the cache and the requests deciding with it.
struct SqlUser {
  config::UsersFile users;
  UserCredentials credentials;
  bool known = false;  // Any row at all: the store knows this user.
};

// Compiles `rows` into a users file whose entries, all named `user_name`,
// evaluate_users walks with rlm_sql's meaning:
//  - the user's entry (radcheck as check items, radreply as reply items), when
//    either table has rows. Comparison rows must hold for its control and
//    reply items to apply; `=` on a check row compares, as rlm_sql's
//    paircompare does. Groups follow unless radreply says Fall-Through = No
//    (rlm_sql's read_groups = yes).
//  - one entry per group in priority order (radgroupcheck, radgroupreply). A
//    group whose check rows fail is skipped; after a group that applied, the
//    walk stops unless its reply says Fall-Through = Yes.
// Errors (an unknown attribute, a bad operator, value or password) say
// which table and row.
[[nodiscard]] Result<std::shared_ptr<const SqlUser>, std::string> compile_sql_user(
    std::string_view user_name, const SqlUserRows& rows,
    std::shared_ptr<const radius::Dictionary> dictionary);

}  // namespace rw::auth
