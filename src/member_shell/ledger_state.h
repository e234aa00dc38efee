// The member's replicated state: the accounting Ledger behind the consensus
// port (consensus::ReplicatedState), plus what the submission and admin
// threads read of it, published thread-safely. The Ledger itself stays pure;
// this is the one place that shares it between threads.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

#include "accounting/ledger.h"
#include "consensus/replicated_state.h"

namespace rw::member_shell {

// Figures of the ledger at one applied index, copied under the lock.
struct LedgerFigures {
  std::uint64_t applied_index = 0;
  std::uint64_t exported_through = 0;
  std::size_t records_held = 0;
  std::size_t held_bytes = 0;
  std::size_t sessions = 0;
  std::size_t window_keys = 0;
  // Buckets of the key index of held and window keys, sized once for the
  // bounds (Ledger::reserve_key_index).
  std::size_t key_index_buckets = 0;
  bool accepting = true;
  // The log clock (docs/accounting.md): the ledger's only time, moved by
  // leaders' stamps. Shown so an operator can see a leader's clock jump.
  std::int64_t log_clock_unix_ms = 0;
  accounting::LedgerCounters counters{};
};

// Threading: apply/snapshot/restore run on the node's loop thread only (the
// port's contract); everything else may run on any thread. Readers take the
// mutex for a bounded copy (at most `max` items per call), so a long listing
// never holds it for long and apply() stays quick (docs/consensus.md trap 1).
class LedgerState final : public consensus::ReplicatedState {
 public:
  explicit LedgerState(accounting::LedgerLimits limits = {});

  // --- consensus::ReplicatedState (loop thread) ---
  void apply(std::uint64_t index, Bytes entry) override;
  [[nodiscard]] std::vector<std::uint8_t> snapshot() const override;
  void snapshot_into(std::vector<std::uint8_t>& out) const override;
  [[nodiscard]] std::size_t snapshot_size_bound() const override;
  [[nodiscard]] bool restore(Bytes snapshot) override;

  // --- Any thread ---
  // Whether the ledger has room for more held records (Ledger::accepting),
  // as of the latest apply or restore. Lock-free: read once per Submit.
  [[nodiscard]] bool accepting() const { return accepting_.load(std::memory_order_acquire); }
  [[nodiscard]] LedgerFigures figures() const;
  // About `max` held records with a log index above `after_index`, in log
  // order: whole entries, so it may return up to kEntryRecordsMax - 1 more.
  // Page through all of them by passing the last index returned.
  [[nodiscard]] std::vector<accounting::HeldRecord> records_after(std::uint64_t after_index,
                                                                  std::size_t max) const;
  // Up to `max` open sessions whose key is above `after` (or from the first
  // with no `after`), ordered by key.
  [[nodiscard]] std::vector<accounting::Session> sessions_after(const accounting::SessionKey* after,
                                                                std::size_t max) const;
  // Open sessions of `user_name` as of the latest apply or restore
  // (Ledger::open_sessions_of): one indexed look-up under the lock.
  [[nodiscard]] std::uint32_t open_sessions_of(std::string_view user_name) const;
  // Whether `key` is in the de-duplication window (held or recently
  // exported): the simulator's check that an applied index left its
  // records in the ledger (sim/, docs/RELIABILITY.md "Simulator").
  [[nodiscard]] bool knows(const accounting::RecordKey& key) const;

 private:
  void publish_locked();

  accounting::LedgerLimits limits_;
  mutable std::mutex mutex_;  // Guards ledger_ against readers; only the loop thread writes.
  accounting::Ledger ledger_;
  std::atomic<bool> accepting_{true};
};

}  // namespace rw::member_shell
