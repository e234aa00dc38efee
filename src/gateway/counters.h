// Counters of one worker's request handling: every dropped datagram is
// counted by its reason (docs/design.md invariant 5), every answer by its kind.
// One writer (the worker) and any number of readers (the admin API, the exit
// summary): the writer uses relaxed load+store, which is race-free with a
// single writer and costs no locked instruction on the packet path. The
// same holds per NAS client: one row of counters per client label and worker,
// made when the client first sends to the worker (docs/admin_api.md "/metrics").
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

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

// What one worker counted for one client label: the answers sent to the
// client's requests, and its datagrams dropped once the client was known
// (every reason but unknown_client).
struct ClientCounters {
  Counter access_accepts;
  Counter access_rejects;
  Counter access_challenges;
  Counter accounting_responses;
  Counter status_server;
  std::array<Counter, kDropReasonCount> drops;

  void drop(DropReason reason) { drops[static_cast<std::size_t>(reason)].add(); }
};

// The values of ClientCounters, read at one moment (by the admin thread).
struct ClientCounts {
  std::uint64_t access_accepts = 0;
  std::uint64_t access_rejects = 0;
  std::uint64_t access_challenges = 0;
  std::uint64_t accounting_responses = 0;
  std::uint64_t status_server = 0;
  std::array<std::uint64_t, kDropReasonCount> drops{};
};

// One worker's counters by client label (GatewayState::client_labels: a
// shortname). A label keeps its row for the life of the table, whatever
// reloads do to the clients file: a count never goes down, a client that
// keeps its label across a reload keeps counting on, and one that comes
// back after a reload that removed it continues from where it stopped.
// Rows follow the clients that send, not the clients configured: the
// worker asks for a client's row on the client's first packet (row_for),
// so that a clients file of 10,000 NAS of which 100 send costs 100 rows
// (docs/benchmarking.md "Gateway memory by client"). The worker keeps the
// pointer, so that later packets count through it: no lookup by name, no
// allocation, no lock.
class ClientCounterTable {
 public:
  // The row of `label`, adding a zeroed row when the table has none: one
  // allocation per label for the life of the table. Called by the worker
  // that writes the rows, on a client's first packet in a state only: it
  // takes the lock. The row lives as long as the table.
  [[nodiscard]] ClientCounters* row_for(std::string_view label);

  // The row of each label in `labels`, in order, adding a zeroed row for
  // each label new to the table. Two equal labels share one row. For
  // tables whose labels are few and all counted (tenants); called at start
  // and at a reload only: it allocates and takes the lock.
  [[nodiscard]] std::vector<ClientCounters*> rows_for(std::span<const std::string> labels);

  // The row of each label in `labels` that the table holds already, in
  // order; null for a label without one (none is added, so a configured
  // client that never sent costs a null pointer). Called by the worker at
  // a reload, so that a client that keeps its label counts on through its
  // row without asking again; takes the lock.
  [[nodiscard]] std::vector<ClientCounters*> rows_held(std::span<const std::string> labels) const;

  // Adds this table's counts to the entry of `totals` with the same label;
  // labels without an entry are skipped. Any thread.
  void add_counts_to(std::map<std::string, ClientCounts, std::less<>>& totals) const;

  // Adds this table's counts, for each label of `labels` (sorted, each
  // once) that the table holds, to the entry of `totals` with that label,
  // adding the entry when there is none: `totals` ends with the labels
  // counted, not every label asked (docs/admin_api.md "/metrics" prints
  // zeros for the others). Any thread.
  void add_counts_for(std::span<const std::string_view> labels,
                      std::map<std::string, ClientCounts, std::less<>>& totals) const;

  // The labels held: every label the worker has counted under since start.
  [[nodiscard]] std::size_t size() const;

 private:
  static void add_row(const ClientCounters& row, ClientCounts& counts);

  mutable std::mutex mutex_;
  // Guarded by mutex_. Rows are never removed, so pointers to them stay valid.
  std::map<std::string, std::unique_ptr<ClientCounters>, std::less<>> rows_;
};

// EAP decisions are counted by method, in these slots: none (ended before
// a method was chosen), EAP-MD5, EAP-TLS, EAP-TTLS, PEAP, and any other.
inline constexpr std::size_t kEapMethodSlots = 6;
// The slot of an EAP method (eap::Type; 0: none).
[[nodiscard]] std::size_t eap_method_slot(std::uint8_t type);
// The slot's label in /metrics: "none", "EAP-MD5", "EAP-TLS", "EAP-TTLS", "PEAP", "other".
[[nodiscard]] std::string_view eap_method_label(std::size_t slot);

struct GatewayCounters {
  Counter received;
  Counter access_accepts;
  Counter access_rejects;
  Counter access_challenges;  // Access-Challenges sent (EAP round trips).
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
  Counter eap_forwarded;               // EAP follow-ups forwarded to the gateway of their State.
  Counter eap_forward_answered;        // Their replies relayed to the NAS.
  Counter eap_forward_stale;           // Replies for a forward no longer waiting.
  std::array<Counter, kDropReasonCount> drops;
  std::array<Counter, kRejectReasonCount> rejects;  // Access-Rejects by reason (also in access_rejects).
  std::array<Counter, kDecodeErrorCount> malformed_by_reason;
  // EAP Access-Accepts and Access-Rejects by method (eap_method_slot); also
  // counted in access_accepts and access_rejects.
  std::array<Counter, kEapMethodSlots> eap_accepts;
  std::array<Counter, kEapMethodSlots> eap_rejects;
  ClientCounterTable clients;  // The same answers and drops, by client label.
  // Access-Accepts, -Rejects and -Challenges by tenant name (the other
  // fields of its rows stay zero): /metrics's tenant label, bounded by
  // config::kTenantsMax per configuration.
  ClientCounterTable tenants;

  void drop(DropReason reason) { drops[static_cast<std::size_t>(reason)].add(); }
  void reject(RejectReason reason) { rejects[static_cast<std::size_t>(reason)].add(); }
};

}  // namespace rw::gateway
