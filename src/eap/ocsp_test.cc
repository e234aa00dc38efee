// ocsp.h against answers of a real responder: OpenSSL's `openssl ocsp`
// command signs answers to our requests from an index of the test CA
// (good, revoked, unknown serials), also as another CA and to another
// request's nonce; the judgment's time window with `now` moved.
#include "eap/ocsp.h"

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "eap/tls_peer_for_test.h"

namespace rw::eap {
namespace {

using testing::TlsTestPki;

using testing::ocsp_index_line;
using testing::OwnedX509;

OwnedX509 parse(const std::string& pem) { return testing::parse_certificate(pem); }

OwnedX509 read_file(const std::string& path) {
  std::ifstream in(path);
  return parse(std::string(std::istreambuf_iterator<char>(in), {}));
}

class OcspAnswers : public ::testing::Test {
 protected:
  void SetUp() override {
    const TlsTestPki& pki = TlsTestPki::get();
    ca_ = read_file(pki.ca_file);
    valid_ = parse(pki.valid.cert);
    revoked_ = parse(pki.revoked.cert);
    expired_ = parse(pki.expired.cert);  // Left out of the index: "unknown".
    ASSERT_TRUE(ca_ && valid_ && revoked_ && expired_);
    index_ = pki.write("ocsp_index.txt",
                       ocsp_index_line('V', valid_.get()) + ocsp_index_line('R', revoked_.get()));
    store_ = X509_STORE_new();
    X509_STORE_add_cert(store_, ca_.get());
  }
  void TearDown() override { X509_STORE_free(store_); }

  static std::array<std::uint8_t, kOcspNonceOctets> nonce(std::uint8_t fill) {
    std::array<std::uint8_t, kOcspNonceOctets> value{};
    value.fill(fill);
    return value;
  }

  // The responder's answer to `request`, signed by the test CA (or, with
  // `other`, by a CA the store does not trust).
  std::vector<std::uint8_t> answer(const OcspRequest& request, bool other = false, const char* extra = "") {
    const TlsTestPki& pki = TlsTestPki::get();
    const std::string request_file = pki.dir + "/ocsp_request.der";
    const std::string response_file = pki.dir + "/ocsp_response.der";
    std::ofstream(request_file, std::ios::binary)
        .write(reinterpret_cast<const char*>(request.der().data()),
               static_cast<std::streamsize>(request.der().size()));
    const std::string signer = other ? pki.other_ca_key_pair_file : pki.ca_key_pair_file;
    const std::string command = "openssl ocsp -index " + index_ + " -CA " + pki.ca_file + " -rsigner " +
                                signer + " -rkey " + signer + " -reqin " + request_file + " -respout " +
                                response_file + " " + extra + " >/dev/null 2>&1";
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
    std::ifstream in(response_file, std::ios::binary);
    return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), {});
  }

  Result<eap::OcspJudgment, OcspError> judge(const OcspRequest& request,
                                             const std::vector<std::uint8_t>& response,
                                             std::int64_t shift_s = 0) {
    return judge_ocsp_response(
        request, response, store_, nullptr,
        OcspJudgeOptions{.now_unix_s = static_cast<std::int64_t>(std::time(nullptr)) + shift_s});
  }

  OcspRequest request_for(X509* leaf, std::uint8_t fill = 1) {
    auto request = OcspRequest::create(leaf, ca_.get(), nonce(fill));
    EXPECT_TRUE(request.has_value());
    return std::move(*request);
  }

  OwnedX509 ca_, valid_, revoked_, expired_;
  std::string index_;
  X509_STORE* store_ = nullptr;
};

TEST_F(OcspAnswers, GoodRevokedAndUnknownAreRead) {
  const OcspRequest good = request_for(valid_.get());
  auto judged = judge(good, answer(good, false, "-nmin 10"));
  ASSERT_TRUE(judged.has_value()) << to_string(judged.error());
  EXPECT_EQ(judged->status, CertificateStatus::kGood);
  // nextUpdate, ten minutes on, bounds the reuse.
  EXPECT_NEAR(judged->good_until_unix_s, std::time(nullptr) + 600, 60);

  const OcspRequest revoked = request_for(revoked_.get());
  judged = judge(revoked, answer(revoked));
  ASSERT_TRUE(judged.has_value()) << to_string(judged.error());
  EXPECT_EQ(judged->status, CertificateStatus::kRevoked);

  const OcspRequest unknown = request_for(expired_.get());
  judged = judge(unknown, answer(unknown));
  ASSERT_TRUE(judged.has_value()) << to_string(judged.error());
  EXPECT_EQ(judged->status, CertificateStatus::kUnknown);
}

