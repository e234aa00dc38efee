// Authenticators against the RFC 2865 §7 vectors, and Message-Authenticator
// and Request Authenticator signing and checking in both directions,
// cross-checked with OpenSSL's one-shot HMAC and EVP digests.
#include "radius/authenticator.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <string>
#include <vector>

#include "base/random.h"
#include "radius/test_vectors.h"

namespace rw::radius {
namespace {

using Buffer = std::vector<std::uint8_t>;

SharedSecret rfc_secret() { return *SharedSecret::create(as_bytes(testing::kRfc2865Secret)); }

Buffer copy(Bytes bytes) { return Buffer(bytes.begin(), bytes.end()); }

// HMAC-MD5 by OpenSSL's one-shot API over `wire` with the authenticator
// field replaced and the Message-Authenticator value zeroed: an independent
// statement of RFC 3579 §3.2.
Buffer reference_message_authenticator(Bytes wire, Bytes authenticator, std::size_t ma_offset, Bytes secret) {
  Buffer copy_of(wire.begin(), wire.end());
  std::copy(authenticator.begin(), authenticator.end(), copy_of.begin() + 4);
  std::fill_n(copy_of.begin() + static_cast<std::ptrdiff_t>(ma_offset) + 2, 16, 0);
  Buffer out(16);
  unsigned int length = 0;
  HMAC(EVP_md5(), secret.data(), static_cast<int>(secret.size()), copy_of.data(), copy_of.size(), out.data(),
       &length);
  return out;
}

// MD5 of `wire` with the authenticator field replaced, then the secret.
Buffer reference_packet_digest(Bytes wire, Bytes authenticator, Bytes secret) {
  Buffer message(wire.begin(), wire.end());
  std::copy(authenticator.begin(), authenticator.end(), message.begin() + 4);
  message.insert(message.end(), secret.begin(), secret.end());
  Buffer out(16);
  unsigned int length = 0;
  EVP_Digest(message.data(), message.size(), out.data(), &length, EVP_md5(), nullptr);
  return out;
}

struct Exchange {
  const char* request;
  const char* response;
};

class Rfc2865Exchange : public ::testing::TestWithParam<Exchange> {};

TEST_P(Rfc2865Exchange, ResponseAuthenticatorVerifies) {
  Buffer request_bytes = testing::read_vector(GetParam().request);
  Buffer response_bytes = testing::read_vector(GetParam().response);
  auto request = Packet::parse(request_bytes);
  auto response = Packet::parse(response_bytes);
  ASSERT_TRUE(request && response);
  EXPECT_TRUE(verify_response_authenticator(*response, request->authenticator(), rfc_secret()));
  auto other = *SharedSecret::create(as_bytes("xyzzy5462"));
  EXPECT_FALSE(verify_response_authenticator(*response, request->authenticator(), other));
}

TEST_P(Rfc2865Exchange, SigningReproducesTheResponse) {
  Buffer request_bytes = testing::read_vector(GetParam().request);
  Buffer response_bytes = testing::read_vector(GetParam().response);
  auto request = Packet::parse(request_bytes);
  ASSERT_TRUE(request);
  Buffer signed_response = response_bytes;
  std::fill_n(signed_response.begin() + 4, 16, 0xff);  // Whatever was there is replaced.
  sign_response(signed_response, request->authenticator(), rfc_secret());
  EXPECT_EQ(signed_response, response_bytes);
}

TEST_P(Rfc2865Exchange, EveryTamperedByteFailsVerification) {
  Buffer request_bytes = testing::read_vector(GetParam().request);
  Buffer response_bytes = testing::read_vector(GetParam().response);
  auto request = Packet::parse(request_bytes);
  ASSERT_TRUE(request);
  for (std::size_t i = 0; i < response_bytes.size(); ++i) {
    if (i == 2 || i == 3) continue;  // A changed Length is a different parse.
    Buffer tampered = response_bytes;
    tampered[i] ^= 0x01;
    auto response = Packet::parse(tampered);
    if (!response) continue;
    EXPECT_FALSE(verify_response_authenticator(*response, request->authenticator(), rfc_secret())) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rfc2865Section7, Rfc2865Exchange,
    ::testing::Values(Exchange{"rfc2865_7.1_access_request.hex", "rfc2865_7.1_access_accept.hex"},
                      Exchange{"rfc2865_7.2_access_request.hex", "rfc2865_7.2_access_accept.hex"},
                      Exchange{"rfc2865_7.3_access_request_1.hex", "rfc2865_7.3_access_challenge.hex"},
                      Exchange{"rfc2865_7.3_access_request_2.hex", "rfc2865_7.3_access_reject.hex"}));

// Builds an Access-Request with a Message-Authenticator, signed by the client.
Buffer signed_access_request(RandomSource& random, const SharedSecret& secret, bool with_ma = true) {
  std::array<std::uint8_t, kMaxPacketLength> buffer;
  PacketBuilder builder(buffer);
  Authenticator authenticator = make_request_authenticator(random);
  builder.begin(Code::kAccessRequest, 42, authenticator);
  builder.add(attr::kUserName, as_bytes("bob"));
  if (with_ma) builder.reserve_message_authenticator();
  builder.add(attr::kEapMessage, as_bytes("\x02\x01\x00\x08\x01"
                                          "bob"));
  auto wire = builder.finish();
  EXPECT_TRUE(wire.has_value());
  sign_request(*wire, secret);
  return copy(*wire);
}

TEST(MessageAuthenticator, ClientSignedAccessRequestVerifies) {
  SeededRandom random(1);
  SharedSecret secret = *SharedSecret::create(as_bytes("testing123"));
  Buffer wire = signed_access_request(random, secret);
  auto request = Packet::parse(wire);
  ASSERT_TRUE(request);
  EXPECT_EQ(check_request_message_authenticator(*request, secret), MessageAuthenticatorStatus::kValid);
  EXPECT_EQ(copy(wire).size(), wire.size());
  const std::size_t offset = *request->message_authenticator_offset();
  EXPECT_EQ(copy(request->wire().subspan(offset + 2, 16)),
            reference_message_authenticator(wire, request->authenticator(), offset, secret.bytes()));
}

TEST(MessageAuthenticator, TamperedRequestFails) {
  SeededRandom random(2);
  SharedSecret secret = *SharedSecret::create(as_bytes("testing123"));
  Buffer wire = signed_access_request(random, secret);
  for (std::size_t i = 0; i < wire.size(); ++i) {
    if (i == 2 || i == 3) continue;
    Buffer tampered = wire;
    tampered[i] ^= 0x80;
    auto request = Packet::parse(tampered);
    if (!request) continue;
    EXPECT_NE(check_request_message_authenticator(*request, secret), MessageAuthenticatorStatus::kValid) << i;
  }
  auto request = Packet::parse(wire);
  SharedSecret wrong = *SharedSecret::create(as_bytes("testing124"));
  EXPECT_EQ(check_request_message_authenticator(*request, wrong), MessageAuthenticatorStatus::kInvalid);
}

TEST(MessageAuthenticator, ReportsAbsence) {
  SeededRandom random(3);
  SharedSecret secret = *SharedSecret::create(as_bytes("testing123"));
  Buffer wire = signed_access_request(random, secret, false);
  auto request = Packet::parse(wire);
  ASSERT_TRUE(request);
  EXPECT_EQ(check_request_message_authenticator(*request, secret), MessageAuthenticatorStatus::kAbsent);
  EXPECT_EQ(to_string(MessageAuthenticatorStatus::kAbsent), "absent");
}

TEST(MessageAuthenticator, StatusServerSignedAndVerified) {
  // RFC 5997 §3: Status-Server carries a Message-Authenticator.
  SeededRandom random(4);
  SharedSecret secret = *SharedSecret::create(as_bytes("status-secret"));
  std::array<std::uint8_t, 64> buffer;
  PacketBuilder builder(buffer);
  builder.begin(Code::kStatusServer, 7, make_request_authenticator(random));
  builder.reserve_message_authenticator();
  auto wire = builder.finish();
  ASSERT_TRUE(wire);
  sign_request(*wire, secret);
  auto request = Packet::parse(*wire);
  ASSERT_TRUE(request);
  EXPECT_EQ(check_request_message_authenticator(*request, secret), MessageAuthenticatorStatus::kValid);
}

TEST(MessageAuthenticator, ServerSignedResponseVerifiesAtClient) {
  SeededRandom random(5);
  SharedSecret secret = *SharedSecret::create(as_bytes("testing123"));
  Buffer request_wire = signed_access_request(random, secret);
  auto request = Packet::parse(request_wire);
  ASSERT_TRUE(request);

  std::array<std::uint8_t, kMaxPacketLength> buffer;
  PacketBuilder builder(buffer);
  builder.begin(Code::kAccessChallenge, request->identifier(), request->authenticator());
  builder.reserve_message_authenticator();
  builder.add(attr::kEapMessage, as_bytes("\x01\x02\x00\x06\x0d\x20"));
  builder.add(attr::kState, as_bytes("state-1"));
  auto wire = builder.finish();
  ASSERT_TRUE(wire);
  sign_response(*wire, request->authenticator(), secret);

  auto response = Packet::parse(*wire);
  ASSERT_TRUE(response);
  EXPECT_TRUE(verify_response_authenticator(*response, request->authenticator(), secret));
  EXPECT_EQ(check_response_message_authenticator(*response, request->authenticator(), secret),
            MessageAuthenticatorStatus::kValid);
  // RFC 3579 §3.2: computed with the Request Authenticator in the field.
  EXPECT_EQ(copy(response->wire().subspan(22, 16)),
            reference_message_authenticator(*wire, request->authenticator(), 20, secret.bytes()));
  // And the Response Authenticator covers the filled Message-Authenticator.
  EXPECT_EQ(copy(response->authenticator()),
            reference_packet_digest(*wire, request->authenticator(), secret.bytes()));

  Buffer tampered = copy(*wire);
  tampered[30] ^= 1;  // Inside the Message-Authenticator value.
  auto bad = Packet::parse(tampered);
  ASSERT_TRUE(bad);
  EXPECT_EQ(check_response_message_authenticator(*bad, request->authenticator(), secret),
            MessageAuthenticatorStatus::kInvalid);
  EXPECT_FALSE(verify_response_authenticator(*bad, request->authenticator(), secret));
  Authenticator other_request = make_request_authenticator(random);
  EXPECT_EQ(check_response_message_authenticator(*response, other_request, secret),
            MessageAuthenticatorStatus::kInvalid);
}

Buffer signed_accounting_request(Code code, const SharedSecret& secret, bool with_ma) {
  std::array<std::uint8_t, 256> buffer;
  PacketBuilder builder(buffer);
  builder.begin(code, 99);
  builder.add_u32(attr::kAcctStatusType, 1);
  builder.add(attr::kAcctSessionId, as_bytes("0000002A"));
  if (with_ma) builder.reserve_message_authenticator();
  builder.add(attr::kUserName, as_bytes("alice"));
  auto wire = builder.finish();
  EXPECT_TRUE(wire);
  sign_request(*wire, secret);
  return copy(*wire);
}

TEST(RequestAuthenticator, AccountingRequestSignedAndVerified) {
  SharedSecret secret = *SharedSecret::create(as_bytes("acct-secret"));
  Buffer wire = signed_accounting_request(Code::kAccountingRequest, secret, false);
  auto request = Packet::parse(wire);
  ASSERT_TRUE(request);
  EXPECT_TRUE(verify_request_authenticator(*request, secret));
  // RFC 2866 §3: MD5 over the packet with 16 zero octets, then the secret.
  EXPECT_EQ(copy(request->authenticator()), reference_packet_digest(wire, Buffer(16, 0), secret.bytes()));
  SharedSecret wrong = *SharedSecret::create(as_bytes("acct-secreT"));
  EXPECT_FALSE(verify_request_authenticator(*request, wrong));
}

TEST(RequestAuthenticator, TamperedAccountingRequestFails) {
  SharedSecret secret = *SharedSecret::create(as_bytes("acct-secret"));
  Buffer wire = signed_accounting_request(Code::kAccountingRequest, secret, false);
  for (std::size_t i = 0; i < wire.size(); ++i) {
    if (i == 2 || i == 3) continue;
    Buffer tampered = wire;
    tampered[i] ^= 0x10;
    auto request = Packet::parse(tampered);
    if (!request) continue;
    EXPECT_FALSE(verify_request_authenticator(*request, secret)) << i;
  }
}

TEST(RequestAuthenticator, CoaAndDisconnectWithMessageAuthenticator) {
  // RFC 5176 §3.4: Message-Authenticator over a zero authenticator field,
  // then the Request Authenticator over the result.
  SharedSecret secret = *SharedSecret::create(as_bytes("coa-secret"));
  for (Code code : {Code::kCoaRequest, Code::kDisconnectRequest, Code::kAccountingRequest}) {
    Buffer wire = signed_accounting_request(code, secret, true);
    auto request = Packet::parse(wire);
    ASSERT_TRUE(request);
    EXPECT_TRUE(verify_request_authenticator(*request, secret)) << to_string(code);
    EXPECT_EQ(check_request_message_authenticator(*request, secret), MessageAuthenticatorStatus::kValid);
    const std::size_t offset = *request->message_authenticator_offset();
    EXPECT_EQ(copy(request->wire().subspan(offset + 2, 16)),
              reference_message_authenticator(wire, Buffer(16, 0), offset, secret.bytes()));
  }
}

TEST(RequestAuthenticator, AccountingResponseSignedWithRequestAuthenticator) {
  SharedSecret secret = *SharedSecret::create(as_bytes("acct-secret"));
  Buffer request_wire = signed_accounting_request(Code::kAccountingRequest, secret, false);
  auto request = Packet::parse(request_wire);
  ASSERT_TRUE(request);
  std::array<std::uint8_t, 64> buffer;
  PacketBuilder builder(buffer);
  builder.begin(Code::kAccountingResponse, request->identifier(), request->authenticator());
  auto wire = builder.finish();
  ASSERT_TRUE(wire);
  sign_response(*wire, request->authenticator(), secret);
  auto response = Packet::parse(*wire);
  ASSERT_TRUE(response);
  EXPECT_TRUE(verify_response_authenticator(*response, request->authenticator(), secret));
}

TEST(SharedSecret, RejectsEmptyAndOverlong) {
  EXPECT_EQ(SharedSecret::create({}).error(), SecretError::kEmpty);
  Buffer longest(kMaxSecretLength, 's');
  EXPECT_TRUE(SharedSecret::create(longest).has_value());
  longest.push_back('s');
  EXPECT_EQ(SharedSecret::create(longest).error(), SecretError::kTooLong);
}

TEST(SharedSecret, LongSecretHmacMatchesOpenSsl) {
  // Secrets over 64 octets are hashed first as HMAC keys (RFC 2104 §2).
  Buffer long_secret(100, 'k');
  SharedSecret secret = *SharedSecret::create(long_secret);
  SeededRandom random(6);
  Buffer wire = signed_access_request(random, secret);
  auto request = Packet::parse(wire);
  ASSERT_TRUE(request);
  const std::size_t offset = *request->message_authenticator_offset();
  EXPECT_EQ(copy(request->wire().subspan(offset + 2, 16)),
            reference_message_authenticator(wire, request->authenticator(), offset, long_secret));
}

TEST(RequestAuthenticator, RandomAuthenticatorsDiffer) {
  SeededRandom random(7);
  EXPECT_NE(make_request_authenticator(random), make_request_authenticator(random));
}

}  // namespace
}  // namespace rw::radius
