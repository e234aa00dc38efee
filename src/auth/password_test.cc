// Tests for PAP and the NT hash: public and generated vectors, every stored
// password form, and crypt(3) hashes generated here with crypt_gensalt_rn.
#include "auth/password.h"

#include <crypt.h>
#include <gtest/gtest.h>

#include <string>

#include "auth/encoding.h"
#include "auth/vector_file_for_test.h"
#include "base/random.h"

namespace rw::auth {
namespace {

using testing::load_vector;
using testing::load_vectors;
using testing::to_vector;

TEST(NtPasswordHash, MatchesPublishedAndGeneratedVectors) {
  for (const auto& record : load_vectors("nt_hashes.txt")) {
    SCOPED_TRACE(record.text("Password"));
    const auto hash = nt_password_hash(record.text("Password"));
    ASSERT_TRUE(hash.has_value());
    EXPECT_EQ(to_vector(*hash), record.bytes("NtHash"));
  }
}

TEST(NtPasswordHash, ConvertsTheRfc2759PasswordToUtf16le) {
  const auto vector = load_vector("rfc2759_9_2_hash_example.txt");
  std::array<std::uint8_t, 64> unicode{};
  const auto size = utf8_to_utf16le(vector.text("Password"), unicode);
  ASSERT_TRUE(size.has_value());
  EXPECT_EQ(std::vector<std::uint8_t>(unicode.begin(), unicode.begin() + static_cast<long>(*size)),
            vector.bytes("UnicodePassword"));
}

TEST(NtPasswordHash, RejectsInvalidUtf8) {
  EXPECT_EQ(nt_password_hash("caf\xC3").error(), AuthError::kInvalidUtf8);
}

TEST(NtPasswordHash, RejectsMoreThan256Utf16Units) {
  EXPECT_TRUE(nt_password_hash(std::string(256, 'a')).has_value());
  EXPECT_EQ(nt_password_hash(std::string(257, 'a')).error(), AuthError::kPasswordTooLong);
}

TEST(ParseNtHash, AcceptsHexWithAndWithoutPrefix) {
  const auto bare = parse_nt_hash("8846F7EAEE8FB117AD06BDD830B7586C");
  const auto prefixed = parse_nt_hash("0x8846f7eaee8fb117ad06bdd830b7586c");
  ASSERT_TRUE(bare && prefixed);
  EXPECT_EQ(*bare, *prefixed);
  EXPECT_EQ((*bare)[0], 0x88);
}

TEST(ParseNtHash, RejectsWrongLengthAndNonHex) {
  EXPECT_FALSE(parse_nt_hash("8846F7EAEE8FB117AD06BDD830B7586"));
  EXPECT_FALSE(parse_nt_hash("8846F7EAEE8FB117AD06BDD830B7586CC"));
  EXPECT_FALSE(parse_nt_hash("8846F7EAEE8FB117AD06BDD830B7586G"));
  EXPECT_FALSE(parse_nt_hash("0x"));
}

TEST(VerifyPap, AcceptsEveryStoredFormOfTheVectors) {
  for (const auto& record : load_vectors("password_forms.txt")) {
    SCOPED_TRACE(record.text("Attribute") + " " + record.text("Value"));
    const auto credential = parse_credential(record.text("Attribute"), record.text("Value"));
    ASSERT_TRUE(credential.has_value()) << to_string(credential.error());
    EXPECT_TRUE(verify_pap(*credential, record.text("Password")).has_value());
  }
}

TEST(VerifyPap, RejectsAWrongPasswordForEveryStoredForm) {
  for (const auto& record : load_vectors("password_forms.txt")) {
    SCOPED_TRACE(record.text("Attribute") + " " + record.text("Value"));
    const auto credential = parse_credential(record.text("Attribute"), record.text("Value"));
    ASSERT_TRUE(credential.has_value());
    const auto result = verify_pap(*credential, record.text("Password") + "x");
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error(), AuthError::kWrongPassword);
  }
}

TEST(VerifyPap, CleartextRejectsAPrefixOfThePassword) {
  const auto result = verify_pap(Credential::cleartext("secret"), "secre");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error(), AuthError::kWrongPassword);
}