TEST_F(OcspAnswers, AnAnswerSignedByAnotherCaIsRefused) {
  const OcspRequest good = request_for(valid_.get());
  auto judged = judge(good, answer(good, /*other=*/true));
  ASSERT_FALSE(judged.has_value());
  EXPECT_EQ(judged.error(), OcspError::kBadSignature);
}

TEST_F(OcspAnswers, AnAnswerToAnotherNonceIsRefused) {
  const OcspRequest ours = request_for(valid_.get(), 1);
  const OcspRequest theirs = request_for(valid_.get(), 2);
  auto judged = judge(ours, answer(theirs));
  ASSERT_FALSE(judged.has_value());
  EXPECT_EQ(judged.error(), OcspError::kNonceMismatch);
}

TEST_F(OcspAnswers, AnAnswerAboutAnotherCertificateHasNoStatus) {
  const OcspRequest about_valid = request_for(valid_.get(), 1);
  const OcspRequest about_revoked = request_for(revoked_.get(), 1);  // Same nonce, another CertID.
  auto judged = judge(about_valid, answer(about_revoked));
  ASSERT_FALSE(judged.has_value());
  EXPECT_EQ(judged.error(), OcspError::kNoStatus);
}

TEST_F(OcspAnswers, TheTimeWindowIsKept) {
  const OcspRequest good = request_for(valid_.get());
  const auto response = answer(good, false, "-nmin 10");
  // Past nextUpdate (plus the five minutes of skew).
  auto judged = judge(good, response, 20 * 60);
  ASSERT_FALSE(judged.has_value());
  EXPECT_EQ(judged.error(), OcspError::kExpired);
  // thisUpdate in the future.
  judged = judge(good, response, -20 * 60);
  ASSERT_FALSE(judged.has_value());
  EXPECT_EQ(judged.error(), OcspError::kNotYetValid);
  // Without nextUpdate, thisUpdate bounds the age: an hour by default.
  const auto undated = answer(good);
  EXPECT_TRUE(judge(good, undated, 30 * 60).has_value());
  judged = judge(good, undated, 2 * 3600);
  ASSERT_FALSE(judged.has_value());
  EXPECT_EQ(judged.error(), OcspError::kExpired);
}

TEST_F(OcspAnswers, HostileBytesAreRefused) {
  const OcspRequest good = request_for(valid_.get());
  std::vector<std::uint8_t> response = answer(good);
  EXPECT_EQ(judge(good, {}).error(), OcspError::kMalformed);
  EXPECT_EQ(judge(good, {0x30, 0x03, 0x0a, 0x01, 0x03}).error(), OcspError::kNotSuccessful);  // tryLater.
  std::vector<std::uint8_t> cut(response.begin(), response.end() - 1);
  EXPECT_EQ(judge(good, cut).error(), OcspError::kMalformed);
  std::vector<std::uint8_t> longer = response;
  longer.push_back(0);
  EXPECT_EQ(judge(good, longer).error(), OcspError::kMalformed);
  // A flipped bit in the signed part.
  response[response.size() / 2] ^= 0x01;
  EXPECT_FALSE(judge(good, response).has_value());
}

TEST(OcspUrls, NoAuthorityInformationAccessNamesNone) {
  OwnedX509 cert = parse(TlsTestPki::get().valid.cert);
  EXPECT_TRUE(ocsp_urls_of(cert.get()).empty());
}

TEST(OcspNames, EveryErrorAndStatusHasAName) {
  for (int e = 0; e <= static_cast<int>(OcspError::kExpired); ++e) {
    EXPECT_FALSE(to_string(static_cast<OcspError>(e)).empty());
  }
  EXPECT_EQ(to_string(CertificateStatus::kRevoked), "revoked");
}

}  // namespace
}  // namespace rw::eap
