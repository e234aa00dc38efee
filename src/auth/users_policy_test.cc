// Tests of the users-file policy: FreeRADIUS `files` semantics.
#include "auth/users_policy.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rw::auth {
namespace {

using config::UsersFile;
using config::UsersItem;

const radius::Dictionary& dict() { return *radius::Dictionary::builtin(); }
const radius::AttributeDef& attr(std::string_view name) {
  const radius::AttributeDef* def = dict().find(name);
  EXPECT_NE(def, nullptr) << name;
  return *def;
}

UsersFile parse(std::string_view text) {
  auto parsed = UsersFile::parse(text, "users", radius::Dictionary::builtin());
  EXPECT_TRUE(parsed.has_value()) << parsed.error().to_string();
  if (!parsed) std::abort();
  return std::move(*parsed);
}

std::vector<std::uint8_t> u32(std::uint32_t value) {
  return {static_cast<std::uint8_t>(value >> 24), static_cast<std::uint8_t>(value >> 16),
          static_cast<std::uint8_t>(value >> 8), static_cast<std::uint8_t>(value)};
}

// A request built from (name, text value) pairs through the dictionary.
class Request {
 public:
  Request& add(std::string_view name, std::string_view text) {
    const radius::AttributeDef& def = attr(name);
    auto wire = radius::parse_value(def, text);
    EXPECT_TRUE(wire) << name << " " << text;
    values_.push_back(std::move(*wire));
    defs_.push_back(&def);
    return *this;
  }
  RequestAttributeList view() {
    attributes_.clear();
    for (std::size_t i = 0; i < values_.size(); ++i) attributes_.push_back({defs_[i], values_[i]});
    return RequestAttributeList(attributes_);
  }

 private:
  std::vector<const radius::AttributeDef*> defs_;
  std::vector<std::vector<std::uint8_t>> values_;
  std::vector<RequestAttribute> attributes_;
};

UsersDecision decide(const UsersFile& users, std::string_view name, Request request = {}) {
  UsersDecision decision;
  RequestAttributeList view = request.view();
  auto done = evaluate_users(users, name, view, decision);
  EXPECT_TRUE(done) << to_string(done.error());
  return decision;
}

std::string text_of(const UsersItem* item) {
  return item ? std::string(as_chars(item->bytes())) : std::string("(none)");
}

// The reply as "Name:tag=value" strings, values printed by the dictionary.
std::vector<std::string> reply_of(const UsersDecision& decision) {
  std::vector<std::string> out;
  for (const UsersItem* item : decision.reply()) {
    std::string tag = item->tag ? ":" + std::to_string(item->tag) : "";
    out.push_back(item->def->name + tag + "=" + radius::format_value(*item->def, item->bytes()));
  }
  return out;
}

using Strings = std::vector<std::string>;

constexpr std::string_view kSite = R"(
alice	Cleartext-Password := "wonderland"
	Tunnel-Type:1 = VLAN,
	Tunnel-Medium-Type:1 = IEEE-802,
	Tunnel-Private-Group-Id:1 = "100",
	Fall-Through = Yes

bob	Cleartext-Password := "builder"
	Session-Timeout = 60

mallory	Auth-Type := Reject
	Reply-Message = "Account disabled"

DEFAULT	Service-Type == Framed-User
	Framed-Protocol = PPP,
	Fall-Through = Yes

DEFAULT
	Session-Timeout = 3600,
	Idle-Timeout = 600
)";

TEST(UsersPolicy, AppliesTheUserEntryAndFallsThroughToDefaults) {
  UsersFile users = parse(kSite);
  UsersDecision decision = decide(users, "alice", Request().add("Service-Type", "Framed-User"));
  EXPECT_TRUE(decision.matched());
  EXPECT_EQ(text_of(decision.find_control(attr("Cleartext-Password"))), "wonderland");
  EXPECT_EQ(reply_of(decision),
            (Strings{"Tunnel-Type:1=VLAN", "Tunnel-Medium-Type:1=IEEE-802", "Tunnel-Private-Group-Id:1=100",
                     "Framed-Protocol=PPP", "Session-Timeout=3600", "Idle-Timeout=600"}));
  ASSERT_EQ(decision.applied_entries().size(), 3u);
  EXPECT_EQ(decision.applied_entries()[0], 0u);
  EXPECT_EQ(decision.applied_entries()[1], 3u);
  EXPECT_EQ(decision.applied_entries()[2], 4u);
}

TEST(UsersPolicy, SkipsDefaultsWhoseChecksFail) {
  UsersFile users = parse(kSite);
  UsersDecision decision = decide(users, "alice", Request().add("Service-Type", "Login-User"));
  EXPECT_EQ(reply_of(decision),
            (Strings{"Tunnel-Type:1=VLAN", "Tunnel-Medium-Type:1=IEEE-802", "Tunnel-Private-Group-Id:1=100",
                     "Session-Timeout=3600", "Idle-Timeout=600"}));
}

