// ttls_method.h end to end against a real OpenSSL client through the
// EAP-TTLS framing with 1,000-octet fragments: inner PAP accepted and
// rejected, the MSK against the client's own derivation, TLS 1.2 and 1.3,
// malformed and unsupported inner AVPs.
#include "eap/ttls_method.h"

#include <gtest/gtest.h>

#include <string>

#include "eap/tls_peer_for_test.h"

namespace rw::eap {
namespace {

using testing::Octets;
using testing::run_conversation;
using testing::TlsTestPeer;
using testing::TlsTestPki;

TlsServerContext ttls_context() {
  TlsServerConfig config = TlsTestPki::get().server_config();
  config.require_client_certificate = false;
  auto context = TlsServerContext::create(config);
  if (!context) ADD_FAILURE() << context.error().to_string();
  return *context;
}

// The users the credential check knows: bob, password "correct horse".
InnerDecision check_bob(std::string_view user, std::string_view password) {
  if (user != "bob") return InnerDecision{.accepted = false, .reason = "unknown user"};
  if (password != "correct horse") return InnerDecision{.accepted = false, .reason = "wrong password"};
  return InnerDecision{.accepted = true};
}

// User-Name and User-Password AVPs; the password NUL-padded to 16 octets
// as RFC 5281 §11.2.5 allows.
Octets pap_avps(std::string_view user, std::string password) {
  Octets avps = encode_avp(kAvpUserName, as_bytes(user));
  password.resize((password.size() + 15) / 16 * 16, '\0');
  const Octets secret = encode_avp(kAvpUserPassword, as_bytes(password));
  avps.insert(avps.end(), secret.begin(), secret.end());
  return avps;
}

class EapTtls : public ::testing::TestWithParam<TlsVersion> {
 protected:
  TlsTestPeer peer(Octets inner, bool inner_with_finished = true) {
    return TlsTestPeer(TlsTestPeer::Options{
        .version = GetParam(), .inner = std::move(inner), .inner_with_finished = inner_with_finished});
  }
  TtlsMethod method() { return TtlsMethod(ttls_context(), "anonymous@example.org", check_bob); }
};

TEST_P(EapTtls, InnerPapIsAcceptedWithTheClientsMsk) {
  TtlsMethod ttls = method();
  TlsTestPeer client = peer(pap_avps("bob", "correct horse"));
  const MethodStep last = run_conversation(ttls, client);
  ASSERT_EQ(last.kind, MethodStep::Kind::kSuccess) << last.reason;
  ASSERT_TRUE(last.msk.has_value());
  if (GetParam() == TlsVersion::k1_2) {
    const Octets material = testing::tls12_prf_of_peer(client.ssl(), "ttls keying material", 128);
    EXPECT_TRUE(std::equal(last.msk->begin(), last.msk->end(), material.begin()));
  } else {
    EXPECT_EQ(*last.msk, testing::tls13_msk_of_peer(client.ssl(), "EXPORTER_EAP_TLS_Key_Material", 0x15));
  }
  EXPECT_EQ(ttls.decided_identity(), "bob");
  EXPECT_EQ(ttls.eap_identity(), "anonymous@example.org");
  EXPECT_GE(client.server_fragmented(), 1);   // The server's flight took two 1,000-octet fragments.
  EXPECT_TRUE(client.application().empty());  // No protected success indication in EAP-TTLS.
}

TEST_P(EapTtls, WrongPasswordIsRejectedWithTheChecksReason) {
  TtlsMethod ttls = method();
  TlsTestPeer client = peer(pap_avps("bob", "battery staple"));
  const MethodStep last = run_conversation(ttls, client);
  EXPECT_EQ(last.kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(last.reason, "inner PAP rejected: wrong password");
  EXPECT_FALSE(last.msk.has_value());
  EXPECT_EQ(ttls.decided_identity(), "bob");
}

TEST_P(EapTtls, MissingPasswordIsRejected) {
  TtlsMethod ttls = method();
  TlsTestPeer client = peer(encode_avp(kAvpUserName, as_bytes("bob")));
  EXPECT_EQ(run_conversation(ttls, client).kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(ttls.error(), std::optional<TtlsMethodError>(TtlsMethodError::kNoPapCredentials));
}

TEST_P(EapTtls, UnsupportedMandatoryAvpIsRejected) {
  TtlsMethod ttls = method();
  Octets inner = pap_avps("bob", "correct horse");
  const Octets chap = encode_avp(60, as_bytes("0123456789abcdef"));  // CHAP-Challenge, M set.
  inner.insert(inner.end(), chap.begin(), chap.end());
  TlsTestPeer client = peer(inner);
  EXPECT_EQ(run_conversation(ttls, client).kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(ttls.error(), std::optional<TtlsMethodError>(TtlsMethodError::kUnsupportedAvp));
}

TEST_P(EapTtls, MalformedAvpsAreRejected) {
  TtlsMethod ttls = method();
  TlsTestPeer client = peer(Octets{0, 0, 0, 1, 0x40, 0, 0, 200, 'b'});
  const MethodStep last = run_conversation(ttls, client);
  EXPECT_EQ(last.kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(last.reason, "malformed inner AVPs: AVP Length past the end of the data");
}

TEST_P(EapTtls, APasswordOverTheBoundIsRejected) {
  TtlsMethod ttls = method();
  TlsTestPeer client = peer(pap_avps("bob", std::string(129, 'x')));
  EXPECT_EQ(run_conversation(ttls, client).kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(ttls.error(), std::optional<TtlsMethodError>(TtlsMethodError::kCredentialTooLong));
}

INSTANTIATE_TEST_SUITE_P(Versions, EapTtls, ::testing::Values(TlsVersion::k1_2, TlsVersion::k1_3),
                         [](const auto& version) {
                           return version.param == TlsVersion::k1_2 ? "Tls12" : "Tls13";
                         });

TEST(EapTtlsTls13, AvpsAfterTheServersEmptyRequestAreAccepted) {
  TtlsMethod ttls(ttls_context(), "anonymous", check_bob);
  TlsTestPeer client(TlsTestPeer::Options{
      .version = TlsVersion::k1_3, .inner = pap_avps("bob", "correct horse"), .inner_with_finished = false});
  const MethodStep last = run_conversation(ttls, client);
  EXPECT_EQ(last.kind, MethodStep::Kind::kSuccess) << last.reason;
}

TEST(EapTtlsStart, IsTheSFlagWithVersionZero) {
  TtlsMethod ttls(ttls_context(), "anonymous", check_bob);
  EXPECT_EQ(ttls.start().type_data, Octets{0x20});
  EXPECT_EQ(ttls.type(), Type::kTtls);
}

TEST(EapTtlsHostile, AnotherVersionIsRefused) {
  TtlsMethod ttls(ttls_context(), "anonymous", check_bob);
  (void)ttls.start();
  EXPECT_EQ(ttls.on_response(Octets{0x01, 0x16}).kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(ttls.error(), std::optional<TtlsMethodError>(TtlsMethodError::kVersion));
}

TEST(EapTtlsHostile, FramingErrorsFailWithTheirReason) {
  TtlsMethod ttls(ttls_context(), "anonymous", check_bob);
  (void)ttls.start();
  const MethodStep step = ttls.on_response(Octets{0x80, 0x00});
  EXPECT_EQ(step.kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(step.reason, "EAP-TTLS framing refused: L flag without the four-octet TLS Message Length");
}

TEST(TtlsMethodError, EveryErrorHasAName) {
  for (int e = 0; e <= static_cast<int>(TtlsMethodError::kRejected); ++e) {
    EXPECT_NE(to_string(static_cast<TtlsMethodError>(e)), "EAP-TTLS failure") << e;
  }
}

}  // namespace
}  // namespace rw::eap
