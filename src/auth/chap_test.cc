// Tests for CHAP verification (RFC 1994 §4.1, RFC 2865 §2.2) with both
// challenge sources.
#include "auth/chap.h"

#include <gtest/gtest.h>

#include <vector>

#include "auth/vector_file_for_test.h"

namespace rw::auth {
namespace {

using testing::load_vectors;
using testing::VectorRecord;

// One record of chap.txt as the attributes of an Access-Request.
struct ChapExchange {
  explicit ChapExchange(std::size_t index) : record(load_vectors("chap.txt").at(index)) {
    chap_password.push_back(record.octet("Ident"));
    const auto response = record.bytes("Response");
    chap_password.insert(chap_password.end(), response.begin(), response.end());
    if (record.has("ChapChallenge")) {
      challenge = record.bytes("ChapChallenge");
      send_challenge = true;
    }
  }
  // Carries CHAP-Challenge only when the record has one.
  [[nodiscard]] ChapRequest request() const {
    return {.chap_password = chap_password,
            .chap_challenge = send_challenge ? std::optional<Bytes>(challenge) : std::nullopt,
            .request_authenticator = authenticator};
  }

  VectorRecord record;
  std::vector<std::uint8_t> chap_password;
  std::vector<std::uint8_t> authenticator = record.bytes("RequestAuthenticator");
  std::vector<std::uint8_t> challenge;
  bool send_challenge = false;
};

constexpr std::size_t kWithoutChallenge = 0;
constexpr std::size_t kWithChallenge = 1;

TEST(ChapResponse, MatchesTheGeneratedVectors) {
  for (const auto& record : load_vectors("chap.txt")) {
    const auto challenge =
        record.has("ChapChallenge") ? record.bytes("ChapChallenge") : record.bytes("RequestAuthenticator");
    const auto response = chap_response(record.octet("Ident"), record.text("Password"), challenge);
    EXPECT_EQ(std::vector<std::uint8_t>(response.begin(), response.end()), record.bytes("Response"));
  }
}

TEST(VerifyChap, UsesTheRequestAuthenticatorWhenThereIsNoChapChallenge) {
  const ChapExchange exchange(kWithoutChallenge);
  EXPECT_TRUE(
      verify_chap(Credential::cleartext(exchange.record.text("Password")), exchange.request()).has_value());
}

TEST(VerifyChap, UsesChapChallengeInsteadOfTheRequestAuthenticator) {
  ChapExchange exchange(kWithChallenge);
  const Credential credential = Credential::cleartext(exchange.record.text("Password"));
  EXPECT_TRUE(verify_chap(credential, exchange.request()).has_value());
  // The same response checked against the Request Authenticator must fail.
  exchange.send_challenge = false;
  EXPECT_EQ(verify_chap(credential, exchange.request()).error(), AuthError::kWrongPassword);
}

TEST(VerifyChap, RejectsAWrongPassword) {
  const ChapExchange exchange(kWithoutChallenge);
  EXPECT_EQ(verify_chap(Credential::cleartext("arctangenT"), exchange.request()).error(),
            AuthError::kWrongPassword);
}

TEST(VerifyChap, RejectsAHashedCredentialWithAClearReason) {
  const ChapExchange exchange(kWithoutChallenge);
  const auto nt = nt_password_hash("arctangent");
  ASSERT_TRUE(nt.has_value());
  EXPECT_EQ(verify_chap(Credential::nt_hash(*nt), exchange.request()).error(),
            AuthError::kChapNeedsCleartext);
  EXPECT_EQ(verify_chap(Credential::crypt("$6$x$y"), exchange.request()).error(),
            AuthError::kChapNeedsCleartext);
}

TEST(VerifyChap, RefusesAnEmptyStoredPassword) {
  const ChapExchange exchange(kWithoutChallenge);
  EXPECT_EQ(verify_chap(Credential::cleartext(""), exchange.request()).error(), AuthError::kEmptyPassword);
}

TEST(VerifyChap, RejectsAChapPasswordThatIsNot17Octets) {
  const std::vector<std::uint8_t> short_password(16, 0);
  const std::vector<std::uint8_t> authenticator(16, 0);
  const ChapRequest request{.chap_password = short_password,
                            .chap_challenge = std::nullopt,
                            .request_authenticator = authenticator};
  EXPECT_EQ(verify_chap(Credential::cleartext("x"), request).error(), AuthError::kMalformedChapPassword);
}

TEST(VerifyChap, RejectsAChapChallengeShorterThan5Octets) {
  const std::vector<std::uint8_t> chap_password(17, 0);
  const std::vector<std::uint8_t> challenge(4, 0);
  const std::vector<std::uint8_t> authenticator(16, 0);
  const ChapRequest request{.chap_password = chap_password,
                            .chap_challenge = Bytes(challenge),
                            .request_authenticator = authenticator};
  EXPECT_EQ(verify_chap(Credential::cleartext("x"), request).error(), AuthError::kMalformedChapChallenge);
}

TEST(ChapPassword, IsIdentThenTheResponseAndVerifies) {
  const std::vector<std::uint8_t> authenticator(16, 9);
  const auto value = chap_password(42, "wonderland", authenticator);
  EXPECT_EQ(value[0], 42);
  const auto response = chap_response(42, "wonderland", authenticator);
  EXPECT_TRUE(std::equal(response.begin(), response.end(), value.begin() + 1));
  const ChapRequest request{.chap_password = value, .request_authenticator = authenticator};
  EXPECT_TRUE(verify_chap(Credential::cleartext("wonderland"), request).has_value());
}

}  // namespace
}  // namespace rw::auth
