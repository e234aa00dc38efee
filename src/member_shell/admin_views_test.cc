// Tests of the member's admin API bodies.
#include "member_shell/admin_views.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "accounting/accounting_request_for_test.h"

namespace rw::member_shell {
namespace {

using nlohmann::json;

TEST(AdminViews, StatusNamesTheLeaderAndItsSubmissionAddress) {
  consensus::NodeStatus status;
  status.role = consensus::Role::kFollower;
  status.leader_id = 2;
  status.leader_address = "127.0.0.1:7202";
  status.term = 7;
  status.commit_index = 12;
  status.last_log_index = 14;
  status.last_applied = 11;
  LedgerFigures figures;
  figures.sessions = 3;
  figures.records_held = 9;
  figures.log_clock_unix_ms = 1764464823000;
  const json body = json::parse(status_json(1, status, figures, 4, {{2, "127.0.0.1:7302"}}));
  EXPECT_EQ(body["role"], "member");
  EXPECT_EQ(body["id"], 1);
  EXPECT_EQ(body["raft_role"], "follower");
  EXPECT_EQ(body["leader"]["id"], 2);
  EXPECT_EQ(body["leader"]["address"], "127.0.0.1:7202");
  EXPECT_EQ(body["leader"]["submission"], "127.0.0.1:7302");
  EXPECT_EQ(body["term"], 7);
  EXPECT_EQ(body["commit_index"], 12);
  EXPECT_EQ(body["last_log_index"], 14);
  EXPECT_EQ(body["applied_index"], 11);
  EXPECT_EQ(body["pending_submissions"], 4);
  EXPECT_EQ(body["sessions"], 3);
  EXPECT_EQ(body["records_held"], 9);
  EXPECT_EQ(body["log_clock_unix_ms"], 1764464823000);
}

// The exporter's state is in the body as the rest is: one line, and the
// database's error text made UTF-8 (a PostgreSQL message may quote a
// record's bytes), never an exception that fails /status.
TEST(AdminViews, StatusCarriesTheExportersStateWhateverItsErrorText) {
  ExportStatus exporter;
  exporter.database = "postgresql";
  exporter.batches = 5;
  exporter.last_error = "invalid byte sequence \xC3\x28 for encoding UTF8";
  const std::string text = status_json(1, consensus::NodeStatus{}, LedgerFigures{}, 0, {}, &exporter);
  ASSERT_TRUE(text.ends_with("}\n"));
  EXPECT_EQ(text.find('\n'), text.size() - 1);
  const json body = json::parse(text);
  EXPECT_EQ(body["export"]["database"], "postgresql");
  EXPECT_EQ(body["export"]["batches"], 5);
  EXPECT_EQ(body["export"]["last_error"], "invalid byte sequence \xEF\xBF\xBD( for encoding UTF8");
  EXPECT_FALSE(
      json::parse(status_json(1, consensus::NodeStatus{}, LedgerFigures{}, 0, {})).contains("export"));
}

TEST(AdminViews, StatusWithoutALeaderSaysNull) {
  const json body = json::parse(status_json(1, consensus::NodeStatus{}, LedgerFigures{}, 0, {}));
  EXPECT_TRUE(body["leader"].is_null());
  EXPECT_EQ(body["raft_role"], "unavailable");
}

TEST(AdminViews, RecordLineNamesAttributesWithNumbersAndEnumNames) {
  accounting::testing::RequestSpec spec;
  spec.session_id = "0000001A";
  spec.user_name = "alice";
  spec.session_time_s = 600;
  const accounting::HeldRecord held{1201, accounting::testing::record_of(spec)};
  const std::string line = record_line(held, *radius::Dictionary::builtin());
  ASSERT_EQ(line.back(), '\n');
  const json body = json::parse(line);
  EXPECT_EQ(body["index"], 1201);
  EXPECT_EQ(body["key"], held.record.key.hex());
  EXPECT_EQ(body["attributes"]["Acct-Status-Type"], "Start");
  EXPECT_EQ(body["attributes"]["Acct-Session-Id"], "0000001A");
  EXPECT_EQ(body["attributes"]["User-Name"], "alice");
  EXPECT_EQ(body["attributes"]["NAS-IP-Address"], "10.0.0.1");
  EXPECT_EQ(body["attributes"]["Acct-Session-Time"], 600);
  EXPECT_EQ(body["attributes"]["NAS-Port"], 7);
}

TEST(AdminViews, SessionJsonCarriesTheDocumentedFields) {
  accounting::Session session;
  session.user_name = "alice";
  session.acct_session_id = "0000001A";
  session.nas_address = {192, 0, 2, 10};
  session.opened_index = 1201;
  session.updated_index = 1877;
  session.session_time_s = 600;
  session.input_octets = 1048576;
  const json body = json::parse(session_json(session));
  EXPECT_EQ(body["Acct-Unique-Session-Id"], session.key.hex());
  EXPECT_EQ(body["NAS-IP-Address"], "192.0.2.10");
  EXPECT_EQ(body["started_index"], 1201);
  EXPECT_EQ(body["updated_index"], 1877);
  EXPECT_EQ(body["Acct-Session-Time"], 600);
  EXPECT_EQ(body["Acct-Input-Octets"], 1048576);
  EXPECT_FALSE(body.contains("Calling-Station-Id"));
  EXPECT_FALSE(body.contains("Framed-IP-Address"));
}

// What a Disconnect-Request names a session by is shown, and the `mac` and
// `ip` filters match it in any notation.
TEST(AdminViews, SessionsShowAndMatchTheMacAndFramedAddress) {
  accounting::Session session;
  session.user_name = "alice";
  session.calling_station_id = "AA-BB-CC-DD-EE-01";
  session.framed_ip_address = {10, 9, 0, 5};
  session.framed_ipv6_prefix = {0, 64, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1};
  const json body = json::parse(session_json(session));
  EXPECT_EQ(body["Calling-Station-Id"], "AA-BB-CC-DD-EE-01");
  EXPECT_EQ(body["Framed-IP-Address"], "10.9.0.5");
  EXPECT_EQ(body["Framed-IPv6-Prefix"], "2001:db8:0:1::/64");
  auto filter_of = [](std::string query) { return *admin::parse_session_query(query); };
  EXPECT_TRUE(session_matches(filter_of("mac=aabb.ccdd.ee01"), session));
  EXPECT_TRUE(session_matches(filter_of("mac=aa:bb:cc:dd:ee:01&ip=10.9.0.5"), session));
  EXPECT_FALSE(session_matches(filter_of("mac=aa:bb:cc:dd:ee:02"), session));
  EXPECT_FALSE(session_matches(filter_of("ip=10.9.0.6"), session));
}

TEST(AdminViews, ParsesMembershipChanges) {
  auto add = parse_member_change(R"({"id":4,"raft":"127.0.0.1:7204"})", true);
  ASSERT_TRUE(add.has_value());
  EXPECT_EQ(add->id, 4u);
  EXPECT_EQ(add->raft, "127.0.0.1:7204");
  auto remove = parse_member_change(R"({"id":2})", false);
  ASSERT_TRUE(remove.has_value());
  EXPECT_EQ(remove->id, 2u);
  EXPECT_EQ(parse_member_change("not json", false).error(), "the body must be a JSON object");
  EXPECT_EQ(parse_member_change(R"({"id":0})", false).error(), "\"id\" must be a member id from 1 to 255");
  EXPECT_EQ(parse_member_change(R"({"id":4,"raft":"nowhere"})", true).error(),
            "\"raft\" must be the new member's raft address, IPv4:port");
  EXPECT_EQ(parse_member_change(R"({"id":4})", true).error(),
            "\"raft\" must be the new member's raft address, IPv4:port");
  EXPECT_EQ(parse_member_change(R"({"id":2,"raft":"127.0.0.1:1"})", false).error(), "unknown key \"raft\"");
}

}  // namespace
}  // namespace rw::member_shell
