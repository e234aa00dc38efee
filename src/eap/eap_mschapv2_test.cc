// eap_mschapv2.h against a peer written here from the draft's packet
// layout and RFC 2759's primitives: the RFC 2759 §9.2 exchange carried in
// EAP-MSCHAPv2 packets, the Failure on a wrong password or user, malformed
// Responses, and the Inner Session Key.
#include "eap/eap_mschapv2.h"

#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "auth/mschap.h"
#include "auth/vector_file_for_test.h"

namespace rw::eap {
namespace {

using Octets = std::vector<std::uint8_t>;

// Hands out the octets it was given, then those of a seeded generator: the
// server's ID and challenge become the test's choice.
class ScriptedRandom final : public RandomSource {
 public:
  explicit ScriptedRandom(Octets script) : script_(script.begin(), script.end()) {}
  void fill(MutableBytes out) override {
    for (std::uint8_t& octet : out) {
      if (script_.empty()) {
        seeded_.fill(MutableBytes(&octet, 1));
      } else {
        octet = script_.front();
        script_.pop_front();
      }
    }
  }

 private:
  std::deque<std::uint8_t> script_;
  SeededRandom seeded_{7};
};

// The peer's EAP-MSCHAPv2 Response (draft §2.2) to a Challenge's Type-Data.
Octets response_to(Bytes challenge, Bytes peer_challenge, Bytes nt_response, std::string_view name) {
  Octets out{2, challenge[1], 0, 0, 49};
  out.insert(out.end(), peer_challenge.begin(), peer_challenge.end());
  out.insert(out.end(), 8, 0);
  out.insert(out.end(), nt_response.begin(), nt_response.end());
  out.push_back(0);
  out.insert(out.end(), name.begin(), name.end());
  out[2] = static_cast<std::uint8_t>(out.size() >> 8);
  out[3] = static_cast<std::uint8_t>(out.size());
  return out;
}

// The peer's Response computed from a password.
Octets response_with_password(Bytes challenge, std::string_view user, std::string_view password) {
  const Bytes authenticator_challenge = challenge.subspan(5, 16);
  const Octets peer_challenge(16, 0x5A);
  const auto hash = auth::nt_hash_of(auth::Credential::cleartext(password));
  const auth::NtResponse nt = auth::challenge_response(
      auth::challenge_hash(peer_challenge, authenticator_challenge, auth::ms_chap_user_name(user)), *hash);
  return response_to(challenge, peer_challenge, nt, user);
}

std::optional<auth::Credential> users(std::string_view name) {
  if (name == "User") return auth::Credential::cleartext("clientPass");
  if (name == "crypt") return auth::Credential::crypt("$6$salt$hash");
  return std::nullopt;
}

struct Rfc2759Exchange {
  auth::testing::VectorRecord vector = auth::testing::load_vector("rfc2759_9_2_hash_example.txt");
  ScriptedRandom random = script();
  EapMsChapV2 method{"User", users, random, "server"};

