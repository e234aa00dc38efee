// Tests of request building and answer checking: each generated request is
// checked by the server-side code of rw::radius and rw::auth (as the gateway
// would), answered, and the answer verified; tampered answers are refused.
#include "bench/scenario.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "auth/chap.h"
#include "auth/password.h"
#include "radius/attribute_crypto.h"

namespace rw::bench {
namespace {

const radius::SharedSecret& secret() {
  static const radius::SharedSecret s = *radius::SharedSecret::create(as_bytes("bench-secret"));
  return s;
}

struct Built {
  std::array<std::uint8_t, kMaxRequestLength> buffer{};
  Bytes wire;
  Outstanding outstanding;
};

Built build(const RequestFactory& factory, std::uint64_t sequence, std::uint8_t identifier = 7) {
  static SeededRandom random(42);
  Built built;
  auto wire = factory.build(sequence, identifier, random, built.buffer, built.outstanding);
  EXPECT_TRUE(wire.has_value());
  if (wire) built.wire = *wire;
  return built;
}

// Signs an answer to `request` with `code`, plus optional extra vendor attribute.
Bytes answer(const radius::Packet& request, radius::Code code, std::span<std::uint8_t> buffer,
             std::optional<Bytes> ms_chap2_success = std::nullopt, bool message_authenticator = true) {
  radius::PacketBuilder builder(buffer);
  builder.begin(code, request.identifier(), request.authenticator());
  if (message_authenticator) builder.reserve_message_authenticator();
  if (ms_chap2_success)
    builder.add_vendor(radius::kVendorMicrosoft, radius::ms::kChap2Success, *ms_chap2_success);
  MutableBytes wire = *builder.finish();
  radius::sign_response(wire, request.authenticator(), secret());
  return wire;
}

RequestFactory factory(Scenario scenario) {
  return RequestFactory(scenario, *parse_users("count:3"), secret(), "run1");
}

TEST(ParseUsers, CountSpecAndList) {
  const auto counted = parse_users("count:2");
  ASSERT_TRUE(counted);
  ASSERT_EQ(counted->size(), 2u);
  EXPECT_EQ((*counted)[1].name, "bench-user-1");
  EXPECT_EQ((*counted)[1].password, "bench-password-1");
  const auto listed = parse_users("# comment\nalice wonder land\n\nbob  secret\n");
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].password, "wonder land");
  EXPECT_EQ((*listed)[1].name, "bob");
  EXPECT_FALSE(parse_users("count:0"));
  EXPECT_FALSE(parse_users("count:x"));
  EXPECT_FALSE(parse_users("lonely"));
}

TEST(RequestFactory, PapRequestDecodesToThePassword) {
  const RequestFactory f = factory(Scenario::kPap);
  const Built built = build(f, 4);
  const auto request = radius::Packet::parse(built.wire);
  ASSERT_TRUE(request);
  EXPECT_EQ(radius::check_request_message_authenticator(*request, secret()),
            radius::MessageAuthenticatorStatus::kValid);
  std::array<std::uint8_t, radius::kMaxHiddenValueLength> out{};
  const auto password = radius::unhide_user_password(request->find(radius::attr::kUserPassword)->value,
                                                     request->authenticator(), secret(), out);
  ASSERT_TRUE(password);
  EXPECT_EQ(as_chars(*password), "bench-password-1");
  EXPECT_EQ(as_chars(request->find(radius::attr::kUserName)->value), "bench-user-1");

  std::array<std::uint8_t, 4096> buffer{};
  EXPECT_TRUE(
      verify_answer(answer(*request, radius::Code::kAccessAccept, buffer), built.outstanding, secret()));
  EXPECT_EQ(verify_answer(answer(*request, radius::Code::kAccessReject, buffer), built.outstanding, secret())
                .error(),
            VerifyError::kUnexpectedCode);
  EXPECT_EQ(verify_answer(answer(*request, radius::Code::kAccessAccept, buffer, std::nullopt, false),
                          built.outstanding, secret())
                .error(),
            VerifyError::kMissingMessageAuthenticator);
  EXPECT_TRUE(verify_answer(answer(*request, radius::Code::kAccessAccept, buffer, std::nullopt, false),
                            built.outstanding, secret(), false));
}

TEST(RequestFactory, TamperedAnswersAreRefused) {
  const RequestFactory f = factory(Scenario::kPap);
  const Built built = build(f, 0, 9);
  const auto request = radius::Packet::parse(built.wire);
  std::array<std::uint8_t, 4096> buffer{};
  Bytes wire = answer(*request, radius::Code::kAccessAccept, buffer);
  std::vector<std::uint8_t> copy(wire.begin(), wire.end());
  copy[25] ^= 1;  // Inside the Message-Authenticator value.
  EXPECT_EQ(verify_answer(copy, built.outstanding, secret()).error(), VerifyError::kBadResponseAuthenticator);
  copy.assign(wire.begin(), wire.end());
  copy[1] = 10;
  EXPECT_EQ(verify_answer(copy, built.outstanding, secret()).error(), VerifyError::kIdentifierMismatch);
  EXPECT_EQ(verify_answer(Bytes(copy).first(10), built.outstanding, secret()).error(),
            VerifyError::kMalformed);
  const auto other = radius::SharedSecret::create(as_bytes("other"));
  EXPECT_EQ(verify_answer(wire, built.outstanding, *other).error(), VerifyError::kBadResponseAuthenticator);
}

