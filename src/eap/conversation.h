// One EAP conversation on the authenticator's side (RFC 3748 §2, §4, §5.1,
// §5.3): the Identity exchange, method negotiation in the server's order
// with Legacy-Nak, the Identifier of each Request and the check of each
// Response's, a bound on round trips, and EAP-Success or EAP-Failure at the
// end. The method itself sits behind method.h. The State and where a
// conversation is kept between round trips are conversation_table.h's and the
// gateway's. Pure: no I/O, no clock.
#pragma once

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "auth/auth_error.h"
#include "base/bytes.h"
#include "eap/method.h"
#include "eap/packet.h"

namespace rw::eap {

// The longest identity kept from an EAP-Response/Identity: what a RADIUS
// User-Name can carry (RFC 2865 §5.1).
inline constexpr std::size_t kIdentityBytesMax = 253;

// The names of EAP methods as logs and counters show them: "EAP-MD5",
// "EAP-TLS", "EAP-TTLS", "PEAP", "EAP-MSCHAPv2", else "EAP-<type number>".
[[nodiscard]] std::string to_string(Type type);

// Makes the methods a conversation offers. The gateway implements it.
class MethodFactory {
 public:
  virtual ~MethodFactory() = default;
  // A new method of `type` for the peer that gave `identity`; null when
  // there is none (the conversation then treats `type` as not offered).
  [[nodiscard]] virtual std::unique_ptr<Method> make(Type type, std::string_view identity) = 0;
};

// What the server offers for the request at hand: methods in its order of
// preference, already filtered by configuration and by the request (the
// gateway withholds EAP-MD5 over wireless NAS-Port-Types).
struct Offer {
  std::span<const Type> methods{};
  MethodFactory* factory = nullptr;  // Requires: not null when `methods` is not empty.
};

struct ConversationOptions {
  // EAP-Requests one conversation may send, the Identity request included;
  // the next one fails it (docs/limits.md "EAP"). Requires: >= 1.
  std::size_t rounds_max = 50;
};

// Why a conversation failed.
enum class Failure : std::uint8_t {
  kNone,
  kUnexpectedResponse,  // A Response of a Type this point of the conversation does not take.
  kIdentityTooLong,     // An EAP-Response/Identity of more than kIdentityBytesMax octets.
  kNoCommonMethod,      // Nothing is offered, or the peer's Nak names nothing offered.
  kTooManyRounds,       // rounds_max EAP-Requests were sent already.
  kMethodFailed,        // The method refused the peer (`reason`, `auth_error`).
};
[[nodiscard]] std::string_view to_string(Failure failure);

// What to do after an event of the conversation.
struct Step {
  enum class Kind : std::uint8_t {
    kRequest,     // Send `packet`, an EAP-Request, in an Access-Challenge.
    kCredential,  // Find decided_identity()'s known good password; then call on_credential().
    kSuccess,     // Send `packet`, EAP-Success, in an Access-Accept (with `msk`'s keys).
    kFailure,     // Send `packet`, EAP-Failure, in an Access-Reject; `failure` says why.
    kDiscard,     // RFC 3748 §4.1: a Response whose Identifier does not match; send nothing.
  };
  Kind kind = Kind::kFailure;
  Bytes packet{};  // In the caller's `out`.
  std::optional<Msk> msk{};
  Failure failure = Failure::kNone;
  std::string reason{};                         // kFailure of a method: its words.
  std::optional<auth::AuthError> auth_error{};  // kFailure of a password check.
};

class Conversation {
 public:
  // `owner` names who may continue the conversation (the gateway: the NAS
  // client's name); the conversation only keeps it.
  Conversation(ConversationOptions options, std::string owner);

  // The NAS sent EAP-Start (RFC 3579 §2.1): EAP-Request/Identity with
  // `identifier` (random: RFC 3748 §4.1 leaves the first one to the
  // authenticator). Requires: the first call.
  [[nodiscard]] Step start(std::uint8_t identifier, MutableBytes out);

  // A Response from the peer. The first call of a conversation that did
  // not start() takes the peer's EAP-Response/Identity as the NAS forwards
  // it (whatever its Identifier: the NAS asked). Requires: response.code is
  // kResponse; `out` of at least 4 octets.
  [[nodiscard]] Step on_response(const Packet& response, const Offer& offer, MutableBytes out);

  // The answer to a kCredential step: the known good password of
  // decided_identity(), or null when the users policy has none.
  [[nodiscard]] Step on_credential(const auth::Credential* known_good, MutableBytes out);

  [[nodiscard]] std::string_view owner() const { return owner_; }
  // The peer's EAP-Response/Identity: the outer identity. Empty until it came.
  [[nodiscard]] std::string_view identity() const { return identity_; }
  // The identity that decides (the method's, else identity()).
  [[nodiscard]] std::string_view decided_identity() const;
  // The method proposed or running, if any.
  [[nodiscard]] std::optional<Type> method_type() const;
  // That method itself; null before one was proposed.
  [[nodiscard]] const Method* method() const { return method_.get(); }
  // The Identifier of the last EAP-Request sent.
  [[nodiscard]] std::uint8_t identifier() const { return identifier_; }
  // EAP-Requests sent so far.
  [[nodiscard]] std::size_t rounds() const { return rounds_; }
  // Success or Failure was sent.
  [[nodiscard]] bool finished() const { return phase_ == Phase::kDone; }

 private:
  enum class Phase : std::uint8_t {
    kNew,         // Nothing sent: takes the NAS's EAP-Response/Identity.
    kIdentity,    // EAP-Request/Identity sent.
    kProposed,    // The first Request of `method_` sent: its Type or a Nak comes back.
    kMethod,      // The method runs.
    kCredential,  // The method waits for on_credential().
    kSucceeded,   // The method succeeded; EAP-Success sent (again on a repeat of the last Response).
    kDone,        // EAP-Failure sent.
  };

  Step on_identity(const Packet& response, const Offer& offer, MutableBytes out);
  Step on_nak(const Packet& response, const Offer& offer, MutableBytes out);
  // Proposes the first method of `offer` not tried yet that `acceptable` holds.
  Step propose(const Offer& offer, const std::bitset<256>& acceptable, MutableBytes out);
  // Carries out what the method said.
  Step follow(MethodStep step, MutableBytes out);
  Step request(std::uint8_t type, Bytes type_data, MutableBytes out);
  Step success(std::optional<Msk> msk, MutableBytes out);
  Step failure(Failure why, MutableBytes out);

  ConversationOptions options_;
  std::string owner_;
  std::string identity_;
  Phase phase_ = Phase::kNew;
  std::uint8_t identifier_ = 0;
  std::size_t rounds_ = 0;
  std::unique_ptr<Method> method_;
  std::bitset<256> tried_;  // Types proposed so far.
  std::optional<Msk> msk_;  // kSucceeded: sent again with a repeated Success.
};

}  // namespace rw::eap
