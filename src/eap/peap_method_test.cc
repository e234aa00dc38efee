// peap_method.h end to end: a real OpenSSL client (tls_peer_for_test.h)
// with a PEAPv0 peer written here (compressed inner packets, EAP-MSCHAPv2
// from RFC 2759's primitives, the Result TLV, and its own PRF+ and
// Compound MAC for cryptobinding). Right and wrong passwords, unknown and
// mismatched inner identities, cryptobinding right and wrong, malformed
// inner packets, the round-trip bound; TLS 1.2 and 1.3.
#include "eap/peap_method.h"

#include <gtest/gtest.h>
#include <openssl/hmac.h>

#include <functional>
#include <ostream>
#include <string>

#include "auth/mschap.h"
#include "eap/tls_peer_for_test.h"

namespace rw::eap {
namespace {

using testing::Octets;
using testing::run_conversation;
using testing::TlsTestPeer;
using testing::TlsTestPki;

TlsServerContext peap_context() { return TlsTestPki::get().tunnel_context(); }

// The users the credential lookup knows: bob, password "correct horse".
std::optional<auth::Credential> lookup_bob(std::string_view user) {
  if (user == "bob") return auth::Credential::cleartext("correct horse");
  return std::nullopt;
}

Octets hmac_sha1(Bytes key, Bytes data) {
  Octets mac(20);
  unsigned int size = 0;
  HMAC(EVP_sha1(), key.data(), static_cast<int>(key.size()), data.data(), data.size(), mac.data(), &size);
  return mac;
}

// The peer's PRF+ ([MS-PEAP] §3.1.5.5.2.2), written apart from the server's.
Octets peer_prf_plus(Bytes key, const Octets& seed, std::size_t length) {
  Octets out;
  Octets previous;
  for (std::uint8_t n = 1; out.size() < length; ++n) {
    Octets input = previous;
    input.insert(input.end(), seed.begin(), seed.end());
    input.insert(input.end(), {n, 0, 0});
    previous = hmac_sha1(key, input);
    out.insert(out.end(), previous.begin(), previous.end());
  }
  out.resize(length);
  return out;
}

Octets text(std::string_view s) { return Octets(s.begin(), s.end()); }

// The peer's side of phase 2.
struct PeapPeer {
  std::string identity = "bob";
  std::string name = "bob";  // The Name in the MS-CHAPv2 Response.
  std::string password = "correct horse";
  bool crypto_binding = true;  // Answer a Crypto-Binding TLV with one.
  bool corrupt_mac = false;
  // Replaces the peer's answer to the n-th inner request (0: Identity).
  std::function<std::optional<Octets>(int n, const Octets& request)> tamper{};

  // What the peer saw.
  bool authenticator_verified = false;
  std::string failure_message{};
  std::optional<std::uint16_t> result{};
  bool saw_crypto_binding = false;
  bool server_mac_ok = false;
  std::optional<Msk> crypto_binding_msk{};

  int requests = 0;
  Octets authenticator_challenge{};
  Octets peer_challenge = Octets(16, 0x33);
  auth::NtResponse nt_response{};

  Octets on_plaintext(SSL* ssl, const Octets& in) {
    const int n = requests++;
    Octets answer = answer_to(ssl, in);
    if (tamper) {
      if (auto replaced = tamper(n, in)) return *replaced;
    }
    return answer;
  }

  Octets answer_to(SSL* ssl, const Octets& in) {
    // An Extensions request keeps its EAP header (Code 1, Length, Type 33);
    // every other inner request is compressed to Type and Type-Data.
    if (in.size() >= 5 && in[0] == 1 && (in[2] << 8 | in[3]) == static_cast<int>(in.size()) && in[4] == 33) {
      return on_extensions(ssl, in);
    }
    if (in == Octets{1}) {
      Octets out{1};
      out.insert(out.end(), identity.begin(), identity.end());
      return out;
    }
    if (in.size() < 5 || in[0] != 26) return {};
    const Bytes ms(in.data() + 1, in.size() - 1);
    if (ms[0] == 1) return on_challenge(ms);
    if (ms[0] == 3) {
      const auto hash = auth::nt_hash_of(auth::Credential::cleartext(password));
      const auto expected =
          auth::authenticator_response(*hash, nt_response, peer_challenge, authenticator_challenge, name);
      authenticator_verified =
          as_chars(ms.subspan(4)).starts_with(std::string_view(expected.data(), expected.size()));
      return Octets{26, 3};
    }
    if (ms[0] == 4) {
      failure_message = std::string(as_chars(ms.subspan(4)));
      return Octets{26, 4};
    }
    return {};
  }

