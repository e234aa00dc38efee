// Counters of one worker's request handling: every dropped datagram is
// counted by its reason (docs/design.md invariant 5), every answer by its kind.
// One writer (the worker) and any number of readers (the admin API, the exit
// summary): the writer uses relaxed load+store, which is race-free with a
// single writer and costs no locked instruction on the packet path.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

#include "gateway/reasons.h"
#include "radius/packet.h"

namespace rw::gateway {

inline constexpr std::size_t kDecodeErrorCount =
    static_cast<std::size_t>(radius::DecodeError::kDuplicateMessageAuthenticator) + 1;

class Counter {
 public:
  void add(std::uint64_t n = 1) {
    value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t get() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

struct GatewayCounters {
  Counter received;
  Counter access_accepts;
  Counter access_rejects;
  Counter status_server;
  Counter retransmissions_answered;
  Counter accounting_submitted;        // Records handed to the sink and taken.
  Counter accounting_responses;        // Accounting-Responses sent after commit.
  Counter accounting_expired;          // Deferred requests forgotten after deferred_timeout.
  Counter accounting_stale;            // Answers for a slot already freed or reused.
  Counter session_checks;              // Simultaneous-Use counts asked of the cluster.
  Counter session_checks_unavailable;  // Counts that did not come (policy applied).
  Counter simultaneous_use_rejects;    // Access-Rejects because the limit was reached.
  Counter session_checks_stale;        // Counts for a check already decided or reused.
  Counter user_lookups;                // Access-Requests parked for an SQL lookup.
  Counter crypt_checks;                // crypt(3) checks handed to the pool.
  Counter parked_stale;                // Lookup or crypt answers for a request no longer waiting.
  std::array<Counter, kDropReasonCount> drops;
  std::array<Counter, kRejectReasonCount> rejects;  // Access-Rejects by reason (also in access_rejects).
  std::array<Counter, kDecodeErrorCount> malformed_by_reason;

  void drop(DropReason reason) { drops[static_cast<std::size_t>(reason)].add(); }
  void reject(RejectReason reason) { rejects[static_cast<std::size_t>(reason)].add(); }
};

}  // namespace rw::gateway
