// Why the gateway dropped a datagram or rejected an Access-Request: closed
// enums whose names are the ones the decision log, the counters and the
// admin API's /metrics show (docs/admin_api.md), so an operator greps one
// word across all three. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "auth/auth_error.h"
#include "auth/users_policy.h"

namespace rw::gateway {

// Why a datagram got no answer.
enum class DropReason : std::uint8_t {
  kMalformed,                    // Packet::parse refused it; see malformed_by_reason.
  kUnknownClient,                // The source address matches no client.
  kUnexpectedCode,               // A Code this listener does not serve.
  kMissingMessageAuthenticator,  // Access-Request or Status-Server without one, when required.
  kBadMessageAuthenticator,      // RFC 3579 §3.2 HMAC mismatch: wrong secret or tampering.
  kBadRequestAuthenticator,      // RFC 2866 §3 Accounting-Request authenticator mismatch.
  kDuplicateInProgress,          // A retransmission of a request still being processed.
  kTooManyInProgress,            // The duplicate cache's in-progress table is full.
  kAccountingNotReplicated,      // Valid accounting, but no `accounting:` configured.
  kAccountingInvalid,            // Valid accounting that makes no record (no Acct-Status-Type, ...).
  kAccountingTableFull,          // The worker's share of pending requests for accounting is used up.
  kAccountingRefused,            // The submission queue or forwarder refused the record.
  kReplyTooLarge,                // The reply did not fit 4096 octets.
  kUserStoreUnavailable,         // SQL did not answer within miss_wait (or failed): the NAS retransmits.
  kSessionCheckTableFull,        // Too many Access-Requests waiting for a Simultaneous-Use count.
  kSessionCountUnavailable,      // No session count, and simultaneous_use_unavailable is drop.
  kParkedTableFull,              // Too many Access-Requests waiting for an SQL lookup or a crypt(3) check.
  kCryptQueueFull,               // The crypt(3) pool's queue is full: the NAS retransmits.
  kCryptUnavailable,             // A crypt(3) check did not come back in time.
  kEapWrongIdentifier,           // RFC 3748 §4.1: an EAP-Response that does not answer the last EAP-Request.
  kEapTableFull,         // eap.conversations_max conversations are in progress: no room for a new one.
  kEapConversationBusy,  // Another worker is working on the same EAP conversation right now.
  kEapForwardQueueFull,  // The forwarder's queue to peer gateways is full (eap.forward.in_flight_max).
  kEapForwardTimeout,    // The gateway a follow-up was forwarded to did not answer in time.
  kEapForwardBadReply,   // Its reply does not answer the request (identifier, authenticator, code).
  kEapQueueFull,         // The EAP pool's queue is full: the NAS retransmits.
  kEapUnavailable,       // An EAP step did not come back from the pool in time.
  kCount,
};
std::string_view to_string(DropReason reason);
inline constexpr std::size_t kDropReasonCount = static_cast<std::size_t>(DropReason::kCount);

// Why an Access-Request was rejected. The first group mirrors auth::AuthError
// (a method refused the credentials), the rest are the gateway's own.
enum class RejectReason : std::uint8_t {
  kWrongPassword,
  kEmptyPassword,
  kInvalidUtf8,
  kPasswordTooLong,
  kPasswordHasNul,
  kChapNeedsCleartext,
  kMsChapNeedsNtHash,
  kMalformedChapPassword,
  kMalformedChapChallenge,
  kMalformedMsChapChallenge,
  kMalformedMsChapResponse,
  kLmResponseNotSupported,
  kCryptFailed,
  kNoUserName,             // The request has no User-Name.
  kMalformedUserPassword,  // RFC 2865 §5.2: the User-Password is not a multiple of 16 octets.
  kUnknownUser,            // No store knows the user (and MAB does not default to accept).
  kUnlistedMac,            // MAB for a MAC no named entry lists, with mab_default: reject.
  kUsersPolicyTooLarge,    // evaluate_users ran out of control or reply slots.
  kAuthTypeReject,         // The users policy says Auth-Type := Reject.
  kNoKnownGoodPassword,    // The user's entry has no password item the gateway can use.
  kNoCredentials,          // The request carries no password, CHAP or MS-CHAP response.
  kEapNotEnabled,          // EAP-Message, and EAP is not served.
  kEapMalformed,           // The EAP-Messages do not make an EAP-Response (or an EAP-Start without State).
  kEapNoConversation,      // An EAP-Response other than Identity without a State.
  kEapStateInvalid,        // A State this gateway process did not mint (forged, altered, of an earlier run).
  kEapStateOtherGateway,   // Another gateway's State (forwarding is not built yet).
  kEapStateUnknown,        // The State's conversation ended, expired or was never there.
  kEapStateOtherClient,    // The State's conversation belongs to another NAS client.
  kEapUnexpectedResponse,  // An EAP-Response of a Type the conversation does not take now.
  kEapNoCommonMethod,      // Nothing offered, or the peer's Nak lists nothing offered.
  kEapMd5OverWireless,     // EAP-MD5 would be the method, but NAS-Port-Type is wireless.
  kEapTooManyRounds,       // The conversation reached eap.rounds_max round trips.
  kEapMethodFailed,        // The EAP method refused the peer (malformed, or its own reason).
  kSimultaneousUse,        // The user's Simultaneous-Use limit is reached.
  kSimultaneousUseUnavailable,  // No session count, and simultaneous_use_unavailable is reject.
  kPolicyReject,                // Authenticated, and the authorization policy rejects (docs/policy.md).
  kCount,
};
std::string_view to_string(RejectReason reason);
inline constexpr std::size_t kRejectReasonCount = static_cast<std::size_t>(RejectReason::kCount);

[[nodiscard]] RejectReason reject_reason_of(auth::AuthError error);
[[nodiscard]] RejectReason reject_reason_of(auth::UsersPolicyError error);

// Why an Access-Accept is not the plain one: the decision log says so.
enum class AcceptNote : std::uint8_t {
  kNone,                        // The credentials were checked (or Auth-Type := Accept).
  kMabDefault,                  // An unlisted MAC, and mab_default is accept.
  kSimultaneousUseUnavailable,  // No session count, and simultaneous_use_unavailable is accept.
  kMabAllowList,                // An unlisted MAC on the policy's MAB allow list (docs/policy.md).
};
std::string_view to_string(AcceptNote note);

}  // namespace rw::gateway