  Octets on_challenge(Bytes ms) {
    authenticator_challenge.assign(ms.begin() + 5, ms.begin() + 21);
    const auto hash = auth::nt_hash_of(auth::Credential::cleartext(password));
    nt_response = auth::challenge_response(
        auth::challenge_hash(peer_challenge, authenticator_challenge, auth::ms_chap_user_name(name)), *hash);
    Octets out{26, 2, ms[1], 0, 0, 49};
    out.insert(out.end(), peer_challenge.begin(), peer_challenge.end());
    out.insert(out.end(), 8, 0);
    out.insert(out.end(), nt_response.begin(), nt_response.end());
    out.push_back(0);
    out.insert(out.end(), name.begin(), name.end());
    out[4] = static_cast<std::uint8_t>(out.size() - 1);
    return out;
  }

  Octets on_extensions(SSL* ssl, const Octets& in) {
    Octets binding_request;
    for (std::size_t at = 5; at + 4 <= in.size();) {
      const int type = (in[at] << 8 | in[at + 1]) & 0x3FFF;
      const std::size_t length = in[at + 2] << 8 | in[at + 3];
      if (type == 3) result = static_cast<std::uint16_t>(in[at + 4] << 8 | in[at + 5]);
      if (type == 12)
        binding_request.assign(in.begin() + static_cast<long>(at),
                               in.begin() + static_cast<long>(at + 4 + length));
      at += 4 + length;
    }
    Octets out{2, in[1], 0, 0, 33, 0x80, 3, 0, 2, 0, static_cast<std::uint8_t>(*result)};
    if (!binding_request.empty()) {
      saw_crypto_binding = true;
      if (crypto_binding) {
        const Octets binding_response = bind(ssl, binding_request);
        out.insert(out.end(), binding_response.begin(), binding_response.end());
      }
    }
    out[3] = static_cast<std::uint8_t>(out.size());
    return out;
  }

