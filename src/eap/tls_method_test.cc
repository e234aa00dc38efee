// tls_method.h end to end against a real OpenSSL client (tls_peer_for_test.h)
// through the EAP-TLS framing with 1,000-octet fragments both ways: TLS 1.2
// and 1.3, the MSK against the client's export, each certificate failure
// with its reason, and hostile framing.
#include "eap/tls_method.h"

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "eap/tls_peer_for_test.h"

namespace rw::eap {
namespace {

using testing::Octets;
using testing::run_conversation;
using testing::TlsTestPeer;
using testing::TlsTestPki;

TlsServerContext server_context(bool with_crl = true) {
  auto context = TlsServerContext::create(TlsTestPki::get().server_config(with_crl));
  if (!context) ADD_FAILURE() << context.error().to_string();
  return *context;
}

// RFC 5216 §2.3 from the client's master secret through the PRF directly.
Msk tls12_msk_by_prf(SSL* ssl) {
  const Octets material = testing::tls12_prf_of_peer(ssl, "client EAP encryption", 128);
  Msk msk{};
  std::copy_n(material.begin(), msk.size(), msk.begin());
  return msk;
}

class EapTls : public ::testing::TestWithParam<TlsVersion> {
 protected:
  TlsTestPeer peer(const io::PemPair* certificate) {
    return TlsTestPeer(TlsTestPeer::Options{.version = GetParam(), .certificate = certificate});
  }
  TlsMethod method() { return TlsMethod(server_context(), "anonymous@example.org"); }
};

TEST_P(EapTls, ValidCertificateIsAcceptedWithTheClientsMsk) {
  TlsMethod tls = method();
  TlsTestPeer client = peer(&TlsTestPki::get().valid);
  int requests = 0;
  const MethodStep last = run_conversation(tls, client, &requests);
  ASSERT_EQ(last.kind, MethodStep::Kind::kSuccess) << last.reason;
  ASSERT_TRUE(last.msk.has_value());
  EXPECT_EQ(*last.msk, client.msk());
  if (GetParam() == TlsVersion::k1_2) {
    EXPECT_EQ(*last.msk, tls12_msk_by_prf(client.ssl()));
  }
  EXPECT_EQ(tls.version(), std::optional<TlsVersion>(GetParam()));
  // Both directions were fragmented at 1,000 octets: the server's first
  // flight and the peer's certificate flight each exceed it. Start, two
  // fragments, the ACK of the peer's first fragment, the last flight.
  EXPECT_GE(client.server_fragmented(), 1);
  EXPECT_GE(client.fragmented(), 1);
  EXPECT_EQ(client.framing_errors(), 0);
  EXPECT_GE(requests, 5);
  EXPECT_LE(requests, 8);
  EXPECT_EQ(tls.decided_identity(), "alice");
  EXPECT_EQ(tls.eap_identity(), "anonymous@example.org");
  ASSERT_TRUE(tls.peer_certificate().has_value());
  EXPECT_EQ(tls.peer_certificate()->subject_common_name, "alice");
  EXPECT_EQ(tls.peer_certificate()->subject_alt_names, std::vector<std::string>{"DNS:alice"});
  EXPECT_EQ(tls.peer_certificate()->issuer, "CN=radiusward-test-eap-ca");
  if (GetParam() == TlsVersion::k1_3) {
    // RFC 9190 §2.5: the protected success indication, one octet 0x00.
    EXPECT_EQ(client.application(), Octets{0x00});
  } else {
    EXPECT_TRUE(client.application().empty());
  }
  // A response after the end is refused.
  EXPECT_EQ(tls.on_response(Octets{0x00}).kind, MethodStep::Kind::kFailure);
}

TEST_P(EapTls, TwoHandshakesGiveDifferentMsks) {
  TlsMethod first = method();
  TlsMethod second = method();
  TlsTestPeer a = peer(&TlsTestPki::get().valid);
  TlsTestPeer b = peer(&TlsTestPki::get().valid);
  const MethodStep one = run_conversation(first, a);
  const MethodStep two = run_conversation(second, b);
  ASSERT_TRUE(one.msk && two.msk);
  EXPECT_NE(*one.msk, *two.msk);
}

// A rejected certificate: EAP-Failure with `reason`, after the alert went to
// the peer in a request (RFC 5216 §2.1.3), and no MSK.
void expect_rejected(TlsMethod& tls, TlsTestPeer& client, TlsFailure failure) {
  const MethodStep last = run_conversation(tls, client);
  EXPECT_EQ(last.kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(last.reason, to_string(failure));
  EXPECT_EQ(tls.tls_failure(), std::optional<TlsFailure>(failure));
  EXPECT_FALSE(last.msk.has_value());
  EXPECT_FALSE(tls.peer_certificate().has_value());
  EXPECT_TRUE(tls.decided_identity().empty());
  EXPECT_TRUE(client.alert_received());
}

TEST_P(EapTls, ExpiredCertificateIsRejected) {
  TlsMethod tls = method();
  TlsTestPeer client = peer(&TlsTestPki::get().expired);
  expect_rejected(tls, client, TlsFailure::kCertificateExpired);
}

TEST_P(EapTls, RevokedCertificateIsRejected) {
  TlsMethod tls = method();
  TlsTestPeer client = peer(&TlsTestPki::get().revoked);
  expect_rejected(tls, client, TlsFailure::kCertificateRevoked);
}

TEST_P(EapTls, RevokedCertificateIsAcceptedWithoutTheCrl) {
  TlsMethod tls(server_context(/*with_crl=*/false), "carol");
  TlsTestPeer client = peer(&TlsTestPki::get().revoked);
  EXPECT_EQ(run_conversation(tls, client).kind, MethodStep::Kind::kSuccess);
}

TEST_P(EapTls, ACertificateWithoutACrlOfItsIssuerIsRejected) {
  // CRL checking is on, but the only CRL loaded is another CA's.
  TlsServerConfig config = TlsTestPki::get().server_config();
  config.crl_file = TlsTestPki::get().other_crl_file;
  TlsMethod tls(*TlsServerContext::create(config), "alice");
  TlsTestPeer client = peer(&TlsTestPki::get().valid);
  expect_rejected(tls, client, TlsFailure::kCrlUnavailable);
}

TEST_P(EapTls, AnotherCasCertificateIsRejected) {
  TlsMethod tls = method();
  TlsTestPeer client = peer(&TlsTestPki::get().other_ca_client);
  expect_rejected(tls, client, TlsFailure::kUnknownCa);
}

TEST_P(EapTls, NoClientCertificateIsRejected) {
  TlsMethod tls = method();
  TlsTestPeer client = peer(nullptr);
  expect_rejected(tls, client, TlsFailure::kNoClientCertificate);
}

TEST_P(EapTls, APeerRefusingTheServerCertificateFails) {
  TlsMethod tls = method();
  TlsTestPeer client(TlsTestPeer::Options{
      .version = GetParam(), .certificate = &TlsTestPki::get().valid, .trust_server = false});
  const MethodStep last = run_conversation(tls, client);
  EXPECT_EQ(last.kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(tls.tls_failure(), std::optional<TlsFailure>(TlsFailure::kPeerAlert));
  EXPECT_EQ(last.reason, "TLS alert from the peer");
}

TEST_P(EapTls, ServerFragmentsAreAcknowledgedOneByOne) {
  // 64-octet fragments: every server flight is fragmented, and each of the
  // peer's ACKs brings the next fragment.
  TlsMethod tls(server_context(), "alice", TlsMethodOptions{.fragment_octets = kTlsFragmentOctetsMin});
  TlsTestPeer client(TlsTestPeer::Options{.version = GetParam(),
                                          .certificate = &TlsTestPki::get().valid,
                                          .fragment_octets = kTlsFragmentOctetsMin});
  int requests = 0;
  const MethodStep last = run_conversation(tls, client, &requests);
  ASSERT_EQ(last.kind, MethodStep::Kind::kSuccess) << last.reason;
  EXPECT_EQ(*last.msk, client.msk());
  EXPECT_GT(requests, 20);
  EXPECT_EQ(client.framing_errors(), 0);
}

TEST_P(EapTls, TooManyRoundTripsFail) {
  TlsMethod tls(server_context(), "alice",
                TlsMethodOptions{.fragment_octets = kTlsFragmentOctetsMin, .responses_max = 10});
  TlsTestPeer client(TlsTestPeer::Options{.version = GetParam(),
                                          .certificate = &TlsTestPki::get().valid,
                                          .fragment_octets = kTlsFragmentOctetsMin});
  const MethodStep last = run_conversation(tls, client);
  EXPECT_EQ(last.kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(tls.error(), std::optional<TlsMethodError>(TlsMethodError::kTooManyResponses));
}

// A RevocationChecker that answers what the test sets, and records what it was asked.
class SetRevocation final : public RevocationChecker {
 public:
  explicit SetRevocation(RevocationVerdict verdict) : verdict_(verdict) {}
  RevocationVerdict check(const RevocationQuery& query) override {
    asked_++;
    leaf_ = query.leaf != nullptr
                ? X509_NAME_oneline(X509_get_subject_name(query.leaf), buffer_, sizeof buffer_)
                : std::string();
    issuer_ = query.issuer != nullptr
                  ? X509_NAME_oneline(X509_get_subject_name(query.issuer), buffer_, sizeof buffer_)
                  : std::string();
    return verdict_;
  }
  RevocationVerdict verdict_;
  int asked_ = 0;
  std::string leaf_{};
  std::string issuer_{};

 private:
  char buffer_[256]{};
};

TlsServerContext context_with(std::shared_ptr<RevocationChecker> revocation, bool required,
                              std::size_t resumption_sessions = 0) {
  TlsServerConfig config = TlsTestPki::get().server_config();
  config.revocation = std::move(revocation);
  config.revocation_required = required;
  config.resumption_sessions_max = resumption_sessions;
  auto context = TlsServerContext::create(config);
  if (!context) ADD_FAILURE() << context.error().to_string();
  return *context;
}

TEST_P(EapTls, TheRevocationCheckerIsAskedOfTheClientCertificateAndItsIssuer) {
  auto checker = std::make_shared<SetRevocation>(RevocationVerdict::kGood);
  TlsMethod tls(context_with(checker, /*required=*/true), "alice");
  TlsTestPeer client = peer(&TlsTestPki::get().valid);
  EXPECT_EQ(run_conversation(tls, client).kind, MethodStep::Kind::kSuccess);
  EXPECT_EQ(checker->asked_, 1);
  EXPECT_EQ(checker->leaf_, "/CN=alice");
  EXPECT_EQ(checker->issuer_, "/CN=radiusward-test-eap-ca");
}

TEST_P(EapTls, ARevokedAnswerRejectsWithTheRevokedAlert) {
  TlsMethod tls(context_with(std::make_shared<SetRevocation>(RevocationVerdict::kRevoked), false), "alice");
  TlsTestPeer client = peer(&TlsTestPki::get().valid);
  expect_rejected(tls, client, TlsFailure::kCertificateRevoked);
}

TEST_P(EapTls, NoUsableAnswerRejectsOnlyWhenRevocationIsRequired) {
  TlsMethod hard(context_with(std::make_shared<SetRevocation>(RevocationVerdict::kUnknown), true), "alice");
  TlsTestPeer first = peer(&TlsTestPki::get().valid);
  expect_rejected(hard, first, TlsFailure::kRevocationUnknown);
  TlsMethod soft(context_with(std::make_shared<SetRevocation>(RevocationVerdict::kUnknown), false), "alice");
  TlsTestPeer second = peer(&TlsTestPki::get().valid);
  EXPECT_EQ(run_conversation(soft, second).kind, MethodStep::Kind::kSuccess);
}

TEST_P(EapTls, ASessionIsResumedWithItsCertificateAndANewMsk) {
  auto checker = std::make_shared<SetRevocation>(RevocationVerdict::kGood);
  const TlsServerContext context = context_with(checker, true, /*resumption_sessions=*/16);
  TlsMethod full(context, "alice");
  TlsTestPeer first = peer(&TlsTestPki::get().valid);
  const MethodStep one = run_conversation(full, first);
  ASSERT_EQ(one.kind, MethodStep::Kind::kSuccess) << one.reason;
  EXPECT_FALSE(full.resumed());
  SSL_SESSION* session = first.session();
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(context.resumable_sessions(), 1u);

  TlsMethod again(context, "anonymous");
  TlsTestPeer second(TlsTestPeer::Options{.version = GetParam(), .resume = session});
  const MethodStep two = run_conversation(again, second);
  SSL_SESSION_free(session);
  ASSERT_EQ(two.kind, MethodStep::Kind::kSuccess) << two.reason;
  EXPECT_TRUE(again.resumed());
  EXPECT_TRUE(second.resumed());
  // The certificate of the full handshake decides, verified again: the
  // checker was asked a second time.
  EXPECT_EQ(again.decided_identity(), "alice");
  EXPECT_EQ(checker->asked_, 2);
  ASSERT_TRUE(two.msk && one.msk);
  EXPECT_EQ(*two.msk, second.msk());
  EXPECT_NE(*two.msk, *one.msk);
}

TEST_P(EapTls, ASessionWhoseCertificateWasRevokedSinceIsNotResumed) {
  auto checker = std::make_shared<SetRevocation>(RevocationVerdict::kGood);
  const TlsServerContext context = context_with(checker, true, 16);
  TlsMethod full(context, "alice");
  TlsTestPeer first = peer(&TlsTestPki::get().valid);
  ASSERT_EQ(run_conversation(full, first).kind, MethodStep::Kind::kSuccess);
  SSL_SESSION* session = first.session();
  ASSERT_NE(session, nullptr);

  checker->verdict_ = RevocationVerdict::kRevoked;
  TlsMethod again(context, "alice");
  TlsTestPeer second(TlsTestPeer::Options{
      .version = GetParam(), .certificate = &TlsTestPki::get().valid, .resume = session});
  const MethodStep two = run_conversation(again, second);
  SSL_SESSION_free(session);
  // Not resumed: a full handshake, whose certificate is refused.
  EXPECT_EQ(two.kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(two.reason, to_string(TlsFailure::kCertificateRevoked));
  EXPECT_FALSE(second.resumed());
  EXPECT_EQ(context.resumable_sessions(), 0u);
}

TEST_P(EapTls, WithoutResumptionAnOfferedSessionIsNotResumed) {
  const TlsServerContext context = server_context();
  TlsMethod full(context, "alice");
  TlsTestPeer first = peer(&TlsTestPki::get().valid);
  ASSERT_EQ(run_conversation(full, first).kind, MethodStep::Kind::kSuccess);
  // The server gave nothing to resume with: no ticket, no session ID.
  EXPECT_EQ(first.session(), nullptr);
  // And the client's session, offered anyway, is not resumed.
  SSL_SESSION* session = SSL_get1_session(first.ssl());
  ASSERT_NE(session, nullptr);
  TlsMethod again(context, "alice");
  TlsTestPeer second(TlsTestPeer::Options{
      .version = GetParam(), .certificate = &TlsTestPki::get().valid, .resume = session});
  EXPECT_EQ(run_conversation(again, second).kind, MethodStep::Kind::kSuccess);
  EXPECT_FALSE(second.resumed());
  SSL_SESSION_free(session);
}

TEST_P(EapTls, ResumptionKeepsAtMostItsBound) {
  const TlsServerContext context = context_with(nullptr, false, 2);
  for (int i = 0; i < 4; ++i) {
    TlsMethod tls(context, "alice");
    TlsTestPeer client = peer(&TlsTestPki::get().valid);
    ASSERT_EQ(run_conversation(tls, client).kind, MethodStep::Kind::kSuccess);
  }
  EXPECT_EQ(context.resumable_sessions(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Versions, EapTls, ::testing::Values(TlsVersion::k1_2, TlsVersion::k1_3),
                         [](const auto& version) {
                           return version.param == TlsVersion::k1_2 ? "Tls12" : "Tls13";
                         });

TEST(EapTlsStart, IsTheSFlagAlone) {
  TlsMethod tls(server_context(), "alice");
  const MethodStep start = tls.start();
  EXPECT_EQ(start.kind, MethodStep::Kind::kRequest);
  EXPECT_EQ(start.type_data, Octets{kTlsFlagStart});
  EXPECT_EQ(tls.type(), Type::kTls);
}

// The method's answer to one hostile response right after the Start.
MethodStep after_start(TlsMethod& tls, const Octets& response) {
  (void)tls.start();
  return tls.on_response(response);
}

TEST(EapTlsHostile, FramingErrorsFailWithTheirReason) {
  const std::vector<std::pair<Octets, TlsFrameError>> cases = {
      {Octets{}, TlsFrameError::kNoFlags},
      {Octets{0x80, 0x00}, TlsFrameError::kTruncatedLength},
      {Octets{0x20}, TlsFrameError::kStartFromPeer},
      {Octets{0xC0, 0x01, 0x00, 0x00, 0x01, 0x16}, TlsFrameError::kMessageTooLarge},
      {Octets{0x80, 0x00, 0x00, 0x00, 0x05, 0x16}, TlsFrameError::kShorterThanAnnounced},
      {Octets{0x40, 0x16}, TlsFrameError::kFirstFragmentNoLength},
  };
  for (const auto& [response, error] : cases) {
    TlsMethod tls(server_context(), "alice");
    const MethodStep step = after_start(tls, response);
    EXPECT_EQ(step.kind, MethodStep::Kind::kFailure);
    EXPECT_EQ(tls.frame_error(), std::optional<TlsFrameError>(error)) << to_string(error);
    EXPECT_EQ(step.reason, "EAP-TLS framing refused: " + std::string(to_string(error)));
  }
}

TEST(EapTlsHostile, MOnTheLastFragmentFails) {
  TlsMethod tls(server_context(), "alice");
  const MethodStep first = after_start(tls, Octets{0xC0, 0x00, 0x00, 0x00, 0x02, 0x16});
  ASSERT_EQ(first.kind, MethodStep::Kind::kRequest);
  EXPECT_EQ(first.type_data, Octets{0x00});  // Our ACK of the first fragment.
  const MethodStep second = tls.on_response(Octets{0x40, 0x03});
  EXPECT_EQ(second.kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(tls.frame_error(), std::optional<TlsFrameError>(TlsFrameError::kMoreAfterComplete));
}

TEST(EapTlsHostile, MoreFragmentsThanTheBoundFail) {
  TlsMethod tls(server_context(), "alice",
                TlsMethodOptions{.reassembly = TlsReassemblyLimits{.fragments_max = 4}});
  MethodStep step = after_start(tls, Octets{0xC0, 0x00, 0x00, 0x10, 0x00, 0x16});
  for (int i = 0; i < 3; ++i) {  // The second to the fourth: within the bound.
    ASSERT_EQ(step.kind, MethodStep::Kind::kRequest);
    EXPECT_EQ(step.type_data, Octets{0x00});
    step = tls.on_response(Octets{0x40, 0x01});
  }
  ASSERT_EQ(step.kind, MethodStep::Kind::kRequest);
  step = tls.on_response(Octets{0x40, 0x01});  // The fifth.
  EXPECT_EQ(step.kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(tls.frame_error(), std::optional<TlsFrameError>(TlsFrameError::kTooManyFragments));
}

TEST(EapTlsHostile, GarbageInsteadOfAClientHelloFails) {
  TlsMethod tls(server_context(), "alice");
  // A whole record holding a ClientHello with an empty body.
  const MethodStep step =
      after_start(tls, Octets{0x00, 0x16, 0x03, 0x01, 0x00, 0x04, 0x01, 0x00, 0x00, 0x00});
  // OpenSSL answers with an alert, sent in a request; the next response ends it.
  ASSERT_EQ(step.kind, MethodStep::Kind::kRequest);
  EXPECT_EQ(step.type_data[0], 0x00);
  EXPECT_EQ(step.type_data[1], 0x15);  // A TLS alert record.
  const MethodStep last = tls.on_response(Octets{0x00});
  EXPECT_EQ(last.kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(last.reason, "TLS handshake failed");
  EXPECT_EQ(tls.error(), std::optional<TlsMethodError>(TlsMethodError::kTls));
}

TEST(EapTlsHostile, APartialRecordFails) {
  // A record header announcing more than arrived: TLS waits for more, but
  // EAP-TLS carries whole messages, so the conversation fails.
  TlsMethod tls(server_context(), "alice");
  EXPECT_EQ(after_start(tls, Octets{0x00, 0x16, 0x03, 0x01, 0x00, 0x20, 0x01}).kind,
            MethodStep::Kind::kFailure);
  EXPECT_EQ(tls.error(), std::optional<TlsMethodError>(TlsMethodError::kIncompleteFlight));
}

TEST(EapTlsHostile, AnAckInsteadOfAClientHelloFails) {
  TlsMethod tls(server_context(), "alice");
  EXPECT_EQ(after_start(tls, Octets{0x00}).kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(tls.error(), std::optional<TlsMethodError>(TlsMethodError::kUnexpectedAck));
}

TEST(EapTlsHostile, AResponseBeforeStartFails) {
  TlsMethod tls(server_context(), "alice");
  EXPECT_EQ(tls.on_response(Octets{0x00}).kind, MethodStep::Kind::kFailure);
}

TEST(EapTlsHostile, AFragmentWhereAnAckWasDueFails) {
  // Drive a real handshake with 64-octet server fragments, then answer the
  // first fragment of the server's flight with data instead of an ACK.
  TlsMethod tls(server_context(), "alice", TlsMethodOptions{.fragment_octets = kTlsFragmentOctetsMin});
  TlsTestPeer client(
      TlsTestPeer::Options{.version = TlsVersion::k1_3, .certificate = &TlsTestPki::get().valid});
  const MethodStep start = tls.start();
  const MethodStep flight = tls.on_response(client.on_request(start.type_data));
  ASSERT_EQ(flight.kind, MethodStep::Kind::kRequest);
  ASSERT_NE(flight.type_data[0] & kTlsFlagMore, 0);
  EXPECT_EQ(tls.on_response(Octets{0x00, 0x16}).kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(tls.error(), std::optional<TlsMethodError>(TlsMethodError::kExpectedAck));
}

TEST(TlsServerContext, ErrorsNameTheFile) {
  const TlsTestPki& pki = TlsTestPki::get();
  TlsServerConfig config = pki.server_config();
  config.certificate_chain_file = pki.dir + "/missing.pem";
  auto missing = TlsServerContext::create(config);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().kind, TlsContextError::Kind::kCertificateChain);
  EXPECT_NE(missing.error().to_string().find(pki.dir + "/missing.pem: "), std::string::npos)
      << missing.error().to_string();

  config = pki.server_config();
  config.private_key_file = pki.write("other.key", pki.valid.key);
  auto mismatch = TlsServerContext::create(config);
  ASSERT_FALSE(mismatch.has_value());
  EXPECT_EQ(mismatch.error().kind, TlsContextError::Kind::kPrivateKey);

  config = pki.server_config();
  config.crl_file = pki.write("not_a_crl.pem", "hello\n");
  auto crl = TlsServerContext::create(config);
  ASSERT_FALSE(crl.has_value());
  EXPECT_EQ(crl.error().kind, TlsContextError::Kind::kCrlFile);
  EXPECT_EQ(crl.error().file, pki.dir + "/not_a_crl.pem");

  config = pki.server_config();
  config.ca_file = pki.write("empty_ca.pem", "");
  EXPECT_EQ(TlsServerContext::create(config).error().kind, TlsContextError::Kind::kCaFile);

  config = pki.server_config();
  config.ca_path = pki.dir + "/no_such_folder";
  EXPECT_EQ(TlsServerContext::create(config).error().kind, TlsContextError::Kind::kCaPath);

  config = pki.server_config();
  config.min_version = TlsVersion::k1_3;
  config.max_version = TlsVersion::k1_2;
  EXPECT_EQ(TlsServerContext::create(config).error().kind, TlsContextError::Kind::kVersions);
}

TEST(TlsServerContext, ACaFolderOfHashLinksIsTrusted) {
  // The CA file names only the other CA; the folder holds the real one
  // under its subject hash (what c_rehash makes).
  const TlsTestPki& pki = TlsTestPki::get();
  std::FILE* ca_pem = std::fopen(pki.ca_file.c_str(), "r");
  ASSERT_NE(ca_pem, nullptr);
  X509* ca = PEM_read_X509(ca_pem, nullptr, nullptr, nullptr);
  std::fclose(ca_pem);
  ASSERT_NE(ca, nullptr);
  char name[32];
  std::snprintf(name, sizeof name, "%08lx.0", X509_subject_name_hash(ca));
  X509_free(ca);
  const std::string folder = pki.dir + "/capath";
  std::filesystem::create_directories(folder);
  std::filesystem::copy_file(pki.ca_file, folder + "/" + name,
                             std::filesystem::copy_options::overwrite_existing);

  TlsServerConfig config = pki.server_config(/*with_crl=*/false);
  config.ca_file = pki.other_ca_file;
  TlsTestPeer alice(TlsTestPeer::Options{.version = TlsVersion::k1_3, .certificate = &pki.valid});
  TlsMethod without(*TlsServerContext::create(config), "alice");
  EXPECT_EQ(run_conversation(without, alice).kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(without.tls_failure(), std::optional<TlsFailure>(TlsFailure::kUnknownCa));

  config.ca_path = folder;
  auto context = TlsServerContext::create(config);
  ASSERT_TRUE(context.has_value()) << context.error().to_string();
  TlsTestPeer again(TlsTestPeer::Options{.version = TlsVersion::k1_3, .certificate = &pki.valid});
  TlsMethod with(*context, "alice");
  const MethodStep last = run_conversation(with, again);
  EXPECT_EQ(last.kind, MethodStep::Kind::kSuccess) << last.reason;
}

TEST(TlsServerContext, VersionBoundsAreEnforced) {
  TlsServerConfig config = TlsTestPki::get().server_config();
  config.min_version = TlsVersion::k1_3;
  auto context = TlsServerContext::create(config);
  ASSERT_TRUE(context.has_value()) << context.error().to_string();
  TlsMethod tls(*context, "alice");
  TlsTestPeer client(
      TlsTestPeer::Options{.version = TlsVersion::k1_2, .certificate = &TlsTestPki::get().valid});
  const MethodStep last = run_conversation(tls, client);
  EXPECT_EQ(last.kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(tls.tls_failure(), std::optional<TlsFailure>(TlsFailure::kHandshakeFailed));
}

TEST(TlsServerContext, OnlyAContextRequiringACertificateResumes) {
  TlsServerConfig config = TlsTestPki::get().server_config();
  config.require_client_certificate = false;
  config.resumption_sessions_max = 8;
  auto context = TlsServerContext::create(config);
  ASSERT_FALSE(context.has_value());
  EXPECT_EQ(context.error().kind, TlsContextError::Kind::kResumption);
}

TEST(TlsFailure, EveryFailureHasAName) {
  for (int f = 0; f <= static_cast<int>(TlsFailure::kInternal); ++f) {
    EXPECT_NE(to_string(static_cast<TlsFailure>(f)), "TLS failure") << f;
  }
  for (int e = 0; e <= static_cast<int>(TlsMethodError::kTls); ++e) {
    EXPECT_NE(to_string(static_cast<TlsMethodError>(e)), "EAP-TLS failure") << e;
  }
}

}  // namespace
}  // namespace rw::eap
