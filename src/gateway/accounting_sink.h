// Where a worker's validated Accounting-Requests go: the port between the
// pure request handling and the shell's submission client (io/), which
// replicates each record and later tells the worker, through
// DatagramHandler::on_answer or on_refused, what became of it (docs/design.md
// invariant 1: the Accounting-Response only after commit).
#pragma once

#include <string_view>

#include "accounting/record.h"
#include "base/bytes.h"
#include "gateway/datagram.h"

namespace rw::gateway {

class AccountingSink {
 public:
  virtual ~AccountingSink() = default;

  // Takes a copy of one encoded record (accounting::encode_record) with its
  // key, to be answered later through `ticket`'s worker. Returns false when
  // it cannot take it now (a bound is reached): then no answer follows, and
  // the caller forgets the request (the NAS retries). When it returns true,
  // exactly one on_answer or on_refused for `ticket` follows unless the
  // process stops. Called by every worker thread: thread-safe.
  [[nodiscard]] virtual bool submit(const accounting::RecordKey& key, Bytes record, Ticket ticket) = 0;

  // Asks the cluster how many sessions of `user_name` are open
  // (Simultaneous-Use). Returns false when it cannot ask now (a bound is
  // reached, or this sink cannot count): the caller decides without the
  // count. When it returns true, at most one DatagramHandler::
  // on_session_count for `ticket` follows, possibly none (the caller's own
  // timeout covers that). Thread-safe. Requires: 1..253 bytes.
  [[nodiscard]] virtual bool count_sessions(std::string_view /*user_name*/, Ticket /*ticket*/) {
    return false;
  }
};

}  // namespace rw::gateway
