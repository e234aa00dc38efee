// The supplicant of `radiusward bench eap` (docs/benchmarking.md "EAP"): the
// peer's side of EAP-TLS (RFC 5216, RFC 9190) and PEAPv0 with EAP-MSCHAPv2
// inside ([MS-PEAP], draft-kamath-pppext-eap-mschapv2-02), one conversation
// per object, driven by the server's EAP-Requests. TLS runs on OpenSSL over
// memory BIOs; the framing (L, M, S flags, fragments, ACKs) is the core's
// (eap/tls_fragments.h), the MS-CHAPv2 arithmetic auth/mschap.h's, the
// cryptobinding eap/peap_packets.h's. The server's octets are untrusted:
// every malformed or unexpected request ends the conversation with a named
// reason, never a crash.
#pragma once

#include <openssl/ssl.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/mschap.h"
#include "base/bytes.h"
#include "base/random.h"
#include "base/result.h"
#include "eap/method.h"
#include "eap/tls_fragments.h"
#include "eap/tls_server_context.h"

namespace rw::loadgen_shell {

enum class EapBenchMethod : std::uint8_t { kTls, kPeap };

[[nodiscard]] std::string_view to_string(EapBenchMethod method);
[[nodiscard]] std::optional<EapBenchMethod> parse_eap_bench_method(std::string_view text);

// Why a conversation did not end in an EAP-Success with the right keys.
// Closed: each has a name in the report.
enum class SupplicantError : std::uint8_t {
  kMalformedRequest,          // Not an EAP-Request, or its Type-Data is not what the method allows.
  kUnexpectedType,            // A method the supplicant neither runs nor can Nak away from.
  kFraming,                   // The server's EAP-TLS framing was wrong (tls_fragments.h).
  kTlsFailed,                 // The handshake failed (alert, bad certificate, protocol).
  kInnerMalformed,            // PEAP phase 2: an inner request that does not parse.
  kInnerFailure,              // PEAP phase 2: EAP-MSCHAPv2 Failure (the wrong password).
  kBadAuthenticatorResponse,  // The server's MS-CHAPv2 "S=" did not prove the password.
  kResultFailure,             // PEAP: the Result TLV said Failure.
  kBadCryptoBinding,          // PEAP: the server's Compound MAC was wrong.
  kEapFailure,                // The server sent EAP-Failure (Access-Reject).
  kEarlySuccess,              // EAP-Success before the method was done.
  kMissingKeys,               // Access-Accept without both MS-MPPE keys.
  kKeyMismatch,               // The MS-MPPE keys are not the supplicant's MSK.
  kTooManyRounds,             // More requests than any conversation needs.
  kCount,
};
inline constexpr std::size_t kSupplicantErrorCount = static_cast<std::size_t>(SupplicantError::kCount);
[[nodiscard]] std::string_view to_string(SupplicantError error);

// What every supplicant of a run shares: the client TLS context (the CA
// that must have signed the server, the client certificate for EAP-TLS, the
// TLS version) and the framing.
struct SupplicantConfig {
  EapBenchMethod method = EapBenchMethod::kTls;
  eap::TlsVersion tls_version = eap::TlsVersion::k1_2;
  std::string ca_file{};           // Verifies the server's certificate.
  std::string certificate_file{};  // EAP-TLS: the client certificate (PEM) ...
  std::string key_file{};          // ... and its key.
  std::size_t fragment_octets = eap::kTlsFragmentOctetsDefault;
};

// The shared OpenSSL client context, made once per run.
class SupplicantTls {
 public:
  [[nodiscard]] static Result<SupplicantTls, std::string> create(const SupplicantConfig& config);
  [[nodiscard]] SSL_CTX* get() const { return context_.get(); }

 private:
  struct Free {
    void operator()(SSL_CTX* context) const { SSL_CTX_free(context); }
  };
  std::shared_ptr<SSL_CTX> context_;
};

// One conversation, from the EAP-Response/Identity to the MSK.
class EapSupplicant {
 public:
  // `identity` is the outer and, for PEAP, the inner identity; `password`
  // the PEAP user's. `tls` and `random` outlive the supplicant.
  EapSupplicant(const SupplicantConfig& config, const SupplicantTls& tls, std::string identity,
                std::string password, RandomSource& random);
  ~EapSupplicant();
  EapSupplicant(const EapSupplicant&) = delete;
  EapSupplicant& operator=(const EapSupplicant&) = delete;

  // The first EAP packet: Response/Identity (RFC 3748 §5.1), Identifier 0
  // (as a NAS forwards it without an EAPOL exchange before).
  [[nodiscard]] std::vector<std::uint8_t> identity_response() const;

  // The answer to one EAP packet of an Access-Challenge: the whole EAP
  // Response to send back.
  [[nodiscard]] Result<std::vector<std::uint8_t>, SupplicantError> on_request(Bytes eap_packet);

  // The Access-Accept's EAP-Success and its keys in clear (MS-MPPE-Recv-Key
  // is the MSK's first 32 octets, MS-MPPE-Send-Key the next 32: RFC 5216
  // §2.3): checks the method ended and the keys are the supplicant's.
  [[nodiscard]] Result<void, SupplicantError> on_success(Bytes recv_key, Bytes send_key) const;

  // Why the server's EAP-Failure came: the inner method's Failure or a
  // failed Result TLV when one was seen, else kEapFailure.
  [[nodiscard]] SupplicantError failure_reason() const;

  // Requests answered so far.
  [[nodiscard]] int rounds() const { return rounds_; }

 private:
  Result<std::vector<std::uint8_t>, SupplicantError> on_tls(std::uint8_t identifier, Bytes type_data);
  Result<void, SupplicantError> feed_tls(const std::vector<std::uint8_t>& records);
  Result<void, SupplicantError> on_inner(Bytes plaintext);
  Result<std::vector<std::uint8_t>, SupplicantError> inner_answer(Bytes plaintext);
  Result<std::vector<std::uint8_t>, SupplicantError> on_ms_chap_v2(Bytes data);
  Result<std::vector<std::uint8_t>, SupplicantError> on_extensions(Bytes packet);
  std::vector<std::uint8_t> response(std::uint8_t identifier, std::uint8_t type, Bytes type_data) const;
  std::vector<std::uint8_t> next_output(std::uint8_t identifier);
  [[nodiscard]] std::uint8_t eap_type() const;
  [[nodiscard]] eap::Msk tls_msk() const;

  struct SslFree {
    void operator()(SSL* ssl) const { SSL_free(ssl); }
  };

  SupplicantConfig config_;
  std::string identity_;
  std::string password_;
  RandomSource& random_;
  std::unique_ptr<SSL, SslFree> ssl_;
  eap::TlsFragmenter fragmenter_;
  eap::TlsReassembler reassembler_;
  std::uint8_t flags_base_ = 0;  // PEAP: the version the server started with (0).
  bool started_ = false;
  bool handshake_done_ = false;
  bool method_done_ = false;  // EAP-TLS: the handshake; PEAP: the Result TLV answered.
  int rounds_ = 0;
  // PEAP phase 2.
  std::vector<std::uint8_t> pending_plaintext_;
  auth::NtHash nt_hash_{};
  std::array<std::uint8_t, 16> peer_challenge_{};
  std::array<std::uint8_t, 16> authenticator_challenge_{};
  auth::NtResponse nt_response_{};
  bool inner_verified_ = false;
  bool inner_failed_ = false;
  bool result_failed_ = false;
  std::optional<eap::Msk> crypto_binding_msk_;
};

}  // namespace rw::loadgen_shell
