// Disconnect- and CoA-Requests against vectors computed independently (Python's
// hashlib and hmac over the RFC 5176 §2.3 and RFC 3579 §3.2 formulas, secret
// "testing123"), and the checks of ACK and NAK answers.
#include "radius/dynamic_authorization.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace rw::radius {
namespace {

using Buffer = std::vector<std::uint8_t>;

Buffer from_hex(std::string_view hex) {
  Buffer out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  return out;
}

SharedSecret secret() { return *SharedSecret::create(as_bytes("testing123")); }

// Disconnect-Request id 7 for alice's session 0000001A on NAS 192.0.2.10.
constexpr std::string_view kDisconnect =
    "280700565d8984edacf0b167ce2ba51e60447dad5012c16512ce7566c62d86dc82415c34e5160406c000020a0107616c6963652c"
    "0a"
    "30303030303031411f1361613a62623a63633a64643a65653a303108060a090005";
// Its Disconnect-NAK with Error-Cause 503.
constexpr std::string_view kNak = "2a07001a2e9b67b9a6c25219beef593fb2197cf86506000001f7";
// CoA-Request id 9: User-Name alice, Session-Timeout 60.
constexpr std::string_view kCoa =
    "2b090033230db52e09310cbed692f21fab5a357f5012f35c1a759c79924d5116cc30dce64a240107616c6963651b060000003c";
// Its CoA-ACK, with a Message-Authenticator.
constexpr std::string_view kAck =
    "2c0900263c7c2e8083838c20c374a4f22e740f4750127459804cd4e689f926fc17a2f97dbd09";

SessionIdentity alice() {
  SessionIdentity session;
  session.nas_address = {192, 0, 2, 10};
  session.user_name = "alice";
  session.acct_session_id = "0000001A";
  session.calling_station_id = "aa:bb:cc:dd:ee:01";
  session.framed_ip_address = {10, 9, 0, 5};
  return session;
}

Buffer build(DynamicKind kind, std::uint8_t identifier, const SessionIdentity& session,
             std::span<const ChangeAttribute> changes = {}) {
  std::array<std::uint8_t, kMaxPacketLength> buffer{};
  auto length = build_dynamic_request(buffer, kind, identifier, session, changes, secret());
  EXPECT_TRUE(length.has_value());
  return Buffer(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(length.value_or(0)));
}

TEST(DynamicAuthorization, DisconnectRequestMatchesTheVector) {
  const Buffer request = build(DynamicKind::kDisconnect, 7, alice());
  EXPECT_EQ(request, from_hex(kDisconnect));
  // The NAS side of the repo's codec accepts it too.
  auto packet = Packet::parse(request);
  ASSERT_TRUE(packet.has_value());
  EXPECT_EQ(packet->code(), Code::kDisconnectRequest);
  EXPECT_TRUE(verify_request_authenticator(*packet, secret()));
  EXPECT_EQ(check_request_message_authenticator(*packet, secret()), MessageAuthenticatorStatus::kValid);
}

TEST(DynamicAuthorization, CoaRequestCarriesTheChangesAfterTheIdentity) {
  auto change = parse_change_attribute(*Dictionary::builtin(), "Session-Timeout=60");
  ASSERT_TRUE(change.has_value()) << change.error();
  SessionIdentity session;
  session.user_name = "alice";
  const std::vector<ChangeAttribute> changes = {*change};
  EXPECT_EQ(build(DynamicKind::kCoa, 9, session, changes), from_hex(kCoa));
}

TEST(DynamicAuthorization, ReadsANakWithItsErrorCause) {
  const Buffer request = from_hex(kDisconnect);
  auto reply = read_dynamic_reply(from_hex(kNak), DynamicKind::kDisconnect, request, secret());
  ASSERT_TRUE(reply.has_value()) << to_string(reply.error());
  EXPECT_FALSE(reply->acknowledged);
  EXPECT_EQ(reply->error_cause, 503u);
  EXPECT_EQ(describe(*reply, *Dictionary::builtin()), "NAK Error-Cause=Session-Context-Not-Found(503)");
}

TEST(DynamicAuthorization, ReadsAnAckWithAMessageAuthenticator) {
  auto reply = read_dynamic_reply(from_hex(kAck), DynamicKind::kCoa, from_hex(kCoa), secret());
  ASSERT_TRUE(reply.has_value()) << to_string(reply.error());
  EXPECT_TRUE(reply->acknowledged);
  EXPECT_FALSE(reply->error_cause.has_value());
  EXPECT_EQ(describe(*reply, *Dictionary::builtin()), "ACK");
}

TEST(DynamicAuthorization, RefusesAnswersThatAreNotTheRequestsOwn) {
  const Buffer request = from_hex(kDisconnect);
  const Buffer nak = from_hex(kNak);
  // Another secret.
  auto other = *SharedSecret::create(as_bytes("testing124"));
  EXPECT_EQ(read_dynamic_reply(nak, DynamicKind::kDisconnect, request, other).error(),
            ReplyError::kBadAuthenticator);
  // A CoA answer to a Disconnect-Request.
  EXPECT_EQ(read_dynamic_reply(nak, DynamicKind::kCoa, request, secret()).error(), ReplyError::kWrongCode);
  // Another identifier.
  Buffer renumbered = request;
  renumbered[1] = 8;
  EXPECT_EQ(read_dynamic_reply(nak, DynamicKind::kDisconnect, renumbered, secret()).error(),
            ReplyError::kWrongIdentifier);
  // A flipped Error-Cause bit.
  Buffer forged = nak;
  forged.back() ^= 1;
  EXPECT_EQ(read_dynamic_reply(forged, DynamicKind::kDisconnect, request, secret()).error(),
            ReplyError::kBadAuthenticator);
  // Truncated.
  EXPECT_EQ(read_dynamic_reply(Bytes(nak).first(10), DynamicKind::kDisconnect, request, secret()).error(),
            ReplyError::kMalformed);
  // A Message-Authenticator that does not verify, under a Response
  // Authenticator recomputed over the altered bytes (MD5 with the request's
  // authenticator in place, then the secret).
  const Buffer coa = from_hex(kCoa);
  Buffer bad_ma = from_hex(kAck);
  bad_ma[30] ^= 1;
  std::copy(coa.begin() + 4, coa.begin() + 20, bad_ma.begin() + 4);
  Md5 md5;
  md5.update(bad_ma);
  md5.update(as_bytes("testing123"));
  const Md5Digest digest = md5.finish();
  std::copy(digest.begin(), digest.end(), bad_ma.begin() + 4);
  EXPECT_EQ(read_dynamic_reply(bad_ma, DynamicKind::kCoa, coa, secret()).error(),
            ReplyError::kBadMessageAuthenticator);
}

TEST(DynamicAuthorization, UnnamedErrorCauseIsShownAsItsNumber) {
  DynamicReply reply;
  reply.error_cause = 999;
  EXPECT_EQ(describe(reply, *Dictionary::builtin()), "NAK Error-Cause=999");
}

TEST(DynamicAuthorization, ParsesChangesAndRefusesWhatCannotGoInACoa) {
  const Dictionary& dictionary = *Dictionary::builtin();
  auto filter = parse_change_attribute(dictionary, "Filter-Id=guest=1");
  ASSERT_TRUE(filter.has_value()) << filter.error();
  EXPECT_EQ(filter->type, attr::kFilterId);
  EXPECT_EQ(filter->value, Buffer({'g', 'u', 'e', 's', 't', '=', '1'}));
  EXPECT_FALSE(parse_change_attribute(dictionary, "Session-Timeout").has_value());
  EXPECT_FALSE(parse_change_attribute(dictionary, "=60").has_value());
  EXPECT_FALSE(parse_change_attribute(dictionary, "No-Such-Attribute=1").has_value());
  EXPECT_FALSE(parse_change_attribute(dictionary, "Session-Timeout=sixty").has_value());
  EXPECT_FALSE(parse_change_attribute(dictionary, "User-Name=mallory").has_value());
  EXPECT_FALSE(parse_change_attribute(dictionary, "Tunnel-Password=x").has_value());
  EXPECT_FALSE(parse_change_attribute(dictionary, "Auth-Type=Accept").has_value());
}

TEST(DynamicAuthorization, RequestTooLargeIsABuildError) {
  SessionIdentity session = alice();
  std::vector<ChangeAttribute> changes(20, ChangeAttribute{0, attr::kFilterId, Buffer(253, 'x')});
  std::array<std::uint8_t, kMaxPacketLength> buffer{};
  auto length = build_dynamic_request(buffer, DynamicKind::kCoa, 1, session, changes, secret());
  EXPECT_EQ(length.error(), BuildError::kPacketTooLong);
}

}  // namespace
}  // namespace rw::radius
