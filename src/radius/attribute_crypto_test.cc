// User-Password, Tunnel-Password and MS-MPPE key hiding: the RFC 2865 §7
// vectors, round trips at the block boundaries, an independent check of the
// salted form, and every CryptoError.
#include "radius/attribute_crypto.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <array>
#include <set>
#include <string>
#include <vector>

#include "base/random.h"
#include "radius/test_vectors.h"

namespace rw::radius {
namespace {

using Buffer = std::vector<std::uint8_t>;

SharedSecret rfc_secret() { return *SharedSecret::create(as_bytes(testing::kRfc2865Secret)); }

std::string text(Bytes bytes) { return std::string(as_chars(bytes)); }
Buffer copy(Bytes bytes) { return Buffer(bytes.begin(), bytes.end()); }

Buffer md5(const Buffer& message) {
  Buffer out(16);
  unsigned int length = 0;
  EVP_Digest(message.data(), message.size(), out.data(), &length, EVP_md5(), nullptr);
  return out;
}

struct PasswordCase {
  const char* file;
  const char* password;
};

class Rfc2865Password : public ::testing::TestWithParam<PasswordCase> {};

TEST_P(Rfc2865Password, UnhidesAndHidesBack) {
  Buffer wire = testing::read_vector(GetParam().file);
  auto packet = Packet::parse(wire);
  ASSERT_TRUE(packet);
  auto hidden = packet->find(attr::kUserPassword);
  ASSERT_TRUE(hidden);
  std::array<std::uint8_t, kMaxUserPasswordLength> out;
  auto password = unhide_user_password(hidden->value, packet->authenticator(), rfc_secret(), out);
  ASSERT_TRUE(password);
  EXPECT_EQ(text(*password), GetParam().password);

  std::array<std::uint8_t, kMaxUserPasswordLength> again;
  auto rehidden =
      hide_user_password(as_bytes(GetParam().password), packet->authenticator(), rfc_secret(), again);
  ASSERT_TRUE(rehidden);
  EXPECT_EQ(copy(*rehidden), copy(hidden->value));
}

INSTANTIATE_TEST_SUITE_P(Rfc2865Section7, Rfc2865Password,
                         ::testing::Values(PasswordCase{"rfc2865_7.1_access_request.hex", "arctangent"},
                                           PasswordCase{"rfc2865_7.3_access_request_1.hex", "challenge"},
                                           PasswordCase{"rfc2865_7.3_access_request_2.hex", "99101462"}));

class UserPasswordRoundTrip : public ::testing::TestWithParam<std::size_t> {};

TEST_P(UserPasswordRoundTrip, RecoversThePassword) {
  const std::size_t length = GetParam();
  Buffer password(length);
  for (std::size_t i = 0; i < length; ++i) password[i] = static_cast<std::uint8_t>('!' + i % 90);
  SeededRandom random(length);
  Authenticator authenticator = make_request_authenticator(random);
  std::array<std::uint8_t, kMaxUserPasswordLength> hidden_buffer;
  auto hidden = hide_user_password(password, authenticator, rfc_secret(), hidden_buffer);
  ASSERT_TRUE(hidden);
  EXPECT_EQ(hidden->size(), std::max<std::size_t>(16, (length + 15) / 16 * 16));
  std::array<std::uint8_t, kMaxUserPasswordLength> out;
  auto recovered = unhide_user_password(*hidden, authenticator, rfc_secret(), out);
  ASSERT_TRUE(recovered);
  EXPECT_EQ(copy(*recovered), password);
}

INSTANTIATE_TEST_SUITE_P(Lengths, UserPasswordRoundTrip,
                         ::testing::Values(0, 1, 15, 16, 17, 31, 32, 127, 128));

TEST(UserPassword, UnhidesInPlace) {
  Buffer wire = testing::read_vector("rfc2865_7.1_access_request.hex");
  auto packet = Packet::parse(wire);
  ASSERT_TRUE(packet);
  Buffer hidden = copy(packet->find(attr::kUserPassword)->value);
  auto password = unhide_user_password(hidden, packet->authenticator(), rfc_secret(), hidden);
  ASSERT_TRUE(password);
  EXPECT_EQ(text(*password), "arctangent");
}

TEST(UserPassword, ReportsErrors) {
  Authenticator authenticator{};
  std::array<std::uint8_t, 256> out;
  Buffer too_long(129, 'p');
  EXPECT_EQ(hide_user_password(too_long, authenticator, rfc_secret(), out).error(),
            CryptoError::kPasswordTooLong);
  EXPECT_EQ(hide_user_password(as_bytes("p"), authenticator, rfc_secret(), std::span(out).first(15)).error(),
            CryptoError::kOutputTooSmall);
  EXPECT_EQ(hide_user_password(as_bytes("p"), as_bytes("short"), rfc_secret(), out).error(),
            CryptoError::kBadAuthenticator);
  for (std::size_t bad : {0, 15, 17, 144}) {
    Buffer hidden(bad, 1);
    EXPECT_EQ(unhide_user_password(hidden, authenticator, rfc_secret(), out).error(),
              CryptoError::kBadHiddenLength)
        << bad;
  }
  Buffer hidden(32, 1);
  EXPECT_EQ(unhide_user_password(hidden, authenticator, rfc_secret(), std::span(out).first(16)).error(),
            CryptoError::kOutputTooSmall);
  EXPECT_NE(to_string(CryptoError::kOutputTooSmall), "unknown");
}

TEST(Salt, HasHighBitAndSequenceIsUnique) {
  SeededRandom random(11);
  for (int i = 0; i < 100; ++i) EXPECT_NE(make_salt(random) & 0x8000, 0);
  SaltSequence salts(random);
  std::set<std::uint16_t> seen;
  for (int i = 0; i < 40000; ++i) {
    const std::uint16_t salt = salts.next();
    EXPECT_NE(salt & 0x8000, 0);
    if (i < 32768) {
      EXPECT_TRUE(seen.insert(salt).second) << i;
    }
  }
}

TEST(TunnelPassword, RoundTripsWithTag) {
  SeededRandom random(12);
  Authenticator authenticator = make_request_authenticator(random);
  for (std::size_t length : {0, 1, 15, 16, 17, 100, 239}) {
    Buffer password(length, 'T');
    std::array<std::uint8_t, kMaxHiddenValueLength> value_buffer;
    auto value = hide_tunnel_password(password, 0x05, 0x1234, authenticator, rfc_secret(), value_buffer);
    ASSERT_TRUE(value) << length;
    EXPECT_EQ(value->size(), 1 + 2 + (length + 1 + 15) / 16 * 16);
    EXPECT_EQ((*value)[0], 0x05);
    EXPECT_EQ((*value)[1], 0x92);  // RFC 2868 §3.5: Salt high bit forced on.
    EXPECT_EQ((*value)[2], 0x34);
    std::array<std::uint8_t, kMaxHiddenValueLength> out;
    auto recovered = unhide_tunnel_password(*value, authenticator, rfc_secret(), out);
    ASSERT_TRUE(recovered) << length;
    EXPECT_EQ(recovered->tag, 0x05);
    EXPECT_EQ(copy(recovered->password), password);
  }
}

TEST(TunnelPassword, MatchesRfc2868Construction) {
  // b(1) = MD5(S + R + A), c(1) = p(1) xor b(1), with p = Length + password.
  Authenticator authenticator;
  for (std::size_t i = 0; i < authenticator.size(); ++i) authenticator[i] = static_cast<std::uint8_t>(i);
  std::array<std::uint8_t, 64> value_buffer;
  auto value = hide_tunnel_password(as_bytes("secret"), 1, 0x8001, authenticator, rfc_secret(), value_buffer);
  ASSERT_TRUE(value);
  std::string first(testing::kRfc2865Secret);
  first.append(as_chars(authenticator));
  first.append("\x80\x01");
  Buffer pad = md5(Buffer(first.begin(), first.end()));
  Buffer plain = {6, 's', 'e', 'c', 'r', 'e', 't', 0, 0, 0, 0, 0, 0, 0, 0, 0};
  Buffer expected = {1, 0x80, 0x01};
  for (std::size_t i = 0; i < 16; ++i) expected.push_back(plain[i] ^ pad[i]);
  EXPECT_EQ(copy(*value), expected);
}

TEST(TunnelPassword, ReportsErrors) {
  Authenticator authenticator{};
  std::array<std::uint8_t, 300> out;
  Buffer too_long(240, 'p');
  EXPECT_EQ(hide_tunnel_password(too_long, 1, 0x8000, authenticator, rfc_secret(), out).error(),
            CryptoError::kPasswordTooLong);
  EXPECT_EQ(
      hide_tunnel_password(as_bytes("p"), 1, 0x8000, authenticator, rfc_secret(), std::span(out).first(18))
          .error(),
      CryptoError::kOutputTooSmall);
  for (std::size_t bad : {0, 1, 3, 18, 20, 36}) {
    Buffer value(bad, 0);
    EXPECT_EQ(unhide_tunnel_password(value, authenticator, rfc_secret(), out).error(),
              CryptoError::kBadHiddenLength)
        << bad;
  }
  // Flipping ciphertext bits flips the same plaintext bits of the first
  // block: turn the Length octet 1 into 0xff, beyond the 15 octets present.
  auto value = hide_tunnel_password(as_bytes("p"), 1, 0x8000, authenticator, rfc_secret(), out);
  ASSERT_TRUE(value);
  Buffer tampered = copy(*value);
  tampered[3] ^= 0x01 ^ 0xff;
  std::array<std::uint8_t, 64> recovered;
  EXPECT_EQ(unhide_tunnel_password(tampered, authenticator, rfc_secret(), recovered).error(),
            CryptoError::kBadEmbeddedLength);
  tampered = copy(*value);
  tampered[3] ^= 0x01 ^ 0x0f;  // Length 15: fits in the block but not in a 4-octet buffer.
  EXPECT_EQ(
      unhide_tunnel_password(tampered, authenticator, rfc_secret(), std::span(recovered).first(4)).error(),
      CryptoError::kOutputTooSmall);
}

TEST(MppeKey, RoundTripsSendAndRecvKeys) {
  SeededRandom random(13);
  Authenticator authenticator = make_request_authenticator(random);
  SaltSequence salts(random);
  for (std::size_t length : {16, 32}) {
    Buffer key(length);
    random.fill(key);
    std::array<std::uint8_t, kMaxVendorValueLength> value_buffer;
    auto value = encrypt_mppe_key(key, salts.next(), authenticator, rfc_secret(), value_buffer);
    ASSERT_TRUE(value);
    // RFC 2548 §2.4.2: Salt + (Key-Length + Key + padding to 16).
    EXPECT_EQ(value->size(), 2 + (length + 1 + 15) / 16 * 16);
    EXPECT_NE((*value)[0] & 0x80, 0);
    std::array<std::uint8_t, 64> out;
    auto recovered = decrypt_mppe_key(*value, authenticator, rfc_secret(), out);
    ASSERT_TRUE(recovered);
    EXPECT_EQ(copy(*recovered), key);
    Authenticator other = make_request_authenticator(random);
    auto wrong = decrypt_mppe_key(*value, other, rfc_secret(), out);
    EXPECT_TRUE(!wrong || copy(*wrong) != key);
  }
}

TEST(MppeKey, FitsInAVendorAttribute) {
  SeededRandom random(14);
  Authenticator authenticator = make_request_authenticator(random);
  Buffer key(32, 0x42);
  std::array<std::uint8_t, kMaxVendorValueLength> value_buffer;
  auto value = encrypt_mppe_key(key, make_salt(random), authenticator, rfc_secret(), value_buffer);
  ASSERT_TRUE(value);
  std::array<std::uint8_t, 128> packet_buffer;
  PacketBuilder builder(packet_buffer);
  builder.begin(Code::kAccessAccept, 1, authenticator);
  builder.add_vendor(kVendorMicrosoft, ms::kMppeRecvKey, *value);
  auto wire = builder.finish();
  ASSERT_TRUE(wire);
  auto packet = Packet::parse(*wire);
  ASSERT_TRUE(packet);
  auto found = packet->find_vendor(kVendorMicrosoft, ms::kMppeRecvKey);
  ASSERT_TRUE(found);
  std::array<std::uint8_t, 64> out;
  auto recovered = decrypt_mppe_key(*found, authenticator, rfc_secret(), out);
  ASSERT_TRUE(recovered);
  EXPECT_EQ(copy(*recovered), key);
}

}  // namespace
}  // namespace rw::radius
