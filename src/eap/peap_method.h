// PEAPv0 with EAP-MSCHAPv2 inside as an eap::Method, Type 25
// (draft-josefsson-pppext-eap-tls-eap, [MS-PEAP]): the TLS tunnel over
// TlsTransfer and TlsServerSession (no client certificate), then inside it
// an inner EAP-Identity, EAP-MSCHAPv2 (eap_mschapv2.h) and the Result TLV
// with optional cryptobinding (peap_packets.h); docs/authentication.md
// "PEAP". Does no I/O of its own and assumes no thread.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/random.h"
#include "eap/eap_mschapv2.h"
#include "eap/method.h"
#include "eap/peap_packets.h"
#include "eap/tls_fragments.h"
#include "eap/tls_server_context.h"
#include "eap/tls_session.h"

namespace rw::eap {

// TLS 1.3 (RFC 9427 §2.1): TLS-Exporter("EXPORTER_EAP_TLS_Key_Material",
// Type 25, 128). TLS 1.2 uses EAP-TLS's label, "client EAP encryption".
inline constexpr std::uint8_t kPeapKeyContext = 0x19;

// Whether the server asks for cryptobinding ([MS-PEAP] §3.1.5.5). Over TLS
// 1.3 it is never asked (docs/authentication.md "PEAP").
enum class PeapCryptoBinding : std::uint8_t {
  kOff,       // No Crypto-Binding TLV is sent; one from the peer is ignored.
  kOptional,  // Sent; a peer that answers without one is accepted on the TLS keys.
  kRequired,  // Sent; a peer that answers without one fails.
};

struct PeapMethodOptions {
  std::size_t fragment_octets = kTlsFragmentOctetsDefault;
  TlsReassemblyLimits reassembly{};
  std::size_t responses_max = 256;
  std::size_t tlvs_max = 16;  // TLVs in the peer's Extensions packet.
  PeapCryptoBinding crypto_binding = PeapCryptoBinding::kOptional;
  std::string server_name = "radiusward";  // The Name of the EAP-MSCHAPv2 Challenge.
};

enum class PeapMethodError : std::uint8_t {
  kFraming,               // The response's framing was refused.
  kExpectedAck,           // Data where an ACK of our fragment was due.
  kVersion,               // The peer's flags name a PEAP version other than 0.
  kUnexpectedAck,         // An ACK where a TLS message was due.
  kIncompleteFlight,      // A whole message after which TLS had nothing to answer.
  kTooManyResponses,      // responses_max reached.
  kTls,                   // The TLS session failed (TlsFailure says how).
  kInnerUnexpectedType,   // An inner response of another Type than requested (a Nak included).
  kInnerIdentity,         // The inner EAP-Identity is empty or over 253 octets.
  kInnerMalformed,        // The inner EAP-MSCHAPv2 packet is malformed (MsChapV2Error says how).
  kInnerRejected,         // EAP-MSCHAPv2 refused the password or the user.
  kExtensions,            // The peer's Extensions packet is malformed (PeapPacketError says how).
  kPeerResultFailure,     // The peer's Result TLV says Failure after our Success.
  kCryptoBindingMissing,  // kRequired, and the peer sent no Crypto-Binding TLV.
  kCryptoBindingInvalid,  // The peer's Compound MAC is wrong.
};
[[nodiscard]] std::string_view to_string(PeapMethodError error);

class PeapMethod final : public Method {
 public:
  // `context` is built with require_client_certificate = false; `random`
  // outlives this object (the MS-CHAPv2 challenge, the cryptobinding nonce).
  // Requires: options.fragment_octets within bounds; `lookup` callable.
  PeapMethod(TlsServerContext context, std::string eap_identity, InnerCredentialLookup lookup,
             RandomSource& random, PeapMethodOptions options = {});

  [[nodiscard]] Type type() const override { return Type::kPeap; }
  // Start: flags S, version 0.
  [[nodiscard]] MethodStep start() override;
  [[nodiscard]] MethodStep on_response(Bytes type_data) override;
  // The inner EAP-Identity once EAP-MSCHAPv2 accepted it.
  [[nodiscard]] std::string_view decided_identity() const override;
  [[nodiscard]] std::string_view eap_identity() const { return eap_identity_; }
  // The inner EAP-Identity as the peer sent it, accepted or not.
  [[nodiscard]] std::string_view inner_identity() const { return inner_identity_; }
  [[nodiscard]] std::optional<PeapMethodError> error() const { return error_; }
  [[nodiscard]] std::optional<TlsFailure> tls_failure() const { return tls_failure_; }
  [[nodiscard]] std::optional<MsChapV2Error> inner_error() const;
  // Whether the peer's Crypto-Binding TLV was verified (the MSK then comes from IPMK).
  [[nodiscard]] bool crypto_bound() const { return crypto_bound_; }

 private:
  enum class Phase : std::uint8_t {
    kHandshake,     // Exchanging TLS messages.
    kFinishedSent,  // TLS 1.2: our Finished is out; the peer's ACK starts phase 2.
    kIdentity,      // The inner EAP-Request/Identity is out.
    kMsChapV2,      // EAP-MSCHAPv2 is running.
    kResult,        // The Result TLV is out; the peer's Extensions response ends it.
    kAlertSent,
    kDone,
  };

  MethodStep on_message(std::vector<std::uint8_t> message);
  MethodStep on_handshake_done();
  MethodStep on_inner(Bytes plaintext);
  MethodStep on_inner_identity(Bytes plaintext);
  MethodStep on_inner_ms_chap_v2(Bytes plaintext);
  MethodStep on_result(Bytes plaintext);
  MethodStep send_inner(Type type, Bytes type_data);
  MethodStep send_result(std::uint16_t result);
  MethodStep send_plaintext(Bytes plaintext);
  MethodStep failure(PeapMethodError error, std::string_view detail = {});
  MethodStep failure_of_tls(TlsFailure failure);
  void wipe_keys();

  TlsServerContext context_;
  std::string eap_identity_;
  InnerCredentialLookup lookup_;
  RandomSource& random_;
  PeapMethodOptions options_;
  std::unique_ptr<TlsServerSession> session_{};
  TlsTransfer transfer_;
  Phase phase_ = Phase::kHandshake;
  std::size_t responses_ = 0;
  std::optional<TlsVersion> version_{};
  std::vector<std::uint8_t> key_material_{};  // 128 octets of the tunnel's keying material.
  std::string inner_identity_{};
  std::unique_ptr<EapMsChapV2> inner_{};
  std::uint8_t extensions_identifier_ = 0;
  std::uint16_t result_sent_ = kResultFailure;
  std::optional<Cmk> cmk_{};
  std::optional<Ipmk> ipmk_{};
  bool crypto_bound_ = false;
  bool succeeded_ = false;
  std::optional<PeapMethodError> error_{};
  std::optional<TlsFailure> tls_failure_{};
  std::string failure_reason_{};  // Kept while an alert or a failure Result TLV is out.
};

}  // namespace rw::eap
