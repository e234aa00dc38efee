#include "admin/session_filter.h"

#include <gtest/gtest.h>

namespace rw::admin {
namespace {

SessionFields alice() {
  return SessionFields{.user_name = "alice",
                       .nas_address = "192.0.2.10",
                       .nas_identifier = "ap-7",
                       .client = "nas1",
                       .calling_station_id = "AA-BB-CC-DD-EE-FF",
                       .framed_address = "10.0.0.7",
                       .acct_session_id = "0000001A",
                       .unique_session_id = "9f1c00000000000000000000000000aa"};
}

SessionFilter filter_of(std::string_view query) {
  auto parsed = parse_session_query(query);
  EXPECT_TRUE(parsed) << query << ": " << (parsed ? "" : parsed.error());
  return parsed ? *parsed : SessionFilter{};
}

TEST(SessionFilter, EmptyMatchesEverySession) {
  EXPECT_TRUE(matches(filter_of(""), alice()));
  EXPECT_TRUE(matches(filter_of(""), SessionFields{}));
}

TEST(SessionFilter, MacMatchesInEveryCommonNotation) {
  for (const char* mac : {"aa:bb:cc:dd:ee:ff", "AA-BB-CC-DD-EE-FF", "aabb.ccdd.eeff", "AABBCCDDEEFF"}) {
    auto filter = make_session_filter(SessionFilter{.mac = mac});
    ASSERT_TRUE(filter) << mac;
    EXPECT_EQ(*filter->mac, "aa:bb:cc:dd:ee:ff");
    EXPECT_TRUE(matches(*filter, alice())) << mac;
  }
  EXPECT_FALSE(matches(*make_session_filter(SessionFilter{.mac = "aa:bb:cc:dd:ee:00"}), alice()));
  SessionFields phone = alice();
  phone.calling_station_id = "+44 20 7946 0000";
  EXPECT_FALSE(matches(*make_session_filter(SessionFilter{.mac = "aa:bb:cc:dd:ee:ff"}), phone));
}

TEST(SessionFilter, RefusesWhatIsNoMacOrAddress) {
  EXPECT_NE(make_session_filter(SessionFilter{.mac = "aa:bb:cc"}).error().find("not a MAC address"),
            std::string::npos);
  EXPECT_NE(make_session_filter(SessionFilter{.ip = "10.0.0.300"}).error().find("not an IPv4 or IPv6"),
            std::string::npos);
  EXPECT_EQ(make_session_filter(SessionFilter{.user = ""}).error(), "the user filter must not be empty");
}

TEST(SessionFilter, AddressesCompareAsAddresses) {
  EXPECT_TRUE(matches(filter_of("ip=10.0.0.7"), alice()));
  EXPECT_FALSE(matches(filter_of("ip=10.0.0.8"), alice()));
  SessionFields v6 = alice();
  v6.nas_address = "2001:db8::1";
  EXPECT_TRUE(matches(filter_of("nas=2001:0db8:0:0::1"), v6));
  EXPECT_FALSE(matches(filter_of("ip=2001:db8::1"), v6));
}

TEST(SessionFilter, NasMatchesAddressIdentifierOrClient) {
  for (const char* nas : {"192.0.2.10", "ap-7", "nas1"}) {
    EXPECT_TRUE(matches(filter_of(std::string("nas=") + nas), alice())) << nas;
  }
  EXPECT_FALSE(matches(filter_of("nas=192.0.2.11"), alice()));
}

TEST(SessionFilter, SessionMatchesEitherId) {
  EXPECT_TRUE(matches(filter_of("session=0000001A"), alice()));
  EXPECT_TRUE(matches(filter_of("session=9F1C00000000000000000000000000AA"), alice()));
  EXPECT_FALSE(matches(filter_of("session=0000001a"), alice()));  // Acct-Session-Id is exact.
}

TEST(SessionFilter, EveryFieldGivenMustMatch) {
  EXPECT_TRUE(matches(filter_of("user=alice&nas=nas1&mac=aabbccddeeff"), alice()));
  EXPECT_FALSE(matches(filter_of("user=alice&nas=nas2"), alice()));
  EXPECT_FALSE(matches(filter_of("user=bob"), alice()));
}

TEST(SessionFilter, QueryRoundTripsThroughPercentEncoding) {
  SessionFilter given{.user = "j.doe+x@example.org & co/é", .nas = "nas1", .session = "a=b"};
  const std::string query = session_query(given);
  EXPECT_EQ(query, "?user=j.doe%2Bx%40example.org%20%26%20co%2F%C3%A9&nas=nas1&session=a%3Db");
  auto parsed = parse_session_query(std::string_view(query).substr(1));
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_EQ(parsed->user, given.user);
  EXPECT_EQ(parsed->nas, given.nas);
  EXPECT_EQ(parsed->session, given.session);
  EXPECT_FALSE(parsed->mac);
  EXPECT_EQ(session_query(SessionFilter{}), "");
}

TEST(SessionFilter, RefusesBadQueries) {
  EXPECT_EQ(parse_session_query("colour=blue").error(),
            "unknown filter 'colour' (user, nas, mac, ip, session)");
  EXPECT_EQ(parse_session_query("user=a&user=b").error(), "'user' given twice");
  EXPECT_EQ(parse_session_query("user=%4").error(), "bad percent escape in the value of 'user'");
  EXPECT_EQ(parse_session_query("user=%zz").error(), "bad percent escape in the value of 'user'");
  EXPECT_EQ(parse_session_query("user").error(), "the user filter must not be empty");
  EXPECT_FALSE(parse_session_query("mac=nope"));
}

}  // namespace
}  // namespace rw::admin
