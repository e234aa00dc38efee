// The bench supplicant (eap_supplicant.h) against radiusward's own server
// methods (eap/tls_method.h, eap/peap_method.h) in memory: EAP-TLS and PEAP
// over TLS 1.2 and 1.3, fragmented both ways, cryptobinding, the MSK both
// sides derive, a wrong password, keys that are not the MSK, and requests
// no server should send. The same supplicant meets FreeRADIUS in
// tests/interop/eap_supplicant_test.py.
#include "loadgen_shell/eap_supplicant.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "eap/packet.h"
#include "eap/peap_method.h"
#include "eap/tls_method.h"
#include "eap/tls_peer_for_test.h"

namespace rw::loadgen_shell {
namespace {

using eap::MethodStep;
using eap::TlsVersion;
using eap::testing::Octets;
using eap::testing::TlsTestPki;

std::optional<auth::Credential> lookup_bob(std::string_view user) {
  if (user == "bob") return auth::Credential::cleartext("correct horse");
  return std::nullopt;
}

struct Outcome {
  MethodStep last;
  std::optional<SupplicantError> supplicant_error;
};

// Carries each server request to the supplicant as a whole EAP-Request and
// its EAP-Response's Type-Data back, as the RADIUS rounds would.
Outcome converse(eap::Method& method, EapSupplicant& supplicant) {
  Outcome outcome;
  MethodStep step = method.start();
  std::uint8_t identifier = 1;
  for (int rounds = 0; step.kind == MethodStep::Kind::kRequest && rounds < 1000; ++rounds, ++identifier) {
    Octets request(eap::kHeaderLength + 1 + step.type_data.size());
    const Bytes written = eap::write({.code = eap::Code::kRequest,
                                      .identifier = identifier,
                                      .type = static_cast<std::uint8_t>(method.type()),
                                      .type_data = step.type_data},
                                     request);
    auto answer = supplicant.on_request(written);
    if (!answer) {
      outcome.supplicant_error = answer.error();
      break;
    }
    auto response = eap::parse(*answer);
    EXPECT_TRUE(response.has_value());
    EXPECT_EQ(response->identifier, identifier);
    EXPECT_EQ(response->type, static_cast<std::uint8_t>(method.type()));
    step = method.on_response(response->type_data);
  }
  outcome.last = step;
  return outcome;
}

class Supplicant : public ::testing::TestWithParam<TlsVersion> {
 protected:
  SupplicantConfig config(EapBenchMethod method, std::size_t fragment = 200) const {
    const TlsTestPki& pki = TlsTestPki::get();
    SupplicantConfig c{
        .method = method, .tls_version = GetParam(), .ca_file = pki.ca_file, .fragment_octets = fragment};
    if (method == EapBenchMethod::kTls) {
      c.certificate_file = pki.write("bench-client.pem", pki.valid.cert);
      c.key_file = pki.write("bench-client.key", pki.valid.key);
    }
    return c;
  }

  static Result<void, SupplicantError> check_keys(const EapSupplicant& supplicant, const eap::Msk& msk) {
    return supplicant.on_success(Bytes(msk).first(32), Bytes(msk).subspan(32));
  }

