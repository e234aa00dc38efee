// The Accounting-Request handler (RFC 2866): turns a verified request into
// its record (accounting::make_record) for the dispatcher to submit, and
// builds the Accounting-Response once the record is committed (docs/design.md
// invariant 1: the response only after commit). Pure.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "accounting/record.h"
#include "gateway/action.h"
#include "gateway/pending_request.h"

namespace rw::gateway {

class AccountingHandler {
 public:
  // Requires: `recipe` is not null.
  explicit AccountingHandler(std::shared_ptr<const accounting::KeyRecipe> recipe);

  // kSubmit with the encoded record (valid until the next call), or
  // kDrop(accounting_invalid) when the request makes no record.
  [[nodiscard]] Action submit(const RequestContext& request);

  // The Accounting-Response (RFC 2866 §3, §4.2) of a committed request,
  // written into `reply`; 0 when it does not fit.
  [[nodiscard]] static std::size_t respond(const PendingRequest& pending, MutableBytes reply);

 private:
  std::shared_ptr<const accounting::KeyRecipe> recipe_;
  // Reused for each request, at their largest size from the start.
  accounting::Record record_;
  std::vector<std::uint8_t> record_bytes_;
};

// The Status-Server handler (RFC 5997 §3): Access-Accept on the
// authentication listener, Accounting-Response on the accounting one. Pure.
[[nodiscard]] Action answer_status_server(const RequestContext& request, MutableBytes reply);

}  // namespace rw::gateway
