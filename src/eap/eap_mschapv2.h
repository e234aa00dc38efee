// EAP-MSCHAPv2 (Type 26, draft-kamath-pppext-eap-mschapv2-02 §2), the
// server's side as it runs inside PEAP: Challenge, the peer's Response
// checked by MS-CHAPv2 (RFC 2759, src/auth/mschap.h), Success or Failure and
// the peer's acknowledgement of it, and the MPPE keys (RFC 3079) PEAP binds
// to its tunnel (docs/authentication.md "PEAP"). Pure: randomness comes from
// a RandomSource, credentials from a callback.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/mppe.h"
#include "auth/password.h"
#include "base/bytes.h"
#include "base/random.h"
#include "base/result.h"
#include "eap/method.h"

namespace rw::eap {

// The known good password of an inner user, by the name the peer gave
// (its inner EAP-Identity), or nothing when the user is unknown. The gateway
// supplies it from the users file or SQL; a Cleartext-Password or an
// NT-Password works (auth::nt_hash_of), other forms fail the inner method.
// Called at most once per conversation, from on_response.
using InnerCredentialLookup = std::function<std::optional<auth::Credential>(std::string_view user_name)>;

// The OpCodes of EAP-MSCHAPv2 (draft-kamath-pppext-eap-mschapv2-02 §2).
enum class MsChapV2OpCode : std::uint8_t {
  kChallenge = 1,
  kResponse = 2,
  kSuccess = 3,
  kFailure = 4,
  kChangePassword = 7,  // Not built: refused.
};

// The peer's EAP-MSCHAPv2 Response (OpCode 2), borrowed from its input.
struct MsChapV2Response {
  std::uint8_t ms_chap_v2_id = 0;
  Bytes peer_challenge;  // 16 octets.
  Bytes nt_response;     // 24 octets.
  std::uint8_t flags = 0;
  Bytes name;  // The peer's user name, as it entered the ChallengeHash.
};

enum class MsChapV2Error : std::uint8_t {
  kEmpty,               // No OpCode octet.
  kUnexpectedOpCode,    // An OpCode other than the one due (Change-Password included).
  kTruncated,           // Shorter than the fixed fields, or MS-Length past the data.
  kWrongValueSize,      // Value-Size other than 49.
  kWrongId,             // MS-CHAPv2-ID other than the Challenge's.
  kNameTooLong,         // Name over 256 octets.
  kNameMismatch,        // Name is not the inner identity (domains stripped).
  kUnknownUser,         // The credential lookup knows no such user.
  kUnusableCredential,  // The stored password has no NT hash (crypt, digests).
  kWrongPassword,       // The NT-Response does not match.
};
[[nodiscard]] std::string_view to_string(MsChapV2Error error);

// Splits a Response's Type-Data: OpCode(1) MS-CHAPv2-ID(1) MS-Length(2)
// Value-Size(1)=49 Peer-Challenge(16) Reserved(8) NT-Response(24) Flags(1)
// Name. MS-Length counts from OpCode; octets past it are ignored.
[[nodiscard]] Result<MsChapV2Response, MsChapV2Error> parse_ms_chap_v2_response(Bytes type_data);

// The 32-octet Inner Session Key PEAP's cryptobinding takes from MS-CHAPv2
// ([MS-PEAP] §3.1.5.5.2.2, "Server ISK = InnerMPPERecvKey |
// InnerMPPESendKey"): the server's MPPE receive key, then its send key (the
// peer's send key, then its receive key; as wpa_supplicant computes it).
using InnerSessionKey = std::array<std::uint8_t, 2 * auth::kMppeKeySize>;

inline constexpr std::size_t kMsChapV2NameOctetsMax = 256;

// One EAP-MSCHAPv2 exchange. A Method of Type 26 whose kSuccess carries no
// MSK (its keys are inner_session_key(), for the tunnel); one try only (the
// Failure says R=0), no password change. Standalone EAP-MSCHAPv2 outside a
// tunnel is not offered: the password's challenge-response would be open to
// offline guessing.
class EapMsChapV2 final : public Method {
 public:
  // `inner_identity` is the inner EAP-Identity; `random` outlives this
  // object. Requires: `lookup` callable, server_name at most 64 octets.
  EapMsChapV2(std::string inner_identity, InnerCredentialLookup lookup, RandomSource& random,
              std::string server_name = "radiusward");

  [[nodiscard]] Type type() const override { return Type::kMsChapV2; }
  // The Challenge: 16 random octets and the server's name.
  [[nodiscard]] MethodStep start() override;
  [[nodiscard]] MethodStep on_response(Bytes type_data) override;
  // The inner EAP-Identity once the password was checked against it.
  [[nodiscard]] std::string_view decided_identity() const override;
  [[nodiscard]] std::optional<MsChapV2Error> error() const { return error_; }
  // The keys of a verified Response (present from the Success request on).
  [[nodiscard]] const std::optional<InnerSessionKey>& inner_session_key() const { return isk_; }

 private:
  enum class Phase : std::uint8_t { kIdle, kChallengeSent, kSuccessSent, kFailureSent, kDone };

  MethodStep on_peer_response(Bytes type_data);
  MethodStep send_failure(MsChapV2Error error);
  MethodStep fail(MsChapV2Error error);
  std::vector<std::uint8_t> packet(MsChapV2OpCode op_code, Bytes body) const;

  std::string inner_identity_;
  InnerCredentialLookup lookup_;
  RandomSource& random_;
  std::string server_name_;
  Phase phase_ = Phase::kIdle;
  std::uint8_t id_ = 0;
  std::array<std::uint8_t, 16> challenge_{};
  std::optional<InnerSessionKey> isk_{};
  std::optional<MsChapV2Error> error_{};
};

}  // namespace rw::eap