  SeededRandom random_{7};
};

TEST_P(Supplicant, EapTlsFragmentedBothWaysEndsWithTheServersMsk) {
  const SupplicantConfig c = config(EapBenchMethod::kTls);
  auto tls = SupplicantTls::create(c);
  ASSERT_TRUE(tls.has_value()) << tls.error();
  EapSupplicant supplicant(c, *tls, "alice", "", random_);
  auto context = eap::TlsServerContext::create(TlsTestPki::get().server_config());
  ASSERT_TRUE(context.has_value()) << context.error().to_string();
  eap::TlsMethod method(*context, "alice", {.fragment_octets = 200});
  const Outcome done = converse(method, supplicant);
  ASSERT_FALSE(done.supplicant_error.has_value()) << to_string(*done.supplicant_error);
  ASSERT_EQ(done.last.kind, MethodStep::Kind::kSuccess) << done.last.reason;
  ASSERT_TRUE(done.last.msk.has_value());
  EXPECT_TRUE(check_keys(supplicant, *done.last.msk).has_value());
  EXPECT_GT(supplicant.rounds(), 4);  // The server's and the client's flights took several fragments.
  eap::Msk other = *done.last.msk;
  other[40] ^= 1;
  EXPECT_EQ(check_keys(supplicant, other).error(), SupplicantError::kKeyMismatch);
  EXPECT_EQ(supplicant.on_success(Bytes(other).first(16), Bytes(other).subspan(32)).error(),
            SupplicantError::kMissingKeys);
}

TEST_P(Supplicant, PeapMsChapV2WithCryptobindingWhereTheServerAsks) {
  const SupplicantConfig c = config(EapBenchMethod::kPeap, 300);
  auto tls = SupplicantTls::create(c);
  ASSERT_TRUE(tls.has_value()) << tls.error();
  EapSupplicant supplicant(c, *tls, "bob", "correct horse", random_);
  // Cryptobinding is asked over TLS 1.2 only (peap_method.h).
  eap::PeapMethod method(TlsTestPki::get().tunnel_context(), "bob", lookup_bob, random_,
                         {.fragment_octets = 300, .crypto_binding = eap::PeapCryptoBinding::kRequired});
  const Outcome done = converse(method, supplicant);
  ASSERT_FALSE(done.supplicant_error.has_value()) << to_string(*done.supplicant_error);
  ASSERT_EQ(done.last.kind, MethodStep::Kind::kSuccess) << done.last.reason;
  EXPECT_EQ(method.crypto_bound(), GetParam() == TlsVersion::k1_2);
  ASSERT_TRUE(done.last.msk.has_value());
  EXPECT_TRUE(check_keys(supplicant, *done.last.msk).has_value());
}

TEST_P(Supplicant, PeapWrongPasswordEndsInTheInnerMethodsFailure) {
  const SupplicantConfig c = config(EapBenchMethod::kPeap);
  auto tls = SupplicantTls::create(c);
  ASSERT_TRUE(tls.has_value()) << tls.error();
  EapSupplicant supplicant(c, *tls, "bob", "battery staple", random_);
  eap::PeapMethod method(TlsTestPki::get().tunnel_context(), "bob", lookup_bob, random_);
  const Outcome done = converse(method, supplicant);
  EXPECT_FALSE(done.supplicant_error.has_value());
  EXPECT_EQ(done.last.kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(supplicant.failure_reason(), SupplicantError::kInnerFailure);
  // Without its method's end, an EAP-Success proves nothing.
  EXPECT_EQ(check_keys(supplicant, eap::Msk{}).error(), SupplicantError::kEarlySuccess);
}

INSTANTIATE_TEST_SUITE_P(Versions, Supplicant, ::testing::Values(TlsVersion::k1_2, TlsVersion::k1_3),
                         [](const auto& version) {
                           return version.param == TlsVersion::k1_2 ? "Tls12" : "Tls13";
                         });

TEST(SupplicantRequests, NaksAnotherMethodOnceAndRefusesWhatNoServerSends) {
  SeededRandom random(3);
  const TlsTestPki& pki = TlsTestPki::get();
  const SupplicantConfig c{.method = EapBenchMethod::kTls, .ca_file = pki.ca_file};
  auto tls = SupplicantTls::create(c);
  ASSERT_TRUE(tls.has_value()) << tls.error();
  EapSupplicant supplicant(c, *tls, "alice", "", random);
  EXPECT_EQ(supplicant.identity_response(), (Octets{2, 0, 0, 10, 1, 'a', 'l', 'i', 'c', 'e'}));
  // An EAP-MD5 Challenge first: a Legacy-Nak asking for EAP-TLS (13).
  auto nak = supplicant.on_request(Octets{1, 5, 0, 7, 4, 1, 0});
  ASSERT_TRUE(nak.has_value());
  EXPECT_EQ(*nak, (Octets{2, 5, 0, 6, 3, 13}));
  // A Response, a truncated packet, TLS data before the Start.
  EXPECT_EQ(supplicant.on_request(Octets{2, 6, 0, 6, 13, 0}).error(), SupplicantError::kMalformedRequest);
  EXPECT_EQ(supplicant.on_request(Octets{1, 6, 0, 9, 13}).error(), SupplicantError::kMalformedRequest);
  EXPECT_EQ(supplicant.on_request(Octets{1, 6, 0, 7, 13, 0, 22}).error(), SupplicantError::kFraming);
  // Started: another method is no longer negotiable.
  ASSERT_TRUE(supplicant.on_request(Octets{1, 7, 0, 6, 13, eap::kTlsFlagStart}).has_value());
  EXPECT_EQ(supplicant.on_request(Octets{1, 8, 0, 7, 4, 1, 0}).error(), SupplicantError::kUnexpectedType);
  EXPECT_EQ(supplicant.on_request(Octets{1, 9, 0, 6, 13, eap::kTlsFlagStart}).error(),
            SupplicantError::kFraming);
}

TEST(SupplicantTlsContext, MissingFilesAreSaid) {
  auto tls = SupplicantTls::create({.ca_file = "/nonexistent/ca.pem"});
  ASSERT_FALSE(tls.has_value());
  EXPECT_NE(tls.error().find("/nonexistent/ca.pem"), std::string::npos);
}

}  // namespace
}  // namespace rw::loadgen_shell