TEST(VerifyPap, RefusesAnEmptyPasswordSentOrStored) {
  EXPECT_EQ(verify_pap(Credential::cleartext(""), "").error(), AuthError::kEmptyPassword);
  EXPECT_EQ(verify_pap(Credential::cleartext("secret"), "").error(), AuthError::kEmptyPassword);
  EXPECT_EQ(verify_pap(Credential{}, "anything").error(), AuthError::kEmptyPassword);
}

TEST(VerifyPap, NtHashComparesTheHashOfNonAsciiPasswords) {
  const auto credential = parse_credential("NT-Password", "0553152250AC01ADB4213CB9938663E4");
  ASSERT_TRUE(credential.has_value());
  EXPECT_TRUE(verify_pap(*credential, "pässwörd").has_value());
}

TEST(VerifyPap, NtHashReportsInvalidUtf8) {
  const auto result = verify_pap(Credential::nt_hash(NtHash{}), "\xFF");
  EXPECT_EQ(result.error(), AuthError::kInvalidUtf8);
}

TEST(VerifyPap, CryptReportsAnUnknownSetting) {
  const auto result = verify_pap(Credential::crypt("$unknown$salt$hash"), "password");
  EXPECT_EQ(result.error(), AuthError::kCryptFailed);
}

TEST(VerifyPap, CryptRefusesAPasswordWithNul) {
  const auto result = verify_pap(Credential::crypt("$5$saltsalt$gOjOtoMpVhru2uyjeJSEc/JaLQWOXMNmlOnj6T4AtC."),
                                 std::string_view("password\0tail", 13));
  EXPECT_EQ(result.error(), AuthError::kPasswordHasNul);
}

// One crypt(3) method: its prefix and the cheapest cost libcrypt accepts, so
// that the test stays fast (bcrypt and yescrypt are slow by design).
struct CryptMethod {
  const char* name;
  const char* prefix;
  unsigned long cost;
};

class CryptPassword : public ::testing::TestWithParam<CryptMethod> {
 protected:
  // Hashes `password` with a salt made from fixed random bytes.
  static std::string hash(std::string_view password) {
    std::array<std::uint8_t, 16> salt_bytes{};
    SeededRandom(42).fill(salt_bytes);
    std::array<char, CRYPT_GENSALT_OUTPUT_SIZE> setting{};
    const char* made = crypt_gensalt_rn(
        GetParam().prefix, GetParam().cost, reinterpret_cast<const char*>(salt_bytes.data()),
        static_cast<int>(salt_bytes.size()), setting.data(), static_cast<int>(setting.size()));
    EXPECT_NE(made, nullptr) << GetParam().prefix;
    if (made == nullptr) return {};
    crypt_data scratch{};
    const std::string phrase(password);
    const char* hashed = crypt_rn(phrase.c_str(), setting.data(), &scratch, sizeof scratch);
    EXPECT_NE(hashed, nullptr);
    return hashed == nullptr ? std::string() : std::string(hashed);
  }
};

TEST_P(CryptPassword, AcceptsTheRightPassword) {
  const std::string stored = hash("correct horse");
  ASSERT_TRUE(stored.starts_with(GetParam().prefix)) << stored;
  EXPECT_TRUE(verify_pap(Credential::crypt(stored), "correct horse").has_value());
}

TEST_P(CryptPassword, RejectsAWrongPassword) {
  const auto result = verify_pap(Credential::crypt(hash("correct horse")), "correct horsf");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error(), AuthError::kWrongPassword);
}

TEST_P(CryptPassword, WorksThroughTheCryptHeader) {
  const auto credential = parse_password_with_header("{crypt}" + hash("correct horse"));
  ASSERT_TRUE(credential.has_value());
  EXPECT_EQ(credential->kind, CredentialKind::kCrypt);
  EXPECT_TRUE(verify_pap(*credential, "correct horse").has_value());
}