TEST(UsersPolicy, StopsAtAnEntryWithoutFallThrough) {
  UsersFile users = parse(kSite);
  UsersDecision decision = decide(users, "bob", Request().add("Service-Type", "Framed-User"));
  EXPECT_EQ(text_of(decision.find_control(attr("Cleartext-Password"))), "builder");
  EXPECT_EQ(reply_of(decision), (Strings{"Session-Timeout=60"}));
  EXPECT_EQ(decision.applied_count(), 1u);
}

TEST(UsersPolicy, RejectsWithAuthTypeReject) {
  UsersFile users = parse(kSite);
  UsersDecision decision = decide(users, "mallory");
  const UsersItem* auth_type = decision.find_control(attr("Auth-Type"));
  ASSERT_NE(auth_type, nullptr);
  EXPECT_EQ(auth_type->value, u32(*attr("Auth-Type").value_by_name("Reject")));
  EXPECT_EQ(reply_of(decision), (Strings{"Reply-Message=Account disabled"}));
  decision.clear_reply();
  EXPECT_TRUE(decision.reply().empty());
  EXPECT_NE(decision.find_control(attr("Auth-Type")), nullptr);
}

TEST(UsersPolicy, UnknownUsersGetOnlyDefaults) {
  UsersFile users = parse(kSite);
  UsersDecision decision = decide(users, "eve");
  EXPECT_TRUE(decision.matched());
  EXPECT_FALSE(decision.named_matched());
  EXPECT_TRUE(decide(users, "alice").named_matched());
  EXPECT_EQ(decision.find_control(attr("Cleartext-Password")), nullptr);
  EXPECT_EQ(reply_of(decision), (Strings{"Session-Timeout=3600", "Idle-Timeout=600"}));
}

TEST(UsersPolicy, NothingMatchesWithoutEntriesOrDefaults) {
  UsersFile users = parse("alice Cleartext-Password := \"x\"\n");
  UsersDecision decision = decide(users, "bob");
  EXPECT_FALSE(decision.matched());
  EXPECT_TRUE(decision.control().empty());
  EXPECT_TRUE(decision.reply().empty());
}

TEST(UsersPolicy, MatchesNamesCaseSensitively) {
  UsersFile users = parse("alice Cleartext-Password := \"x\"\n");
  EXPECT_TRUE(decide(users, "alice").matched());
  EXPECT_FALSE(decide(users, "Alice").matched());
}

TEST(UsersPolicy, WalksDefaultsAndUserEntriesInFileOrder) {
  UsersFile users = parse(
      "DEFAULT\n\tReply-Message += \"first\",\n\tFall-Through = Yes\n"
      "alice\n\tReply-Message += \"second\",\n\tFall-Through = Yes\n"
      "DEFAULT\n\tReply-Message += \"third\"\n"
      "alice\n\tReply-Message += \"never\"\n");
  EXPECT_EQ(reply_of(decide(users, "alice")),
            (Strings{"Reply-Message=first", "Reply-Message=second", "Reply-Message=third"}));
}

TEST(UsersPolicy, AssignDoesNotOverrideAndSetReplaces) {
  UsersFile users = parse(
      "alice Simultaneous-Use := 1\n\tSession-Timeout = 60,\n\tIdle-Timeout = 10,\n\tFall-Through = Yes\n"
      "DEFAULT Simultaneous-Use = 5\n\tSession-Timeout = 3600,\n\tIdle-Timeout := 300,\n"
      "\tReply-Message = \"welcome\"\n");
  UsersDecision decision = decide(users, "alice");
  EXPECT_EQ(reply_of(decision), (Strings{"Session-Timeout=60", "Idle-Timeout=300", "Reply-Message=welcome"}));
  EXPECT_EQ(decision.find_control(attr("Simultaneous-Use"))->value, u32(1));
}

TEST(UsersPolicy, SetReplacesEveryInstanceInPlaceOfTheFirst) {
  UsersFile users = parse(
      "alice\n\tReply-Message += \"a\",\n\tClass = 0x01,\n\tReply-Message += \"b\",\n\tFall-Through = Yes\n"
      "DEFAULT\n\tReply-Message := \"c\"\n");
  EXPECT_EQ(reply_of(decide(users, "alice")), (Strings{"Reply-Message=c", "Class=0x01"}));
}

