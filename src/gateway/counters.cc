// Names of the drop reasons, as they appear in logs and metrics.
#include "gateway/counters.h"

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
    case DropReason::kCount:
      break;
  }
  return "unknown";
}

}  // namespace rw::gateway