std::string method_name(const ::testing::TestParamInfo<CryptMethod>& method) { return method.param.name; }

INSTANTIATE_TEST_SUITE_P(Methods, CryptPassword,
                         ::testing::Values(CryptMethod{"Sha256", "$5$", 1000},
                                           CryptMethod{"Sha512", "$6$", 1000},
                                           CryptMethod{"Bcrypt", "$2b$", 4},
                                           CryptMethod{"Yescrypt", "$y$", 1}),
                         method_name);

TEST(ParseCredential, ReadsAttributeNamesInAnyCase) {
  const auto credential = parse_credential("cleartext-password", "secret");
  ASSERT_TRUE(credential.has_value());
  EXPECT_EQ(credential->kind, CredentialKind::kCleartext);
  EXPECT_EQ(credential->secret, "secret");
}

TEST(ParseCredential, RejectsAnUnknownAttribute) {
  EXPECT_EQ(parse_credential("Reply-Message", "x").error(), CredentialError::kUnknownAttribute);
}

TEST(ParseCredential, RejectsAMalformedNtPassword) {
  EXPECT_EQ(parse_credential("NT-Password", "not a hash").error(), CredentialError::kMalformedNtHash);
}

TEST(ParseCredential, RejectsAnEmptyCryptPassword) {
  EXPECT_EQ(parse_credential("Crypt-Password", "").error(), CredentialError::kEmptyCrypt);
}

TEST(ParseCredential, RejectsADigestOfTheWrongLength) {
  // Base64 of 10 octets: too short for SHA-1's 20.
  EXPECT_EQ(parse_credential("SHA-Password", "AAAAAAAAAAAAAA==").error(),
            CredentialError::kWrongDigestLength);
}

TEST(ParseCredential, Sha2PasswordIsSha256OrSha512ByItsLength) {
  // SHA-256("hello") in hex, SHA-512("hello") in base64.
  const auto sha256 =
      parse_credential("SHA2-Password", "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
  ASSERT_TRUE(sha256.has_value());
  EXPECT_EQ(sha256->digest_algorithm, DigestAlgorithm::kSha256);
  EXPECT_TRUE(verify_pap(*sha256, "hello").has_value());
  EXPECT_EQ(verify_pap(*sha256, "hellO").error(), AuthError::kWrongPassword);
  const auto sha512 = parse_credential(
      "SHA2-Password",
      "m3HSJL1i83hdltRq0+o9czGb+8KJDKra4t/3JRlnPKcjI8PZm6XBHXx6zG4UuMXaDEZjR1wuXDre9G9zvN7AQw==");
  ASSERT_TRUE(sha512.has_value());
  EXPECT_EQ(sha512->digest_algorithm, DigestAlgorithm::kSha512);
  EXPECT_TRUE(verify_pap(*sha512, "hello").has_value());
  // SHA-224("hello"): a variant radiusward does not check, refused at load.
  EXPECT_EQ(
      parse_credential("SHA2-Password", "ea09ae9cc6768c50fcee903ed054556e5bfc8347907f12598aa24193").error(),
      CredentialError::kWrongDigestLength);
}

TEST(ParseCredential, RejectsADigestThatIsNeitherBase64NorHex) {
  EXPECT_EQ(parse_credential("SSHA-Password", "!!!!").error(), CredentialError::kMalformedBase64);
}

TEST(ParsePasswordWithHeader, RejectsAnUnknownHeader) {
  EXPECT_EQ(parse_password_with_header("{rot13}frperg").error(), CredentialError::kUnknownHeader);
}

TEST(ParsePasswordWithHeader, ReadsNtHeaderVariants) {
  for (const char* header : {"{nt}", "{NTHASH}", "{x-nthash}"}) {
    const auto credential =
        parse_password_with_header(std::string(header) + "8846F7EAEE8FB117AD06BDD830B7586C");
    ASSERT_TRUE(credential.has_value()) << header;
    EXPECT_EQ(credential->kind, CredentialKind::kNtHash);
  }
}

}  // namespace
}  // namespace rw::auth