TEST(UsersPolicy, AddAppends) {
  UsersFile users = parse(
      "alice Cleartext-Password := \"x\"\n\tClass += 0x01,\n\tFall-Through = Yes\n"
      "DEFAULT Cleartext-Password += \"y\"\n\tClass += 0x02\n");
  UsersDecision decision = decide(users, "alice");
  EXPECT_EQ(reply_of(decision), (Strings{"Class=0x01", "Class=0x02"}));
  EXPECT_EQ(decision.control().size(), 2u);
}

TEST(UsersPolicy, TagsAreDistinctAttributesForSetAndAssign) {
  UsersFile users = parse(
      "alice\n\tTunnel-Private-Group-Id:1 = \"10\",\n\tFall-Through = Yes\n"
      "DEFAULT\n\tTunnel-Private-Group-Id:2 = \"20\",\n\tTunnel-Private-Group-Id:1 = \"99\"\n");
  EXPECT_EQ(reply_of(decide(users, "alice")),
            (Strings{"Tunnel-Private-Group-Id:1=10", "Tunnel-Private-Group-Id:2=20"}));
}

class ComparisonTest : public ::testing::Test {
 protected:
  // Whether a DEFAULT entry whose check line is `checks` applies to `request`.
  bool applies(const std::string& checks, Request request) {
    UsersFile users = parse("DEFAULT " + checks + "\n\tReply-Message = \"hit\"\n");
    return decide(users, "anyone", std::move(request)).matched();
  }
};

TEST_F(ComparisonTest, ComparesIntegersNumerically) {
  auto port = [](const char* value) { return Request().add("NAS-Port", value); };
  EXPECT_TRUE(applies("NAS-Port == 7", port("7")));
  EXPECT_FALSE(applies("NAS-Port == 7", port("8")));
  EXPECT_TRUE(applies("NAS-Port != 7", port("8")));
  EXPECT_FALSE(applies("NAS-Port != 7", port("7")));
  EXPECT_TRUE(applies("NAS-Port < 256", port("255")));
  EXPECT_FALSE(applies("NAS-Port < 256", port("256")));
  EXPECT_TRUE(applies("NAS-Port <= 256", port("256")));
  EXPECT_TRUE(applies("NAS-Port > 9", port("10")));  // Numeric, not "10" < "9".
  EXPECT_FALSE(applies("NAS-Port > 10", port("10")));
  EXPECT_TRUE(applies("NAS-Port >= 10", port("10")));
  EXPECT_TRUE(applies("NAS-Port >= 10, NAS-Port < 20", port("15")));
  EXPECT_FALSE(applies("NAS-Port >= 10, NAS-Port < 20", port("20")));
}

TEST_F(ComparisonTest, ComparesNamedValuesAndAddresses) {
  EXPECT_TRUE(applies("Service-Type == Framed-User", Request().add("Service-Type", "Framed-User")));
  EXPECT_FALSE(applies("Service-Type == Framed-User", Request().add("Service-Type", "Login-User")));
  EXPECT_TRUE(applies("NAS-IP-Address == 192.0.2.1", Request().add("NAS-IP-Address", "192.0.2.1")));
  EXPECT_TRUE(applies("NAS-IP-Address > 192.0.2.1", Request().add("NAS-IP-Address", "192.0.2.10")));
}

TEST_F(ComparisonTest, ComparesTextBytewise) {
  auto called = [](const char* value) { return Request().add("Called-Station-Id", value); };
  EXPECT_TRUE(applies("Called-Station-Id == \"AP-1:corp\"", called("AP-1:corp")));
  EXPECT_FALSE(applies("Called-Station-Id == \"AP-1:corp\"", called("ap-1:corp")));
  EXPECT_FALSE(applies("Called-Station-Id == \"AP-1:corp\"", called("AP-1:corp2")));
  EXPECT_TRUE(applies("Called-Station-Id < \"b\"", called("abc")));
}

TEST_F(ComparisonTest, MatchesRegularExpressions) {
  auto name = [](const char* value) { return Request().add("User-Name", value); };
  EXPECT_TRUE(applies("User-Name =~ \"@example\\.com$\"", name("jane@example.com")));
  EXPECT_FALSE(applies("User-Name =~ \"@example\\.com$\"", name("jane@exampleXcom")));
  EXPECT_TRUE(applies("User-Name !~ \"^host/\"", name("jane")));
  EXPECT_FALSE(applies("User-Name !~ \"^host/\"", name("host/laptop")));
  // Non-text attributes are matched in their printed form, as FreeRADIUS does.
  EXPECT_TRUE(applies("Service-Type =~ \"^Framed\"", Request().add("Service-Type", "Framed-User")));
  EXPECT_TRUE(applies("NAS-IP-Address =~ \"^10\\.\"", Request().add("NAS-IP-Address", "10.1.2.3")));
}

