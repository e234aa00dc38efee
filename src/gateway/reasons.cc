// Names of the drop and reject reasons, as logs and metrics show them.
#include "gateway/reasons.h"

namespace rw::gateway {

std::string_view to_string(DropReason reason) {
  switch (reason) {
    case DropReason::kMalformed:
      return "malformed";
    case DropReason::kUnknownClient:
      return "unknown_client";
    case DropReason::kUnexpectedCode:
      return "unexpected_code";
    case DropReason::kMissingMessageAuthenticator:
      return "missing_message_authenticator";
    case DropReason::kBadMessageAuthenticator:
      return "bad_message_authenticator";
    case DropReason::kBadRequestAuthenticator:
      return "bad_request_authenticator";
    case DropReason::kDuplicateInProgress:
      return "duplicate_in_progress";
    case DropReason::kTooManyInProgress:
      return "too_many_in_progress";
    case DropReason::kAccountingNotReplicated:
      return "accounting_not_replicated";
    case DropReason::kAccountingInvalid:
      return "accounting_invalid";
    case DropReason::kAccountingTableFull:
      return "accounting_table_full";
    case DropReason::kAccountingRefused:
      return "accounting_refused";
    case DropReason::kReplyTooLarge:
      return "reply_too_large";
    case DropReason::kUserStoreUnavailable:
      return "user_store_unavailable";
    case DropReason::kSessionCheckTableFull:
      return "session_check_table_full";
    case DropReason::kSessionCountUnavailable:
      return "session_count_unavailable";
    case DropReason::kParkedTableFull:
      return "parked_table_full";
    case DropReason::kCryptQueueFull:
      return "crypt_queue_full";
    case DropReason::kCryptUnavailable:
      return "crypt_unavailable";
    case DropReason::kEapWrongIdentifier:
      return "eap_wrong_identifier";
    case DropReason::kEapTableFull:
      return "eap_table_full";
    case DropReason::kEapConversationBusy:
      return "eap_conversation_busy";
    case DropReason::kEapForwardQueueFull:
      return "eap_forward_queue_full";
    case DropReason::kEapForwardTimeout:
      return "eap_forward_timeout";
    case DropReason::kEapForwardBadReply:
      return "eap_forward_bad_reply";
    case DropReason::kEapQueueFull:
      return "eap_queue_full";
    case DropReason::kEapUnavailable:
      return "eap_unavailable";
    case DropReason::kCount:
      break;
  }
  return "unknown";
}

std::string_view to_string(RejectReason reason) {
  switch (reason) {
    case RejectReason::kWrongPassword:
      return "wrong_password";
    case RejectReason::kEmptyPassword:
      return "empty_password";
    case RejectReason::kInvalidUtf8:
      return "invalid_utf8";
    case RejectReason::kPasswordTooLong:
      return "password_too_long";
    case RejectReason::kPasswordHasNul:
      return "password_has_nul";
    case RejectReason::kChapNeedsCleartext:
      return "chap_needs_cleartext";
    case RejectReason::kMsChapNeedsNtHash:
      return "ms_chap_needs_nt_hash";
    case RejectReason::kMalformedChapPassword:
      return "malformed_chap_password";
    case RejectReason::kMalformedChapChallenge:
      return "malformed_chap_challenge";
    case RejectReason::kMalformedMsChapChallenge:
      return "malformed_ms_chap_challenge";
    case RejectReason::kMalformedMsChapResponse:
      return "malformed_ms_chap_response";
    case RejectReason::kLmResponseNotSupported:
      return "lm_response_not_supported";
    case RejectReason::kCryptFailed:
      return "crypt_failed";
    case RejectReason::kNoUserName:
      return "no_user_name";
    case RejectReason::kMalformedUserPassword:
      return "malformed_user_password";
    case RejectReason::kUnknownUser:
      return "unknown_user";
    case RejectReason::kUnlistedMac:
      return "unlisted_mac";
    case RejectReason::kUsersPolicyTooLarge:
      return "users_policy_too_large";
    case RejectReason::kAuthTypeReject:
      return "auth_type_reject";
    case RejectReason::kNoKnownGoodPassword:
      return "no_known_good_password";
    case RejectReason::kNoCredentials:
      return "no_credentials";
    case RejectReason::kEapNotEnabled:
      return "eap_not_enabled";
    case RejectReason::kEapMalformed:
      return "eap_malformed";
    case RejectReason::kEapNoConversation:
      return "eap_no_conversation";
    case RejectReason::kEapStateInvalid:
      return "eap_state_invalid";
    case RejectReason::kEapStateOtherGateway:
      return "eap_state_other_gateway";
    case RejectReason::kEapStateUnknown:
      return "eap_state_unknown";
    case RejectReason::kEapStateOtherClient:
      return "eap_state_other_client";
    case RejectReason::kEapUnexpectedResponse:
      return "eap_unexpected_response";
    case RejectReason::kEapNoCommonMethod:
      return "eap_no_common_method";
    case RejectReason::kEapMd5OverWireless:
      return "eap_md5_over_wireless";
    case RejectReason::kEapTooManyRounds:
      return "eap_too_many_rounds";
    case RejectReason::kEapMethodFailed:
      return "eap_method_failed";
    case RejectReason::kSimultaneousUse:
      return "simultaneous_use";
    case RejectReason::kSimultaneousUseUnavailable:
      return "simultaneous_use_unavailable";
    case RejectReason::kPolicyReject:
      return "policy_reject";
    case RejectReason::kCount:
      break;
  }
  return "unknown";
}

RejectReason reject_reason_of(auth::AuthError error) {
  switch (error) {
    case auth::AuthError::kWrongPassword:
      return RejectReason::kWrongPassword;
    case auth::AuthError::kEmptyPassword:
      return RejectReason::kEmptyPassword;
    case auth::AuthError::kInvalidUtf8:
      return RejectReason::kInvalidUtf8;
    case auth::AuthError::kPasswordTooLong:
      return RejectReason::kPasswordTooLong;
    case auth::AuthError::kPasswordHasNul:
      return RejectReason::kPasswordHasNul;
    case auth::AuthError::kChapNeedsCleartext:
      return RejectReason::kChapNeedsCleartext;
    case auth::AuthError::kMsChapNeedsNtHash:
      return RejectReason::kMsChapNeedsNtHash;
    case auth::AuthError::kMalformedChapPassword:
      return RejectReason::kMalformedChapPassword;
    case auth::AuthError::kMalformedChapChallenge:
      return RejectReason::kMalformedChapChallenge;
    case auth::AuthError::kMalformedMsChapChallenge:
      return RejectReason::kMalformedMsChapChallenge;
    case auth::AuthError::kMalformedMsChapResponse:
      return RejectReason::kMalformedMsChapResponse;
    case auth::AuthError::kLmResponseNotSupported:
      return RejectReason::kLmResponseNotSupported;
    case auth::AuthError::kCryptFailed:
      return RejectReason::kCryptFailed;
  }
  return RejectReason::kWrongPassword;
}

RejectReason reject_reason_of(auth::UsersPolicyError /*error*/) { return RejectReason::kUsersPolicyTooLarge; }

std::string_view to_string(AcceptNote note) {
  switch (note) {
    case AcceptNote::kNone:
      return "ok";
    case AcceptNote::kMabDefault:
      return "mab_default_accept";
    case AcceptNote::kSimultaneousUseUnavailable:
      return "simultaneous_use_unavailable";
    case AcceptNote::kMabAllowList:
      return "mab_allow_list";
  }
  return "unknown";
}

}  // namespace rw::gateway
