// ttls_method.h end to end against a real OpenSSL client through the
// EAP-TTLS framing with 1,000-octet fragments: inner PAP accepted and
// rejected, the MSK against the client's own derivation, TLS 1.2 and 1.3,
// malformed and unsupported inner AVPs; inner MS-CHAPv2 (RFC 5281 §11.2.4)
// with a peer written here that derives the challenge from its own TLS
// session.
#include "eap/ttls_method.h"

#include <gtest/gtest.h>

#include <string>

#include "auth/mschap.h"
#include "eap/tls_peer_for_test.h"

namespace rw::eap {
namespace {

using testing::Octets;
using testing::run_conversation;
using testing::TlsTestPeer;
using testing::TlsTestPki;

TlsServerContext ttls_context() { return TlsTestPki::get().tunnel_context(); }

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

// The peer's side of inner MS-CHAPv2 (RFC 5281 §11.2.4): the challenge and
// Ident from its own "ttls challenge" keying material, User-Name,
// MS-CHAP-Challenge and MS-CHAP2-Response AVPs, then the check of
// MS-CHAP2-Success; an empty answer to it.
struct MsChap2Peer {
  std::string user = "bob";
  std::string password = "correct horse";
  bool foreign_challenge = false;  // Sends a challenge the tunnel did not derive.
  bool success_verified = false;
  auth::MsChap2PeerResponse response{};

  Octets on_plaintext(SSL* ssl, const Octets& received) {
    if (!received.empty()) {
      // MS-CHAP2-Success: Code 26, V and M, length 12 + 43, vendor 311.
      const auto avps = parse_avps(received);
      success_verified = avps && avps->size() == 1 && (*avps)[0].vendor_id == 311u &&
                         (*avps)[0].code == kAvpMsChap2Success && (*avps)[0].data.size() == 43 &&
                         as_chars((*avps)[0].data.subspan(1)) ==
                             std::string_view(response.authenticator_response.data(), 42);
      return {};
    }
    Octets challenge(17);
    SSL_export_keying_material(ssl, challenge.data(), challenge.size(), "ttls challenge", 14, nullptr, 0, 0);
    if (foreign_challenge) challenge[0] ^= 1;
    const auto hash = auth::nt_hash_of(auth::Credential::cleartext(password));
    Octets peer_challenge(16, 0x44);
    const auth::NtResponse nt = auth::challenge_response(
        auth::challenge_hash(peer_challenge, Bytes(challenge).first(16), user), *hash);
    response.authenticator_response =
        auth::authenticator_response(*hash, nt, peer_challenge, Bytes(challenge).first(16), user);
    const auto value = auth::ms_chap2_response_value(challenge[16], peer_challenge, nt);
    Octets avps = encode_avp(kAvpUserName, as_bytes(user));
    for (const Octets& avp :
         {encode_vendor_avp(kVendorMicrosoft, kAvpMsChapChallenge, Bytes(challenge).first(16)),
          encode_vendor_avp(kVendorMicrosoft, kAvpMsChap2Response, value)}) {
      avps.insert(avps.end(), avp.begin(), avp.end());
    }
    return avps;
  }
};

std::optional<auth::Credential> lookup_bob(std::string_view user) {
  if (user == "bob") return auth::Credential::cleartext("correct horse");
  return std::nullopt;
}

class EapTtlsMsChap2 : public ::testing::TestWithParam<TlsVersion> {
 protected:
  MethodStep run(TtlsMethod& ttls, MsChap2Peer& inner) {
    client_ = std::make_unique<TlsTestPeer>(TlsTestPeer::Options{
        .version = GetParam(),
        .respond = [&inner](SSL* ssl, const Octets& in) { return inner.on_plaintext(ssl, in); },
        .respond_first = true});
    return run_conversation(ttls, *client_);
  }
  TtlsMethod method() {
    return TtlsMethod(ttls_context(), "anonymous", check_bob, {.ms_chap2_credential = lookup_bob});
  }
  std::unique_ptr<TlsTestPeer> client_;
};

TEST_P(EapTtlsMsChap2, RightPasswordIsAcceptedWithMsChap2Success) {
  TtlsMethod ttls = method();
  MsChap2Peer inner;
  const MethodStep last = run(ttls, inner);
  ASSERT_EQ(last.kind, MethodStep::Kind::kSuccess) << last.reason;
  EXPECT_TRUE(inner.success_verified);
  EXPECT_EQ(ttls.decided_identity(), "bob");
  ASSERT_TRUE(last.msk.has_value());
  if (GetParam() == TlsVersion::k1_2) {
    const Octets material = testing::tls12_prf_of_peer(client_->ssl(), "ttls keying material", 64);
    EXPECT_TRUE(std::equal(last.msk->begin(), last.msk->end(), material.begin()));
    // The exporter the peer used for the challenge is RFC 5281's PRF.
    Octets challenge(17);
    SSL_export_keying_material(client_->ssl(), challenge.data(), 17, "ttls challenge", 14, nullptr, 0, 0);
    EXPECT_EQ(challenge, testing::tls12_prf_of_peer(client_->ssl(), "ttls challenge", 17));
  }
}

TEST_P(EapTtlsMsChap2, WrongPasswordIsRejected) {
  TtlsMethod ttls = method();
  MsChap2Peer inner{.password = "battery staple"};
  const MethodStep last = run(ttls, inner);
  EXPECT_EQ(last.kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(last.reason, "inner MS-CHAPv2 rejected: wrong password");
  EXPECT_FALSE(inner.success_verified);
}

TEST_P(EapTtlsMsChap2, UnknownUserIsRejected) {
  TtlsMethod ttls = method();
  MsChap2Peer inner{.user = "mallory"};
  EXPECT_EQ(run(ttls, inner).reason, "inner MS-CHAPv2 rejected: unknown user");
}

TEST_P(EapTtlsMsChap2, AChallengeTheTunnelDidNotDeriveIsRejected) {
  TtlsMethod ttls = method();
  MsChap2Peer inner{.foreign_challenge = true};
  EXPECT_EQ(run(ttls, inner).kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(ttls.error(), std::optional<TtlsMethodError>(TtlsMethodError::kMsChapChallenge));
}

TEST_P(EapTtlsMsChap2, WithoutACredentialLookupMsChap2IsAnUnsupportedAvp) {
  TtlsMethod ttls(ttls_context(), "anonymous", check_bob);
  MsChap2Peer inner;
  EXPECT_EQ(run(ttls, inner).kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(ttls.error(), std::optional<TtlsMethodError>(TtlsMethodError::kUnsupportedAvp));
}

INSTANTIATE_TEST_SUITE_P(Versions, EapTtlsMsChap2, ::testing::Values(TlsVersion::k1_2, TlsVersion::k1_3),
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
  for (int e = 0; e <= static_cast<int>(TtlsMethodError::kMsChap2Ack); ++e) {
    EXPECT_NE(to_string(static_cast<TtlsMethodError>(e)), "EAP-TTLS failure") << e;
  }
}

}  // namespace
}  // namespace rw::eap