  ScriptedRandom script() const {
    Octets octets{0x42};  // The MS-CHAPv2-ID.
    const Octets challenge = vector.bytes("AuthenticatorChallenge");
    octets.insert(octets.end(), challenge.begin(), challenge.end());
    return ScriptedRandom(octets);
  }
};

TEST(EapMsChapV2, Rfc2759ExchangeSucceedsWithTheRfcsAuthenticatorResponse) {
  Rfc2759Exchange exchange;
  const MethodStep challenge = exchange.method.start();
  ASSERT_EQ(challenge.kind, MethodStep::Kind::kRequest);
  Octets expected{1, 0x42, 0, 4 + 1 + 16 + 6, 16};
  const Octets authenticator_challenge = exchange.vector.bytes("AuthenticatorChallenge");
  expected.insert(expected.end(), authenticator_challenge.begin(), authenticator_challenge.end());
  for (char c : std::string_view("server")) expected.push_back(static_cast<std::uint8_t>(c));
  EXPECT_EQ(challenge.type_data, expected);

  const MethodStep success =
      exchange.method.on_response(response_to(challenge.type_data, exchange.vector.bytes("PeerChallenge"),
                                              exchange.vector.bytes("NtResponse"), "User"));
  ASSERT_EQ(success.kind, MethodStep::Kind::kRequest) << success.reason;
  const std::string message = "S=407A5589115FD0D6209F510FE9C04566932CDA56 M=OK";
  Octets expected_success{3, 0x42, 0, static_cast<std::uint8_t>(4 + message.size())};
  expected_success.insert(expected_success.end(), message.begin(), message.end());
  EXPECT_EQ(success.type_data, expected_success);
  EXPECT_EQ(exchange.method.decided_identity(), "User");

  const MethodStep done = exchange.method.on_response(Octets{3});
  EXPECT_EQ(done.kind, MethodStep::Kind::kSuccess);
  EXPECT_FALSE(done.msk.has_value());  // Its keys are for the tunnel, not an MSK.
}

TEST(EapMsChapV2, InnerSessionKeyIsRecvKeyThenSendKey) {
  Rfc2759Exchange exchange;
  const MethodStep challenge = exchange.method.start();
  const Octets nt_response = exchange.vector.bytes("NtResponse");
  (void)exchange.method.on_response(
      response_to(challenge.type_data, exchange.vector.bytes("PeerChallenge"), nt_response, "User"));
  ASSERT_TRUE(exchange.method.inner_session_key().has_value());
  const auto hash = auth::nt_hash_of(auth::Credential::cleartext("clientPass"));
  const auth::MppeKeys keys = auth::ms_chap2_mppe_keys(*hash, nt_response);
  Octets expected(keys.recv_key.begin(), keys.recv_key.end());
  expected.insert(expected.end(), keys.send_key.begin(), keys.send_key.end());
  EXPECT_EQ(Octets(exchange.method.inner_session_key()->begin(), exchange.method.inner_session_key()->end()),
            expected);
}

TEST(EapMsChapV2, DomainPrefixedNameMatchesTheIdentity) {
  ScriptedRandom random({});
  EapMsChapV2 method("EXAMPLE\\User", users, random);
  const MethodStep challenge = method.start();
  // The lookup is by the whole identity: "EXAMPLE\User" is unknown here,
  // but the Name check passes, so the refusal is the lookup's.
  (void)method.on_response(response_with_password(challenge.type_data, "User", "clientPass"));
  EXPECT_EQ(method.error(), std::optional<MsChapV2Error>(MsChapV2Error::kUnknownUser));
}

struct Refusal {
  std::string user;
  std::string name;
  std::string password;
  MsChapV2Error error;
};

void PrintTo(const Refusal& refusal, std::ostream* out) {
  *out << refusal.name << ": " << to_string(refusal.error);
}

class EapMsChapV2Refusal : public ::testing::TestWithParam<Refusal> {};

TEST_P(EapMsChapV2Refusal, SendsE691ThenFailsAfterThePeersAck) {
  ScriptedRandom random({});
  EapMsChapV2 method(GetParam().user, users, random);
  const MethodStep challenge = method.start();
  const MethodStep failure =
      method.on_response(response_with_password(challenge.type_data, GetParam().name, GetParam().password));
  ASSERT_EQ(failure.kind, MethodStep::Kind::kRequest);
  ASSERT_GT(failure.type_data.size(), 4u);
  EXPECT_EQ(failure.type_data[0], 4);
  EXPECT_EQ(failure.type_data[1], challenge.type_data[1]);
  const std::string_view text = as_chars(Bytes(failure.type_data).subspan(4));
  EXPECT_TRUE(text.starts_with("E=691 R=0 C=")) << text;
  EXPECT_TRUE(text.ends_with(" V=3 M=Authentication failed")) << text;
  EXPECT_FALSE(method.inner_session_key().has_value());
  EXPECT_EQ(method.decided_identity(), "");
  const MethodStep done = method.on_response(Octets{4});
  EXPECT_EQ(done.kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(done.reason, to_string(GetParam().error));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, EapMsChapV2Refusal,
    ::testing::Values(Refusal{"User", "User", "clientpass", MsChapV2Error::kWrongPassword},
                      Refusal{"nobody", "nobody", "clientPass", MsChapV2Error::kUnknownUser},
                      Refusal{"User", "Mallory", "clientPass", MsChapV2Error::kNameMismatch},
                      Refusal{"crypt", "crypt", "x", MsChapV2Error::kUnusableCredential}));

TEST(EapMsChapV2Hostile, MalformedResponsesFailAtOnceWithTheirName) {
  struct Case {
    const char* what;
    std::function<void(Octets&)> damage;
    MsChapV2Error error;
  };
  const std::vector<Case> cases = {
      {"empty", [](Octets& r) { r.clear(); }, MsChapV2Error::kEmpty},
      {"change password", [](Octets& r) { r[0] = 7; }, MsChapV2Error::kUnexpectedOpCode},
      {"truncated", [](Octets& r) { r.resize(30); }, MsChapV2Error::kTruncated},
      {"MS-Length past the data", [](Octets& r) { r[3] = static_cast<std::uint8_t>(r.size() + 1); },
       MsChapV2Error::kTruncated},
      {"MS-Length inside the fixed fields", [](Octets& r) { r[3] = 20; }, MsChapV2Error::kTruncated},
      {"Value-Size", [](Octets& r) { r[4] = 48; }, MsChapV2Error::kWrongValueSize},
      {"ID", [](Octets& r) { r[1] ^= 1; }, MsChapV2Error::kWrongId},
  };
  for (const Case& c : cases) {
    ScriptedRandom random({});
    EapMsChapV2 method("User", users, random);
    const MethodStep challenge = method.start();
    Octets response = response_with_password(challenge.type_data, "User", "clientPass");
    c.damage(response);
    const MethodStep step = method.on_response(response);
    EXPECT_EQ(step.kind, MethodStep::Kind::kFailure) << c.what;
    EXPECT_EQ(method.error(), std::optional<MsChapV2Error>(c.error)) << c.what;
  }
}

TEST(EapMsChapV2Hostile, NameOverTheBoundIsRefused) {
  ScriptedRandom random({});
  EapMsChapV2 method("User", users, random);
  const MethodStep challenge = method.start();
  const std::string name(kMsChapV2NameOctetsMax + 1, 'u');
  (void)method.on_response(response_with_password(challenge.type_data, name, "clientPass"));
  EXPECT_EQ(method.error(), std::optional<MsChapV2Error>(MsChapV2Error::kNameTooLong));
}

TEST(EapMsChapV2Hostile, AnAckOtherThanSuccessFailsAndDropsTheKeys) {
  ScriptedRandom random({});
  EapMsChapV2 method("User", users, random);
  const MethodStep challenge = method.start();
  ASSERT_EQ(method.on_response(response_with_password(challenge.type_data, "User", "clientPass")).kind,
            MethodStep::Kind::kRequest);
  EXPECT_EQ(method.on_response(Octets{4}).kind, MethodStep::Kind::kFailure);
  EXPECT_FALSE(method.inner_session_key().has_value());
  EXPECT_EQ(method.on_response(Octets{3}).kind, MethodStep::Kind::kFailure);  // Spent.
}

TEST(MsChapV2Error, EveryErrorHasAName) {
  for (int e = 0; e <= static_cast<int>(MsChapV2Error::kWrongPassword); ++e) {
    EXPECT_NE(to_string(static_cast<MsChapV2Error>(e)), "EAP-MSCHAPv2 failure") << e;
  }
}

}  // namespace
}  // namespace rw::eap
