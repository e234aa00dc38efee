// Tests for MS-CHAPv2 (RFC 2759 §9 vectors) and MS-CHAPv1 (RFC 2433 §B
// vectors) as carried in RFC 2548 attributes.
#include "auth/mschap.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "auth/vector_file_for_test.h"
#include "base/random.h"

namespace rw::auth {
namespace {

using testing::load_vector;
using testing::load_vectors;
using testing::to_vector;
using testing::VectorRecord;

NtHash nt_hash_from(const std::vector<std::uint8_t>& bytes) { return testing::to_array<kNtHashSize>(bytes); }

// The RFC 2759 §9.2 exchange as RADIUS carries it (RFC 2548 §2.3.2).
struct MsChap2Exchange {
  VectorRecord vector = load_vector("rfc2759_9_2_hash_example.txt");
  std::vector<std::uint8_t> challenge = vector.bytes("AuthenticatorChallenge");
  std::vector<std::uint8_t> response = build_response(vector);
  std::string user_name = vector.text("UserName");

  static constexpr std::uint8_t kIdent = 0x2A;

  static std::vector<std::uint8_t> build_response(const VectorRecord& vector) {
    std::vector<std::uint8_t> value{kIdent, 0x00};
    const auto peer = vector.bytes("PeerChallenge");
    const auto nt_response = vector.bytes("NtResponse");
    value.insert(value.end(), peer.begin(), peer.end());
    value.insert(value.end(), 8, 0x00);
    value.insert(value.end(), nt_response.begin(), nt_response.end());
    return value;
  }
  [[nodiscard]] MsChap2Request request() const {
    return {.ms_chap_challenge = challenge, .ms_chap2_response = response, .user_name = user_name};
  }
};

// The RFC 2433 §B.2 exchange as RADIUS carries it (RFC 2548 §2.1.3), with
// Flags = 1 (use the NT-Response) and a zero LM-Response.
struct MsChap1Exchange {
  VectorRecord vector = load_vector("rfc2433_b_2_hash_example.txt");
  std::vector<std::uint8_t> challenge = vector.bytes("Challenge");
  std::vector<std::uint8_t> response = build_response(vector, 0x01);

