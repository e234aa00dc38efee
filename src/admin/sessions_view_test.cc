#include "admin/sessions_view.h"

#include <gtest/gtest.h>

namespace rw::admin {
namespace {

// docs/admin_api.md "/sessions", with the fields a filter reads.
const std::string kSessions = R"({"sessions": [
  {"Acct-Unique-Session-Id":"9f1c","client":"nas1","User-Name":"alice","NAS-IP-Address":"192.0.2.10",
   "Acct-Session-Id":"0000001A","Acct-Status-Type":"Interim-Update","started_index":1201,"updated_index":1877,
   "started_unix_ms":1764464823000,"updated_unix_ms":1764465423000,"Acct-Session-Time":600,
   "Acct-Input-Octets":1048576,"Acct-Output-Octets":2097152,"Calling-Station-Id":"aa-bb-cc-dd-ee-ff",
   "Framed-IP-Address":"10.0.0.7"},
  {"Acct-Unique-Session-Id":"77aa","client":"nas2","User-Name":"bob","NAS-Identifier":"ap-7",
   "Acct-Session-Id":"s2","Acct-Status-Type":"Start","started_index":5,"updated_index":5,
   "started_unix_ms":1764464820000,"updated_unix_ms":1764464820000,"Acct-Session-Time":0,
   "Acct-Input-Octets":0,"Acct-Output-Octets":0}
]})";

TEST(SessionsView, OneAlignedLinePerSession) {
  auto view = view_sessions(kSessions, SessionFilter{});
  ASSERT_TRUE(view) << view.error();
  EXPECT_EQ(view->shown, 2u);
  EXPECT_EQ(
      view->table,
      "USER   NAS         CALLING-STATION-ID  FRAMED-IP  ACCT-SESSION-ID  STATUS          STARTED (UTC)"
      "        UPDATED (UTC)        TIME (s)  IN (octets)  OUT (octets)\n"
      "alice  192.0.2.10  aa-bb-cc-dd-ee-ff   10.0.0.7   0000001A         Interim-Update  2025-11-30 01:07:03"
      "  2025-11-30 01:17:03       600      1048576       2097152\n"
      "bob    ap-7        -                   -          s2               Start           2025-11-30 01:07:00"
      "  2025-11-30 01:07:00         0            0             0\n"
      "2 sessions\n");
}

TEST(SessionsView, FiltersOnThisSideToo) {
  auto filter = make_session_filter(SessionFilter{.mac = "AABB.CCDD.EEFF"});
  ASSERT_TRUE(filter);
  auto view = view_sessions(kSessions, *filter);
  ASSERT_TRUE(view) << view.error();
  EXPECT_EQ(view->shown, 1u);
  EXPECT_NE(view->table.find("alice"), std::string::npos);
  EXPECT_EQ(view->table.find("bob"), std::string::npos);
  EXPECT_NE(view->table.find("1 session matching the filter\n"), std::string::npos);
  view = view_sessions(kSessions, *make_session_filter(SessionFilter{.nas = "ap-7"}));
  ASSERT_TRUE(view);
  EXPECT_EQ(view->shown, 1u);
  EXPECT_NE(view->table.find("bob"), std::string::npos);
}

TEST(SessionsView, MalformedAnswersAreErrorsNotCrashes) {
  for (const char* body :
       {"", "{", "[]", "{}", R"({"sessions":{}})", R"({"sessions":[1]})", R"({"sessions":[{},"x"]})"}) {
    EXPECT_FALSE(view_sessions(body, SessionFilter{})) << body;
  }
  auto odd = view_sessions(
      R"({"sessions":[{"User-Name":5,"started_unix_ms":"soon","Acct-Session-Id":"a\nb"}]})", SessionFilter{});
  ASSERT_TRUE(odd) << odd.error();
  EXPECT_NE(odd->table.find("a?b"), std::string::npos) << odd->table;
  EXPECT_NE(odd->table.find("soon"), std::string::npos) << odd->table;
  EXPECT_FALSE(
      view_sessions(R"({"sessions":[{"User-Name":5}]})", *make_session_filter(SessionFilter{.user = "5"}))
          ->shown);
}

}  // namespace
}  // namespace rw::admin