TEST(RequestFactory, ChapRequestVerifies) {
  const RequestFactory f = factory(Scenario::kChap);
  const Built built = build(f, 2);
  const auto request = radius::Packet::parse(built.wire);
  ASSERT_TRUE(request);
  const auth::ChapRequest chap{request->find(radius::attr::kChapPassword)->value,
                               request->find(radius::attr::kChapChallenge)->value, request->authenticator()};
  EXPECT_TRUE(auth::verify_chap(auth::Credential::cleartext("bench-password-2"), chap));
  EXPECT_FALSE(auth::verify_chap(auth::Credential::cleartext("wrong"), chap));
}

TEST(RequestFactory, MsChapV2RequestVerifiesAndSuccessIsChecked) {
  const RequestFactory f = factory(Scenario::kMsChapV2);
  const Built built = build(f, 0, 33);
  const auto request = radius::Packet::parse(built.wire);
  ASSERT_TRUE(request);
  const auth::MsChap2Request ms{*request->find_vendor(radius::kVendorMicrosoft, radius::ms::kChapChallenge),
                                *request->find_vendor(radius::kVendorMicrosoft, radius::ms::kChap2Response),
                                as_chars(request->find(radius::attr::kUserName)->value)};
  const auto accept = auth::verify_ms_chap2(auth::Credential::cleartext("bench-password-0"), ms);
  ASSERT_TRUE(accept);
  std::array<std::uint8_t, 4096> buffer{};
  EXPECT_TRUE(verify_answer(answer(*request, radius::Code::kAccessAccept, buffer, accept->ms_chap2_success),
                            built.outstanding, secret()));
  auto wrong = accept->ms_chap2_success;
  wrong[5] ^= 1;
  EXPECT_EQ(
      verify_answer(answer(*request, radius::Code::kAccessAccept, buffer, wrong), built.outstanding, secret())
          .error(),
      VerifyError::kBadMsChap2Success);
  EXPECT_EQ(verify_answer(answer(*request, radius::Code::kAccessAccept, buffer), built.outstanding, secret())
                .error(),
            VerifyError::kBadMsChap2Success);
}

TEST(RequestFactory, AccountingRequestsVerifyAndExpectAnAccountingResponse) {
  const RequestFactory f = factory(Scenario::kAccounting);
  const std::uint64_t past_lead_in = 3 * 2 * kSessionSpacing;
  for (const std::uint64_t sequence :
       {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{2}, past_lead_in + 1, past_lead_in + 2}) {
    const Built built = build(f, sequence);
    const auto request = radius::Packet::parse(built.wire);
    ASSERT_TRUE(request);
    EXPECT_TRUE(radius::verify_request_authenticator(*request, secret()));
    EXPECT_EQ(radius::check_request_message_authenticator(*request, secret()),
              radius::MessageAuthenticatorStatus::kValid);
    const AccountingSlot slot = accounting_slot(sequence);
    constexpr std::array<std::uint32_t, 3> kStatus{1, 3, 2};  // Start, Interim-Update, Stop.
    EXPECT_EQ(
        *request->find_u32(radius::attr::kAcctStatusType),
        kStatus[static_cast<std::size_t>(slot.kind) - static_cast<std::size_t>(RequestKind::kAcctStart)]);
    const std::string id(as_chars(request->find(radius::attr::kAcctSessionId)->value));
    EXPECT_EQ(id, f.session_id(slot.session));
    std::array<std::uint8_t, 4096> buffer{};
    EXPECT_TRUE(verify_answer(answer(*request, radius::Code::kAccountingResponse, buffer), built.outstanding,
                              secret()));
    EXPECT_EQ(
        verify_answer(answer(*request, radius::Code::kAccessAccept, buffer), built.outstanding, secret())
            .error(),
        VerifyError::kUnexpectedCode);
  }
  EXPECT_EQ(f.session_id(0), "run1-0");
}

