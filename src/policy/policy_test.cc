// The policy's conditions one by one, rule order, the default and the MAB
// lists, on policies written as files (policy_file.h).
#include "policy/policy.h"

#include <gtest/gtest.h>

#include "policy/policy_file.h"

namespace rw::policy {
namespace {

// 2026-12-02 was a Wednesday; 10:30 UTC.
constexpr std::int64_t kWednesday1030Utc = 1'796'207'400'000;

Policy compile(std::string_view text) {
  auto policy = parse_policy(text, "policy.yaml");
  EXPECT_TRUE(policy.has_value()) << (policy ? "" : policy.error().front().to_string());
  return policy ? std::move(*policy) : Policy(Policy::Parts{});
}

Request request() {
  return Request{.user_name = "alice",
                 .client = "ap-lobby",
                 .client_address = Address{.bytes = {10, 1, 2, 3}},
                 .nas_ip_address = Address{.bytes = {192, 0, 2, 7}},
                 .nas_identifier = "lobby-ap-1",
                 .called_station_id = "00-11-22-33-44-55:corp",
                 .calling_station_id = "aa-bb-cc-dd-ee-ff",
                 .method = Method::kPap,
                 .unix_ms = kWednesday1030Utc};
}

// A policy with one accept rule whose only condition is `condition`, and a
// reject default: the rule's name comes back when the condition holds.
std::string_view decided_by(std::string_view condition, const Request& r) {
  static std::optional<Policy> policy;
  policy.emplace(
      compile(std::string("default: reject\nrules:\n  - name: r\n    decision: accept\n    match: {") +
              std::string(condition) + "}\n"));
  const Decision decision = policy->decide(r);
  EXPECT_EQ(decision.accept, decision.rule != nullptr);
  return decision.rule_name();
}

TEST(Policy, MinuteOfWeekStartsOnMondayInTheConfiguredOffset) {
  EXPECT_EQ(minute_of_week(kWednesday1030Utc, 0), 2 * kMinutesPerDay + 10 * 60 + 30);
  EXPECT_EQ(minute_of_week(kWednesday1030Utc, 14 * 60), 3 * kMinutesPerDay + 30);  // Thursday 00:30.
  EXPECT_EQ(minute_of_week(kWednesday1030Utc, -11 * 60), 1 * kMinutesPerDay + 23 * 60 + 30);  // Tuesday.
  EXPECT_EQ(minute_of_week(0, 0), 3 * kMinutesPerDay);  // 1970-01-01 was a Thursday.
  EXPECT_EQ(minute_of_week(-60'000, 0), 3 * kMinutesPerDay - 1);
}

TEST(Policy, GlobMatchesStarsAndQuestionMarks) {
  EXPECT_TRUE(glob_match("ap-*", "ap-lobby"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("a?c*d", "abcxxd"));
  EXPECT_FALSE(glob_match("a?c*d", "abcxxe"));
  EXPECT_FALSE(glob_match("ap-*", "AP-lobby"));
  EXPECT_TRUE(glob_match("*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaab"));
  EXPECT_FALSE(glob_match("*a*a*a*a*b", std::string(4000, 'a')));
}

TEST(Policy, SsidIsThePartAfterTheMacOfCalledStationId) {
  EXPECT_EQ(ssid_of("00-11-22-33-44-55:corp"), "corp");
  EXPECT_EQ(ssid_of("00:11:22:33:44:55:guest wifi"), "guest wifi");
  EXPECT_EQ(ssid_of("001122334455:x:y"), "x:y");
  EXPECT_EQ(ssid_of("0011.2233.4455:lab"), "lab");
  EXPECT_EQ(ssid_of("00:11:22:33:44:55"), std::nullopt);
  EXPECT_EQ(ssid_of("corp"), std::nullopt);
  EXPECT_EQ(ssid_of("00-11-22-33-44-55:"), "");
}

TEST(Policy, MacPrefixesAreWholeMacsOrOuis) {
  EXPECT_EQ(parse_mac_prefix("AA-BB-CC-DD-EE-FF")->length, 6);
  EXPECT_EQ(parse_mac_prefix("aa:bb:cc")->length, 3);
  EXPECT_EQ(parse_mac_prefix("aabbcc")->octets[2], 0xcc);
  EXPECT_FALSE(parse_mac_prefix("aa:bb-cc"));
  EXPECT_FALSE(parse_mac_prefix("aa:bb"));
  EXPECT_FALSE(parse_mac_prefix("gg:bb:cc"));
}

TEST(Policy, MethodWordsCoverFamilies) {
  EXPECT_EQ(parse_method("pap"), bit(Method::kPap));
  EXPECT_EQ(parse_method("MS-CHAP"), bit(Method::kMsChap1) | bit(Method::kMsChap2));
  EXPECT_TRUE(*parse_method("EAP") & bit(Method::kEapTls));
  EXPECT_EQ(parse_method("TTLS"), bit(Method::kEapTtls));
  EXPECT_FALSE(parse_method("kerberos"));
}

TEST(Policy, UserCondition) {
  Request r = request();
  EXPECT_EQ(decided_by("user: [bob, 'al*']", r), "r");
  EXPECT_EQ(decided_by("user: bob", r), "default");
}

TEST(Policy, ClientShortnameGlob) {
  Request r = request();
  EXPECT_EQ(decided_by("client: 'ap-*'", r), "r");
  EXPECT_EQ(decided_by("client: 'sw-*'", r), "default");
}

TEST(Policy, ClientAddressAndNasIpAddressPrefixes) {
  Request r = request();
  EXPECT_EQ(decided_by("client_address: 10.0.0.0/8", r), "r");
  EXPECT_EQ(decided_by("client_address: [10.1.2.4, '2001:db8::/32']", r), "default");
  EXPECT_EQ(decided_by("nas_ip_address: 192.0.2.0/25", r), "r");
  EXPECT_EQ(decided_by("nas_ip_address: 192.0.2.128/25", r), "default");
  r.nas_ip_address.reset();
  EXPECT_EQ(decided_by("nas_ip_address: 0.0.0.0/0", r), "default");
}

TEST(Policy, NasIdentifierGlob) {
  Request r = request();
  EXPECT_EQ(decided_by("nas_identifier: 'lobby-*'", r), "r");
  EXPECT_EQ(decided_by("nas_identifier: 'core-*'", r), "default");
}

TEST(Policy, SsidCondition) {
  Request r = request();
  EXPECT_EQ(decided_by("ssid: [guest, corp]", r), "r");
  EXPECT_EQ(decided_by("ssid: guest", r), "default");
  r.called_station_id = "00-11-22-33-44-55";
  EXPECT_EQ(decided_by("ssid: '*'", r), "default");
}

TEST(Policy, CallingMacByWholeMacOrOui) {
  Request r = request();
  EXPECT_EQ(decided_by("mac: 'AA:BB:CC:DD:EE:FF'", r), "r");
  EXPECT_EQ(decided_by("mac: aabbcc", r), "r");
  EXPECT_EQ(decided_by("mac: 'aa:bb:cd'", r), "default");
  r.calling_station_id = "not a mac";
  EXPECT_EQ(decided_by("mac: aabbcc", r), "default");
}

TEST(Policy, MethodCondition) {
  Request r = request();
  EXPECT_EQ(decided_by("method: [CHAP, PAP]", r), "r");
  EXPECT_EQ(decided_by("method: EAP", r), "default");
  r.method = Method::kPeap;
  EXPECT_EQ(decided_by("method: EAP", r), "r");
  EXPECT_EQ(decided_by("method: EAP-TLS", r), "default");
}

TEST(Policy, CertificateFieldsHoldOnlyWhenSupplied) {
  Request r = request();
  EXPECT_EQ(decided_by("cert_subject_cn: '*'", r), "default");
  r.cert_subject_cn = "laptop-17.example.com";
  r.cert_issuer = "Example Device CA";
  EXPECT_EQ(decided_by("cert_subject_cn: '*.example.com'", r), "r");
  EXPECT_EQ(decided_by("cert_issuer: 'Example Device CA'", r), "r");
  EXPECT_EQ(decided_by("cert_issuer: 'Other CA'", r), "default");
}

TEST(Policy, GroupMembership) {
  const Policy policy = compile(R"(
groups:
  staff: [bob, alice]
  guests: [carol]
default: reject
rules:
  - name: staff
    match: {group: [guests, staff]}
    decision: accept
)");
  Request r = request();
  EXPECT_EQ(policy.decide(r).rule_name(), "staff");
  r.user_name = "carol";
  EXPECT_EQ(policy.decide(r).rule_name(), "staff");
  r.user_name = "alic";
  EXPECT_EQ(policy.decide(r).rule_name(), "default");
}

TEST(Policy, TimeWindowsByDayAndMinute) {
  Request r = request();  // Wednesday 10:30 UTC.
  EXPECT_EQ(decided_by("time: 'Mon-Fri 08:00-18:00'", r), "r");
  EXPECT_EQ(decided_by("time: 'Sat,Sun'", r), "default");
  EXPECT_EQ(decided_by("time: ['Sat,Sun', '10:30-10:31']", r), "r");
  EXPECT_EQ(decided_by("time: '10:31-10:30'", r), "default");
  EXPECT_EQ(decided_by("time: 'Tue 22:00-11:00'", r), "r");  // Tuesday night into Wednesday morning.
  EXPECT_EQ(decided_by("time: 'Wed 22:00-11:00'", r), "default");
  EXPECT_EQ(decided_by("time: 'Fri-Wed'", r), "r");
}

TEST(Policy, TimeIsReadInTheConfiguredOffset) {
  const Policy policy = compile(R"(
utc_offset: "+14:00"
default: reject
rules:
  - {name: thursday, match: {time: Thu}, decision: accept}
)");
  EXPECT_EQ(policy.decide(request()).rule_name(), "thursday");
}

TEST(Policy, AllConditionsOfARuleMustHold) {
  Request r = request();
  EXPECT_EQ(decided_by("ssid: corp, user: alice, method: PAP", r), "r");
  EXPECT_EQ(decided_by("ssid: corp, user: alice, method: CHAP", r), "default");
}

TEST(Policy, FirstMatchingRuleDecidesWithItsReply) {
  const Policy policy = compile(R"(
rules:
  - name: guests-off-hours
    match: {ssid: corp, user: 'guest*'}
    decision: reject
    reply: {reply_message: "not here"}
  - name: corp
    match: {ssid: corp}
    decision: accept
    reply: {vlan: 100, session_timeout: 3600, filter_id: staff}
  - name: corp-again
    match: {ssid: corp}
    decision: reject
)");
  Request r = request();
  Decision decision = policy.decide(r);
  EXPECT_TRUE(decision.accept);
  EXPECT_EQ(decision.rule_name(), "corp");
  EXPECT_EQ(decision.reply()->vlan, "100");
  EXPECT_EQ(decision.reply()->session_timeout, 3600u);
  EXPECT_EQ(decision.reply()->filter_id, "staff");
  r.user_name = "guest-7";
  decision = policy.decide(r);
  EXPECT_FALSE(decision.accept);
  EXPECT_EQ(decision.reply()->reply_message, "not here");
}

TEST(Policy, DefaultAcceptsUnlessSaidOtherwise) {
  EXPECT_TRUE(compile("rules: []\n").decide(request()).accept);
  const Decision decision = compile("default: reject\n").decide(request());
  EXPECT_FALSE(decision.accept);
  EXPECT_EQ(decision.rule_name(), "default");
  EXPECT_EQ(decision.reply(), nullptr);
}

TEST(Policy, MabDenyWinsOverAllow) {
  const Policy policy = compile(R"(
mab:
  allow: ["00:11:22", "aa-bb-cc-dd-ee-ff", "de:ad:be:ef:00:01"]
  deny: ["de:ad:be:ef:00:01", "66:77:88"]
)");
  EXPECT_EQ(policy.mab_listing(*auth::parse_mac("00:11:22:33:44:55")), MabListing::kAllowed);
  EXPECT_EQ(policy.mab_listing(*auth::parse_mac("aabb.ccdd.eeff")), MabListing::kAllowed);
  EXPECT_EQ(policy.mab_listing(*auth::parse_mac("de:ad:be:ef:00:01")), MabListing::kDenied);
  EXPECT_EQ(policy.mab_listing(*auth::parse_mac("66:77:88:00:00:00")), MabListing::kDenied);
  EXPECT_EQ(policy.mab_listing(*auth::parse_mac("00:11:23:00:00:00")), MabListing::kUnlisted);
  EXPECT_EQ(policy.mab_entries(), 5u);
}

}  // namespace
}  // namespace rw::policy
