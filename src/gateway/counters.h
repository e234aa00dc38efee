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

#include "radius/packet.h"

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
  kAccountingTableFull,          // The worker's deferred-request table is full.
  kAccountingRefused,            // The submission queue or forwarder refused the record.
  kReplyTooLarge,                // The reply did not fit 4096 octets.
  kUserStoreUnavailable,         // SQL did not answer within miss_wait: the NAS retransmits.
  kSessionCheckTableFull,        // Too many Access-Requests waiting for a Simultaneous-Use count.
  kSessionCountUnavailable,      // No session count, and simultaneous_use_unavailable is drop.
  kCount,
};
std::string_view to_string(DropReason reason);

inline constexpr std::size_t kDropReasonCount = static_cast<std::size_t>(DropReason::kCount);
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
  std::array<Counter, kDropReasonCount> drops;
  std::array<Counter, kDecodeErrorCount> malformed_by_reason;

  void drop(DropReason reason) { drops[static_cast<std::size_t>(reason)].add(); }
};

}  // namespace rw::gateway