  static std::vector<std::uint8_t> build_response(const VectorRecord& vector, std::uint8_t flags) {
    std::vector<std::uint8_t> value{0x07, flags};
    value.insert(value.end(), 24, 0x00);
    const auto nt_response = vector.bytes("NtChallengeResponse");
    value.insert(value.end(), nt_response.begin(), nt_response.end());
    return value;
  }
  [[nodiscard]] MsChap1Request request() const {
    return {.ms_chap_challenge = challenge, .ms_chap_response = response};
  }
};

TEST(ExpandDesKey, MatchesRfc2759ParityExample) {
  for (const auto& record : load_vectors("rfc2759_9_3_des_keys.txt")) {
    EXPECT_EQ(to_vector(expand_des_key(record.bytes("RawKey"))), record.bytes("DesKey"));
  }
}

TEST(DesEncryptBlock, UsesAWeakKeyAsItComes) {
  // FIPS 81 / NBS validation: DES under the weak key 0101010101010101 (seven
  // zero octets after parity expansion) encrypts 0000000000000000 to 8CA64DE9C1B123A7.
  const std::array<std::uint8_t, 8> clear{};
  const std::array<std::uint8_t, 7> key{};
  EXPECT_EQ(to_vector(des_encrypt_block(clear, key)),
            (std::vector<std::uint8_t>{0x8C, 0xA6, 0x4D, 0xE9, 0xC1, 0xB1, 0x23, 0xA7}));
}

TEST(ChallengeHash, MatchesRfc2759) {
  const auto vector = load_vector("rfc2759_9_2_hash_example.txt");
  const auto challenge = challenge_hash(vector.bytes("PeerChallenge"), vector.bytes("AuthenticatorChallenge"),
                                        vector.text("UserName"));
  EXPECT_EQ(to_vector(challenge), vector.bytes("Challenge"));
}

TEST(ChallengeResponse, MatchesRfc2759) {
  const auto vector = load_vector("rfc2759_9_2_hash_example.txt");
  const auto response =
      challenge_response(vector.bytes("Challenge"), nt_hash_from(vector.bytes("PasswordHash")));
  EXPECT_EQ(to_vector(response), vector.bytes("NtResponse"));
}

TEST(ChallengeResponse, MatchesRfc2433ForMsChapV1) {
  const auto vector = load_vector("rfc2433_b_2_hash_example.txt");
  const auto response =
      challenge_response(vector.bytes("Challenge"), nt_hash_from(vector.bytes("PasswordHash")));
  EXPECT_EQ(to_vector(response), vector.bytes("NtChallengeResponse"));
}

TEST(AuthenticatorResponse, MatchesRfc2759) {
  const auto vector = load_vector("rfc2759_9_2_hash_example.txt");
  const auto text = authenticator_response(nt_hash_from(vector.bytes("PasswordHash")),
                                           vector.bytes("NtResponse"), vector.bytes("PeerChallenge"),
                                           vector.bytes("AuthenticatorChallenge"), vector.text("UserName"));
  EXPECT_EQ(std::string(text.data(), text.size()), vector.text("AuthenticatorResponse"));
}

TEST(MsChapUserName, StripsTheWindowsDomain) {
  EXPECT_EQ(ms_chap_user_name("EXAMPLE\\User"), "User");
  EXPECT_EQ(ms_chap_user_name("User"), "User");
  EXPECT_EQ(ms_chap_user_name("user@example.com"), "user@example.com");
}

TEST(LmPasswordHash, MatchesTheGeneratedVectors) {
  for (const auto& record : load_vectors("lm_hashes.txt")) {
    SCOPED_TRACE(record.text("Password"));
    const auto hash = lm_password_hash(record.text("Password"));
    ASSERT_TRUE(hash.has_value());
    EXPECT_EQ(to_vector(*hash), record.bytes("LmHash"));
  }
}

TEST(LmPasswordHash, HasNoValueForLongOrNonAsciiPasswords) {
  EXPECT_FALSE(lm_password_hash("fifteen-letters").has_value());
  EXPECT_FALSE(lm_password_hash("pässwörd").has_value());
}

TEST(VerifyMsChap2, AcceptsTheRfc2759ExchangeFromACleartextPassword) {
  const MsChap2Exchange exchange;
  const auto accept =
      verify_ms_chap2(Credential::cleartext(exchange.vector.text("Password")), exchange.request());
  ASSERT_TRUE(accept.has_value()) << to_string(accept.error());
  std::string expected(1, static_cast<char>(MsChap2Exchange::kIdent));
  expected += exchange.vector.text("AuthenticatorResponse");
  EXPECT_EQ(as_chars(accept->ms_chap2_success), expected);
}

TEST(VerifyMsChap2, AcceptsTheRfc2759ExchangeFromAnNtPassword) {
  const MsChap2Exchange exchange;
  const auto credential = Credential::nt_hash(nt_hash_from(exchange.vector.bytes("PasswordHash")));
  EXPECT_TRUE(verify_ms_chap2(credential, exchange.request()).has_value());
}

TEST(VerifyMsChap2, ReturnsTheRfc3079ServerSendKey) {
  const MsChap2Exchange exchange;
  const auto keys = load_vector("rfc3079_3_5_3_128bit_keys.txt");
  const auto accept =
      verify_ms_chap2(Credential::cleartext(exchange.vector.text("Password")), exchange.request());
  ASSERT_TRUE(accept.has_value());
  EXPECT_EQ(to_vector(accept->mppe.send_key), keys.bytes("SendStartKey128"));
  EXPECT_NE(accept->mppe.recv_key, accept->mppe.send_key);
}

TEST(VerifyMsChap2, StripsTheDomainFromTheUserName) {
  MsChap2Exchange exchange;
  exchange.user_name = "EXAMPLE\\User";
  EXPECT_TRUE(verify_ms_chap2(Credential::cleartext("clientPass"), exchange.request()).has_value());
}

TEST(VerifyMsChap2, RejectsAWrongPassword) {
  const MsChap2Exchange exchange;
  EXPECT_EQ(verify_ms_chap2(Credential::cleartext("clientPasS"), exchange.request()).error(),
            AuthError::kWrongPassword);
}

TEST(VerifyMsChap2, RejectsAnotherUserName) {
  MsChap2Exchange exchange;
  exchange.user_name = "Other";
  EXPECT_EQ(verify_ms_chap2(Credential::cleartext("clientPass"), exchange.request()).error(),
            AuthError::kWrongPassword);
}

TEST(VerifyMsChap2, RejectsACryptCredentialWithAClearReason) {
  const MsChap2Exchange exchange;
  EXPECT_EQ(verify_ms_chap2(Credential::crypt("$6$salt$hash"), exchange.request()).error(),
            AuthError::kMsChapNeedsNtHash);
}

TEST(VerifyMsChap2, RefusesAnEmptyStoredPassword) {
  const MsChap2Exchange exchange;
  EXPECT_EQ(verify_ms_chap2(Credential::cleartext(""), exchange.request()).error(),
            AuthError::kEmptyPassword);
}

TEST(VerifyMsChap2, RejectsAChallengeThatIsNot16Octets) {
  MsChap2Exchange exchange;
  exchange.challenge.pop_back();
  EXPECT_EQ(verify_ms_chap2(Credential::cleartext("clientPass"), exchange.request()).error(),
            AuthError::kMalformedMsChapChallenge);
}

TEST(VerifyMsChap2, RejectsAResponseThatIsNot50Octets) {
  MsChap2Exchange exchange;
  exchange.response.pop_back();
  EXPECT_EQ(verify_ms_chap2(Credential::cleartext("clientPass"), exchange.request()).error(),
            AuthError::kMalformedMsChapResponse);
}

TEST(MsChap2Error, CarriesIdentAndTheRfc2759FailureString) {
  SeededRandom random(7);
  const MsChapError error = ms_chap2_error(0x2A, random);
  ASSERT_GE(error.size, 1u);
  EXPECT_EQ(error.value()[0], 0x2A);
  const std::string text(as_chars(error.value().subspan(1)));
  EXPECT_TRUE(std::regex_match(text, std::regex("E=691 R=0 C=[0-9A-F]{32} V=3 M=Authentication failed")))
      << text;
}

TEST(MsChap2Error, TakesTheNewChallengeFromTheRandomSource) {
  SeededRandom random(7);
  const MsChapError first = ms_chap2_error(1, random);
  const MsChapError second = ms_chap2_error(1, random);
  EXPECT_NE(as_chars(first.value()), as_chars(second.value()));
  SeededRandom replay(7);
  EXPECT_EQ(as_chars(ms_chap2_error(1, replay).value()), as_chars(first.value()));
}

TEST(MsChapIdent, IsTheFirstOctetOrZero) {
  const std::array<std::uint8_t, 2> value{0x09, 0x01};
  EXPECT_EQ(ms_chap_ident(value), 0x09);
  EXPECT_EQ(ms_chap_ident({}), 0x00);
}

TEST(VerifyMsChap1, AcceptsTheRfc2433ExchangeFromACleartextPassword) {
  const MsChap1Exchange exchange;
  EXPECT_TRUE(verify_ms_chap1(Credential::cleartext(exchange.vector.text("Password")), exchange.request())
                  .has_value());
}

TEST(VerifyMsChap1, AcceptsTheRfc2433ExchangeFromAnNtPassword) {
  const MsChap1Exchange exchange;
  const auto credential = Credential::nt_hash(nt_hash_from(exchange.vector.bytes("PasswordHash")));
  EXPECT_TRUE(verify_ms_chap1(credential, exchange.request()).has_value());
}

TEST(VerifyMsChap1, RejectsAWrongPassword) {
  const MsChap1Exchange exchange;
  EXPECT_EQ(verify_ms_chap1(Credential::cleartext("MyPW"), exchange.request()).error(),
            AuthError::kWrongPassword);
}

TEST(VerifyMsChap1, RefusesTheLanManagerResponse) {
  MsChap1Exchange exchange;
  exchange.response = MsChap1Exchange::build_response(exchange.vector, 0x00);
  EXPECT_EQ(verify_ms_chap1(Credential::cleartext("MyPw"), exchange.request()).error(),
            AuthError::kLmResponseNotSupported);
}

TEST(VerifyMsChap1, RejectsAChallengeThatIsNot8Octets) {
  MsChap1Exchange exchange;
  exchange.challenge.push_back(0);
  EXPECT_EQ(verify_ms_chap1(Credential::cleartext("MyPw"), exchange.request()).error(),
            AuthError::kMalformedMsChapChallenge);
}

TEST(VerifyMsChap1, ReturnsLmKeyNtKeyAndPaddingFromACleartextPassword) {
  const MsChap1Exchange exchange;
  const auto accept = verify_ms_chap1(Credential::cleartext("MyPw"), exchange.request());
  ASSERT_TRUE(accept.has_value());
  std::vector<std::uint8_t> expected = {0x75, 0xBA, 0x30, 0x19,
                                        0x8E, 0x6D, 0x19, 0x75};  // lm_hashes.txt "MyPw".
  const auto hash_hash = password_hash_hash(nt_hash_from(exchange.vector.bytes("PasswordHash")));
  expected.insert(expected.end(), hash_hash.begin(), hash_hash.end());
  expected.insert(expected.end(), 8, 0x00);
  EXPECT_EQ(to_vector(accept->ms_chap_mppe_keys), expected);
}

TEST(VerifyMsChap1, LeavesTheLmKeyZeroForAnNtPassword) {
  const MsChap1Exchange exchange;
  const auto credential = Credential::nt_hash(nt_hash_from(exchange.vector.bytes("PasswordHash")));
  const auto accept = verify_ms_chap1(credential, exchange.request());
  ASSERT_TRUE(accept.has_value());
  EXPECT_EQ(
      std::vector<std::uint8_t>(accept->ms_chap_mppe_keys.begin(), accept->ms_chap_mppe_keys.begin() + 8),
      std::vector<std::uint8_t>(8, 0x00));
}

TEST(MsChap1Error, CarriesIdentAndNoRetry) {
  const MsChapError error = ms_chap1_error(0x07);
  EXPECT_EQ(error.value()[0], 0x07);
  EXPECT_EQ(as_chars(error.value().subspan(1)), "E=691 R=0");
}

TEST(MsChap2ResponseValue, ParsesBackIntoItsFields) {
  std::array<std::uint8_t, kPeerChallengeSize> peer{};
  NtResponse nt{};
  for (std::size_t i = 0; i < peer.size(); ++i) peer[i] = static_cast<std::uint8_t>(i + 1);
  for (std::size_t i = 0; i < nt.size(); ++i) nt[i] = static_cast<std::uint8_t>(100 + i);
  const auto value = ms_chap2_response_value(0x42, peer, nt);
  const auto parsed = parse_ms_chap2_response(value);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->ident, 0x42);
  EXPECT_EQ(parsed->flags, 0);
  EXPECT_TRUE(
      std::equal(peer.begin(), peer.end(), parsed->peer_challenge.begin(), parsed->peer_challenge.end()));
  EXPECT_TRUE(std::equal(nt.begin(), nt.end(), parsed->nt_response.begin(), parsed->nt_response.end()));
}

}  // namespace
}  // namespace rw::auth