  // Checks the server's Compound MAC and answers with SubType 1 and the
  // same nonce; keeps the MSK it derives from IPMK.
  Octets bind(SSL* ssl, const Octets& request) {
    const Octets tk = testing::tls12_prf_of_peer(ssl, "client EAP encryption", 60);
    const auto hash = auth::nt_hash_of(auth::Credential::cleartext(password));
    const auth::MppeKeys keys = auth::ms_chap2_mppe_keys(*hash, nt_response);
    Octets seed = text("Inner Methods Compound Keys");
    // The peer's ISK: its send key (the server's receive key), then its
    // receive key ([MS-PEAP] §3.1.5.5.2.2; the order eapol_test uses).
    seed.insert(seed.end(), keys.recv_key.begin(), keys.recv_key.end());
    seed.insert(seed.end(), keys.send_key.begin(), keys.send_key.end());
    const Octets ipmk_cmk = peer_prf_plus(Bytes(tk).first(40), seed, 60);
    const Bytes ipmk = Bytes(ipmk_cmk).first(40);
    const Bytes cmk = Bytes(ipmk_cmk).subspan(40);
    auto mac_of = [&](Octets tlv) {
      std::fill(tlv.begin() + 40, tlv.end(), 0);
      tlv.push_back(25);
      return hmac_sha1(cmk, tlv);
    };
    server_mac_ok = mac_of(request) == Octets(request.begin() + 40, request.end());
    Octets response = request;
    response[7] = 1;  // SubType: Binding Response.
    const Octets mac = mac_of(response);
    std::copy(mac.begin(), mac.end(), response.begin() + 40);
    if (corrupt_mac) response[45] ^= 0x01;
    Octets label = text("Session Key Generating Function");
    label.push_back(0);
    const Octets csk = peer_prf_plus(ipmk, label, 128);
    Msk msk;
    std::copy_n(csk.begin(), msk.size(), msk.begin());
    crypto_binding_msk = msk;
    return response;
  }
};

struct Outcome {
  MethodStep last;
  int requests = 0;
};

class PeapRunner : public ::testing::Test {
 protected:
  Outcome run(PeapMethod& method, PeapPeer& inner, TlsVersion version) {
    client_ = std::make_unique<TlsTestPeer>(TlsTestPeer::Options{
        .version = version,
        .respond = [&inner](SSL* ssl, const Octets& in) { return inner.on_plaintext(ssl, in); }});
    Outcome result;
    result.last = run_conversation(method, *client_, &result.requests);
    return result;
  }
  PeapMethod method(PeapMethodOptions options = {}) {
    return PeapMethod(peap_context(), "anonymous@example.org", lookup_bob, random_, std::move(options));
  }
  SeededRandom random_{13};
  std::unique_ptr<TlsTestPeer> client_;
};

class EapPeap : public PeapRunner, public ::testing::WithParamInterface<TlsVersion> {};

TEST_P(EapPeap, RightPasswordIsAcceptedWithTheTunnelsMsk) {
  PeapMethod peap = method({.crypto_binding = PeapCryptoBinding::kOff});
  PeapPeer inner;
  const Outcome done = run(peap, inner, GetParam());
  ASSERT_EQ(done.last.kind, MethodStep::Kind::kSuccess) << done.last.reason;
  ASSERT_TRUE(done.last.msk.has_value());
  if (GetParam() == TlsVersion::k1_2) {
    const Octets material = testing::tls12_prf_of_peer(client_->ssl(), "client EAP encryption", 128);
    EXPECT_TRUE(std::equal(done.last.msk->begin(), done.last.msk->end(), material.begin()));
  } else {
    EXPECT_EQ(*done.last.msk,
              testing::tls13_msk_of_peer(client_->ssl(), "EXPORTER_EAP_TLS_Key_Material", 0x19));
  }
  EXPECT_TRUE(inner.authenticator_verified);
  EXPECT_EQ(inner.result, std::optional<std::uint16_t>(kResultSuccess));
  EXPECT_FALSE(inner.saw_crypto_binding);
  EXPECT_FALSE(peap.crypto_bound());
  EXPECT_EQ(peap.decided_identity(), "bob");
  EXPECT_EQ(peap.eap_identity(), "anonymous@example.org");
}

TEST_P(EapPeap, WrongPasswordIsRejectedWithE691AndAFailureResult) {
  PeapMethod peap = method();
  PeapPeer inner{.password = "battery staple"};
  const Outcome done = run(peap, inner, GetParam());
  EXPECT_EQ(done.last.kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(done.last.reason, "inner EAP-MSCHAPv2 rejected: wrong password");
  EXPECT_FALSE(done.last.msk.has_value());
  EXPECT_TRUE(inner.failure_message.starts_with("E=691 R=0 C=")) << inner.failure_message;
  EXPECT_EQ(inner.result, std::optional<std::uint16_t>(kResultFailure));
  EXPECT_FALSE(inner.saw_crypto_binding);
  EXPECT_EQ(peap.decided_identity(), "");
  EXPECT_EQ(peap.inner_identity(), "bob");
}

TEST_P(EapPeap, UnknownInnerIdentityIsRejected) {
  PeapMethod peap = method();
  PeapPeer inner{.identity = "mallory", .name = "mallory"};
  const Outcome done = run(peap, inner, GetParam());
  EXPECT_EQ(done.last.kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(done.last.reason, "inner EAP-MSCHAPv2 rejected: unknown user");
  EXPECT_TRUE(inner.failure_message.starts_with("E=691"));
}

TEST_P(EapPeap, MsChapNameOtherThanTheInnerIdentityIsRejected) {
  PeapMethod peap = method();
  PeapPeer inner{.identity = "bob", .name = "mallory"};
  const Outcome done = run(peap, inner, GetParam());
  EXPECT_EQ(done.last.kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(peap.inner_error(), std::optional<MsChapV2Error>(MsChapV2Error::kNameMismatch));
}

INSTANTIATE_TEST_SUITE_P(Versions, EapPeap, ::testing::Values(TlsVersion::k1_2, TlsVersion::k1_3),
                         [](const auto& version) {
                           return version.param == TlsVersion::k1_2 ? "Tls12" : "Tls13";
                         });

class EapPeapTls12 : public PeapRunner {};

TEST_F(EapPeapTls12, CryptoBindingIsVerifiedAndTheMskComesFromIpmk) {
  PeapMethod peap = method();
  PeapPeer inner;
  const Outcome done = run(peap, inner, TlsVersion::k1_2);
  ASSERT_EQ(done.last.kind, MethodStep::Kind::kSuccess) << done.last.reason;
  EXPECT_TRUE(inner.saw_crypto_binding);
  EXPECT_TRUE(inner.server_mac_ok);
  EXPECT_TRUE(peap.crypto_bound());
  ASSERT_TRUE(inner.crypto_binding_msk.has_value());
  EXPECT_EQ(done.last.msk, inner.crypto_binding_msk);
  const Octets material = testing::tls12_prf_of_peer(client_->ssl(), "client EAP encryption", 64);
  EXPECT_FALSE(std::equal(done.last.msk->begin(), done.last.msk->end(), material.begin()));
}

TEST_F(EapPeapTls12, WrongCompoundMacIsRefused) {
  PeapMethod peap = method();
  PeapPeer inner{.corrupt_mac = true};
  const Outcome done = run(peap, inner, TlsVersion::k1_2);
  EXPECT_EQ(done.last.kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(peap.error(), std::optional<PeapMethodError>(PeapMethodError::kCryptoBindingInvalid));
  EXPECT_FALSE(done.last.msk.has_value());
}

TEST_F(EapPeapTls12, PeerWithoutCryptoBindingIsAcceptedWhenOptional) {
  PeapMethod peap = method();
  PeapPeer inner{.crypto_binding = false};
  const Outcome done = run(peap, inner, TlsVersion::k1_2);
  ASSERT_EQ(done.last.kind, MethodStep::Kind::kSuccess) << done.last.reason;
  EXPECT_FALSE(peap.crypto_bound());
  const Octets material = testing::tls12_prf_of_peer(client_->ssl(), "client EAP encryption", 64);
  EXPECT_TRUE(std::equal(done.last.msk->begin(), done.last.msk->end(), material.begin()));
}

TEST_F(EapPeapTls12, PeerWithoutCryptoBindingIsRefusedWhenRequired) {
  PeapMethod peap = method({.crypto_binding = PeapCryptoBinding::kRequired});
  PeapPeer inner{.crypto_binding = false};
  const Outcome done = run(peap, inner, TlsVersion::k1_2);
  EXPECT_EQ(done.last.kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(peap.error(), std::optional<PeapMethodError>(PeapMethodError::kCryptoBindingMissing));
}

TEST(EapPeapTls13, NoCryptoBindingIsAsked) {
  SeededRandom random(3);
  PeapMethod peap(peap_context(), "anonymous", lookup_bob, random,
                  {.crypto_binding = PeapCryptoBinding::kRequired});
  PeapPeer inner;
  TlsTestPeer client(TlsTestPeer::Options{
      .version = TlsVersion::k1_3,
      .respond = [&inner](SSL* ssl, const Octets& in) { return inner.on_plaintext(ssl, in); }});
  EXPECT_EQ(run_conversation(peap, client).kind, MethodStep::Kind::kSuccess);
  EXPECT_FALSE(inner.saw_crypto_binding);
}

struct Malformed {
  const char* name;
  int request;  // Which inner request the damaged answer replies to (0: Identity).
  Octets answer;
  PeapMethodError error;
};

void PrintTo(const Malformed& malformed, std::ostream* out) { *out << malformed.name; }

class EapPeapHostile : public PeapRunner, public ::testing::WithParamInterface<Malformed> {};

TEST_P(EapPeapHostile, MalformedInnerPacketsFailWithTheirName) {
  const Malformed& c = GetParam();
  PeapMethod peap = method();
  PeapPeer inner;
  inner.tamper = [&c](int n, const Octets& request) -> std::optional<Octets> {
    if (n != c.request) return std::nullopt;
    Octets answer = c.answer;
    if (answer.size() > 1 && request.size() >= 5 && request[4] == 33)
      answer[1] = request[1];  // Its Identifier.
    return answer;
  };
  const Outcome done = run(peap, inner, TlsVersion::k1_2);
  EXPECT_EQ(done.last.kind, MethodStep::Kind::kFailure) << c.name;
  EXPECT_EQ(peap.error(), std::optional<PeapMethodError>(c.error)) << c.name << ": " << done.last.reason;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, EapPeapHostile,
    ::testing::Values(
        Malformed{"a full EAP header around the identity", 0, Octets{2, 7, 0, 8, 1, 'b', 'o', 'b'},
                  PeapMethodError::kInnerUnexpectedType},
        Malformed{"an empty identity", 0, Octets{1}, PeapMethodError::kInnerIdentity},
        Malformed{"an identity over 253 octets", 0,
                  [] {
                    Octets o(255, 'x');
                    o[0] = 1;
                    return o;
                  }(),
                  PeapMethodError::kInnerIdentity},
        Malformed{"a Nak of EAP-MSCHAPv2", 1, Octets{3, 4}, PeapMethodError::kInnerUnexpectedType},
        Malformed{"a truncated Response", 1, Octets{26, 2, 0, 0, 10, 49}, PeapMethodError::kInnerMalformed},
        Malformed{"no Result TLV", 3, Octets{2, 0, 0, 5, 33}, PeapMethodError::kExtensions},
        Malformed{"a TLV past the end", 3, Octets{2, 0, 0, 9, 33, 0x80, 3, 0, 9},
                  PeapMethodError::kExtensions}),
    [](const auto& param_info) { return "Case" + std::to_string(param_info.index); });

TEST_F(EapPeapTls12, ThePeersFailureResultAfterOurSuccessFails) {
  PeapMethod peap = method({.crypto_binding = PeapCryptoBinding::kOff});
  PeapPeer inner;
  inner.tamper = [](int n, const Octets& request) -> std::optional<Octets> {
    if (n != 3) return std::nullopt;
    return Octets{2, request[1], 0, 11, 33, 0x80, 3, 0, 2, 0, 2};
  };
  const Outcome done = run(peap, inner, TlsVersion::k1_2);
  EXPECT_EQ(done.last.kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(peap.error(), std::optional<PeapMethodError>(PeapMethodError::kPeerResultFailure));
}

TEST_F(EapPeapTls12, TheRoundTripBoundEndsTheConversation) {
  PeapMethod peap = method({.responses_max = 4});
  PeapPeer inner;
  const Outcome done = run(peap, inner, TlsVersion::k1_2);
  EXPECT_EQ(done.last.kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(peap.error(), std::optional<PeapMethodError>(PeapMethodError::kTooManyResponses));
  EXPECT_EQ(done.requests, 5);  // The start and four answered requests.
}

TEST(EapPeapStart, IsTheSFlagWithVersionZero) {
  SeededRandom random(1);
  PeapMethod peap(peap_context(), "anonymous", lookup_bob, random);
  EXPECT_EQ(peap.start().type_data, Octets{0x20});
  EXPECT_EQ(peap.type(), Type::kPeap);
}

TEST(EapPeapStart, AnotherVersionIsRefused) {
  SeededRandom random(1);
  PeapMethod peap(peap_context(), "anonymous", lookup_bob, random);
  (void)peap.start();
  EXPECT_EQ(peap.on_response(Octets{0x01, 0x16}).kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(peap.error(), std::optional<PeapMethodError>(PeapMethodError::kVersion));
}

TEST(PeapMethodError, EveryErrorHasAName) {
  for (int e = 0; e <= static_cast<int>(PeapMethodError::kCryptoBindingInvalid); ++e) {
    EXPECT_NE(to_string(static_cast<PeapMethodError>(e)), "PEAP failure") << e;
  }
}

}  // namespace
}  // namespace rw::eap