TEST_F(ComparisonTest, TestsPresenceAndAbsence) {
  Request with_class = Request().add("Class", "0x01");
  EXPECT_TRUE(applies("Class =* ANY", with_class));
  EXPECT_FALSE(applies("Class !* ANY", with_class));
  EXPECT_FALSE(applies("Class =* ANY", Request()));
  EXPECT_TRUE(applies("Class !*", Request()));
}

TEST_F(ComparisonTest, AbsentAttributesSatisfyNoValueComparison) {
  EXPECT_FALSE(applies("NAS-Port == 1", Request()));
  EXPECT_FALSE(applies("NAS-Port != 1", Request()));
  EXPECT_FALSE(applies("User-Name !~ \"x\"", Request()));
}

TEST_F(ComparisonTest, AnyInstanceMaySatisfyTheCheck) {
  Request two = Request().add("Class", "0x01").add("Class", "0x02");
  EXPECT_TRUE(applies("Class == 0x02", two));
  EXPECT_TRUE(applies("Class != 0x02", two));
  EXPECT_FALSE(applies("Class == 0x03", two));
}

TEST_F(ComparisonTest, MalformedRequestValuesSatisfyNothing) {
  // A 2-byte NAS-Port is malformed (RFC 2865 §5.5: 4 octets).
  std::vector<std::uint8_t> short_port = {0, 7};
  RequestAttribute attribute{&attr("NAS-Port"), short_port};
  UsersFile users = parse("DEFAULT NAS-Port != 7\n");
  UsersDecision decision;
  RequestAttributeList view({&attribute, 1});
  ASSERT_TRUE(evaluate_users(users, "x", view, decision));
  EXPECT_FALSE(decision.matched());
}

TEST(UsersPolicy, RefusesToOverflowTheReplyList) {
  std::string text = "alice\n";
  for (std::size_t i = 0; i < 100; ++i) text += "\tClass += 0x01,\n";
  text += "\tFall-Through = Yes\nDEFAULT\n";
  for (std::size_t i = 0; i < 40; ++i) text += "\tClass += 0x02,\n";
  text += "\tFall-Through = No\n";
  UsersFile users = parse(text);
  UsersDecision decision;
  RequestAttributeList none({});
  auto done = evaluate_users(users, "alice", none, decision);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error(), UsersPolicyError::kReplyListFull);
}

TEST(UsersPolicy, ClearsTheDecisionBetweenRequests) {
  UsersFile users = parse(kSite);
  UsersDecision decision;
  RequestAttributeList none({});
  ASSERT_TRUE(evaluate_users(users, "alice", none, decision));
  ASSERT_TRUE(evaluate_users(users, "bob", none, decision));
  EXPECT_EQ(reply_of(decision), (Strings{"Session-Timeout=60"}));
  EXPECT_EQ(decision.applied_count(), 1u);
}

TEST(RequestAttributeList, FindsInstancesInOrder) {
  std::vector<std::uint8_t> a = {1};
  std::vector<std::uint8_t> b = {2};
  std::vector<std::uint8_t> c = {3};
  RequestAttribute attributes[] = {{&attr("Class"), a}, {&attr("State"), b}, {&attr("Class"), c}};
  RequestAttributeList list(attributes);
  ASSERT_TRUE(list.find(attr("Class"), 0));
  EXPECT_EQ((*list.find(attr("Class"), 0))[0], 1);
  EXPECT_EQ((*list.find(attr("Class"), 1))[0], 3);
  EXPECT_FALSE(list.find(attr("Class"), 2));
  EXPECT_EQ((*list.find(attr("State"), 0))[0], 2);
  EXPECT_FALSE(list.find(attr("User-Name"), 0));
}

TEST(UsersPolicy, DemoFileAuthenticatesTheDemoUsers) {
  auto users =
      UsersFile::load(std::string(RW_SOURCE_ROOT) + "/etc/demo/users", radius::Dictionary::builtin());
  ASSERT_TRUE(users) << users.error().to_string();
  UsersDecision alice = decide(*users, "alice");
  EXPECT_EQ(text_of(alice.find_control(attr("Cleartext-Password"))), "wonderland");
  EXPECT_NE(alice.find_reply(attr("Tunnel-Private-Group-Id")), nullptr);
  EXPECT_NE(alice.find_reply(attr("Idle-Timeout")), nullptr);
  EXPECT_EQ(decide(*users, "bob").find_control(attr("NT-Password"))->value.size(), 16u);
  EXPECT_EQ(text_of(decide(*users, "carol").find_control(attr("Crypt-Password"))).substr(0, 3), "$6$");
  EXPECT_NE(decide(*users, "00-11-22-33-44-55").find_control(attr("Cleartext-Password")), nullptr);
  EXPECT_NE(decide(*users, "mallory").find_control(attr("Auth-Type")), nullptr);
}

}  // namespace
}  // namespace rw::auth