// Every session sends Start, then Interim-Update kSessionSpacing sessions
// (3 × spacing requests) later, then Stop as far again; each (session,
// status) pair once; the lead-in slots are Starts of sessions never continued.
TEST(AccountingSlot, SessionsGoStartInterimStopSpacedApart) {
  constexpr std::uint64_t kCount = 3 * 5 * kSessionSpacing;
  std::map<std::uint64_t, std::vector<std::pair<RequestKind, std::uint64_t>>> sessions;
  std::set<std::pair<std::uint64_t, RequestKind>> seen;
  for (std::uint64_t index = 0; index < kCount; ++index) {
    const AccountingSlot slot = accounting_slot(index);
    EXPECT_TRUE(seen.insert({slot.session, slot.kind}).second) << index;
    sessions[slot.session].emplace_back(slot.kind, index);
  }
  std::size_t whole = 0;
  for (const auto& [session, requests] : sessions) {
    if (session >= kLeadInSessions) {
      ASSERT_EQ(requests.size(), 1u);
      EXPECT_EQ(requests[0].first, RequestKind::kAcctStart);
      continue;
    }
    ASSERT_FALSE(requests.empty());
    EXPECT_EQ(requests[0].first, RequestKind::kAcctStart);
    if (requests.size() < 3) continue;  // Continued after the last index looked at.
    ++whole;
    EXPECT_EQ(requests[1].first, RequestKind::kAcctInterim);
    EXPECT_EQ(requests[2].first, RequestKind::kAcctStop);
    EXPECT_EQ(requests[1].second - requests[0].second, 3 * kSessionSpacing + 1);
    EXPECT_EQ(requests[2].second - requests[1].second, 3 * kSessionSpacing + 1);
  }
  EXPECT_EQ(whole, 3 * kSessionSpacing);
  // Lead-in: one spacing of Interim slots and two of Stop slots.
  EXPECT_EQ(std::count_if(sessions.begin(), sessions.end(),
                          [](const auto& s) { return s.first >= kLeadInSessions; }),
            static_cast<std::ptrdiff_t>(3 * kSessionSpacing));
}

// --live-sessions: N Starts, then Interim-Updates round the same N sessions,
// never a Stop; without `open` (a second run) Interim-Updates only, over the
// same Acct-Session-Ids when the run tag is the same.
TEST(LiveSessions, StartsEachSessionOnceThenInterimsOverAllOfThem) {
  const LiveSessions live{.count = 5, .open = true};
  const RequestFactory f(Scenario::kAccounting, *parse_users("count:3"), secret(), "tag", live);
  std::set<std::uint64_t> started;
  for (std::uint64_t k = 0; k < 5; ++k) {
    EXPECT_EQ(f.kind_of(k), RequestKind::kAcctStart);
    started.insert(live_session_slot(k, live).session);
  }
  EXPECT_EQ(started.size(), 5u);
  std::map<std::uint64_t, int> interims;
  for (std::uint64_t k = 5; k < 5 + 3 * 5; ++k) {
    EXPECT_EQ(f.kind_of(k), RequestKind::kAcctInterim);
    ++interims[live_session_slot(k, live).session];
  }
  EXPECT_EQ(interims.size(), 5u);
  for (const auto& [session, count] : interims) EXPECT_EQ(count, 3) << session;

  const LiveSessions later{.count = 5, .open = false};
  const RequestFactory g(Scenario::kAccounting, *parse_users("count:3"), secret(), "tag", later);
  for (std::uint64_t k = 0; k < 10; ++k) {
    EXPECT_EQ(g.kind_of(k), RequestKind::kAcctInterim);
    const Built built = build(g, k);
    const auto request = radius::Packet::parse(built.wire);
    ASSERT_TRUE(request);
    EXPECT_EQ(*request->find_u32(radius::attr::kAcctStatusType), 3u);
    EXPECT_EQ(std::string(as_chars(request->find(radius::attr::kAcctSessionId)->value)), f.session_id(k % 5));
  }
}

TEST(RequestFactory, MixedIsSeventyPercentAccountingWithWholeSessions) {
  const RequestFactory f = factory(Scenario::kMixed);
  int accounting = 0;
  int starts = 0;
  int stops = 0;
  // Past the lead-in (accounting_slot), 30 requests hold 21 accounting ones.
  const std::uint64_t first = 10 * kSessionSpacing;
  for (std::uint64_t sequence = first; sequence < first + 30; ++sequence) {
    const RequestKind kind = f.kind_of(sequence);
    accounting += is_accounting(kind) ? 1 : 0;
    starts += kind == RequestKind::kAcctStart ? 1 : 0;
    stops += kind == RequestKind::kAcctStop ? 1 : 0;
  }
  EXPECT_EQ(accounting, 21);
  EXPECT_EQ(starts, 7);
  EXPECT_EQ(stops, 7);
}

TEST(Scenario, NamesRoundTrip) {
  for (std::string_view name : {"pap", "chap", "mschapv2", "acct", "mixed"}) {
    ASSERT_TRUE(parse_scenario(name));
    EXPECT_EQ(to_string(*parse_scenario(name)), name);
  }
  EXPECT_FALSE(parse_scenario("eap"));
}

}  // namespace
}  // namespace rw::bench
