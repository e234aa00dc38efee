// Names of submission outcomes, for logs and the admin API.
#include "consensus/outcome.h"

namespace rw::consensus {

std::string_view to_string(OutcomeKind kind) {
  switch (kind) {
    case OutcomeKind::kCommitted:
      return "committed";
    case OutcomeKind::kNotLeader:
      return "not_leader";
    case OutcomeKind::kRetryLater:
      return "retry_later";
    case OutcomeKind::kUnknown:
      return "unknown";
  }
  return "unknown";
}

}  // namespace rw::consensus
