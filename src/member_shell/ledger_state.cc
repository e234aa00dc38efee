// LedgerState (ledger_state.h): the Ledger under a mutex that readers hold
// only for bounded copies.
#include "member_shell/ledger_state.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "io/csprng.h"

namespace rw::member_shell {

namespace {

// The seed of the ledger's session indexes (Ledger::seed_indexes):
// one per process, from the CSPRNG, so that NAS data cannot aim at a bucket.
std::uint64_t session_index_seed() {
  static const std::uint64_t seed = [] {
    std::array<std::uint8_t, 8> bytes{};
    io::thread_csprng().fill(bytes);
    std::uint64_t out = 0;
    std::memcpy(&out, bytes.data(), bytes.size());
    return out;
  }();
  return seed;
}

}  // namespace

LedgerState::LedgerState(accounting::LedgerLimits limits)
    : limits_(limits), ledger_(limits, session_index_seed()) {
  ledger_.reserve_key_index();
  publish_locked();
}

void LedgerState::apply(std::uint64_t index, Bytes entry) {
  std::lock_guard lock(mutex_);
  (void)ledger_.apply(index, entry);
  publish_locked();
}

std::vector<std::uint8_t> LedgerState::snapshot() const {
  // Only the loop thread writes ledger_, and this is the loop thread: no lock.
  return ledger_.snapshot();
}

void LedgerState::snapshot_into(std::vector<std::uint8_t>& out) const { ledger_.snapshot_into(out); }

std::size_t LedgerState::snapshot_size_bound() const { return ledger_.snapshot_size_bound(); }

bool LedgerState::restore(Bytes snapshot) {
  auto restored = accounting::Ledger::restore(snapshot, limits_, session_index_seed());
  if (!restored) return false;
  restored->reserve_key_index();
  std::lock_guard lock(mutex_);
  ledger_ = std::move(*restored);
  publish_locked();
  return true;
}

void LedgerState::publish_locked() { accepting_.store(ledger_.accepting(), std::memory_order_release); }

LedgerFigures LedgerState::figures() const {
  std::lock_guard lock(mutex_);
  return LedgerFigures{.applied_index = ledger_.last_applied_index(),
                       .exported_through = ledger_.exported_through(),
                       .records_held = ledger_.records().size(),
                       .held_bytes = ledger_.held_bytes(),
                       .sessions = ledger_.sessions().size(),
                       .window_keys = ledger_.window_keys(),
                       .key_index_buckets = ledger_.key_index_buckets(),
                       .accepting = ledger_.accepting(),
                       .log_clock_unix_ms = ledger_.clock_unix_ms(),
                       .counters = ledger_.counters()};
}

std::vector<accounting::HeldRecord> LedgerState::records_after(std::uint64_t after_index,
                                                               std::size_t max) const {
  std::vector<accounting::HeldRecord> out;
  std::lock_guard lock(mutex_);
  const std::deque<accounting::HeldRecord>& held = ledger_.records();
  // Held records are in ascending log order (the snapshot checks it).
  auto first = std::upper_bound(
      held.begin(), held.end(), after_index,
      [](std::uint64_t index, const accounting::HeldRecord& record) { return index < record.index; });
  // Never stop inside an entry (its records share one index), so that the
  // caller can go on after the last index returned; one entry is bounded by
  // kEntryRecordsMax.
  for (auto it = first; it != held.end(); ++it) {
    if (out.size() >= max && it->index != out.back().index) break;
    out.push_back(*it);
  }
  return out;
}

std::vector<accounting::Session> LedgerState::sessions_after(const accounting::SessionKey* after,
                                                             std::size_t max) const {
  std::vector<accounting::Session> out;
  std::lock_guard lock(mutex_);
  const auto& sessions = ledger_.sessions();
  auto it = after != nullptr ? sessions.upper_bound(*after) : sessions.begin();
  for (; it != sessions.end() && out.size() < max; ++it) out.push_back(it->second);
  return out;
}

std::uint32_t LedgerState::open_sessions_of(std::string_view user_name) const {
  std::lock_guard lock(mutex_);
  return ledger_.open_sessions_of(user_name);
}

bool LedgerState::knows(const accounting::RecordKey& key) const {
  std::lock_guard lock(mutex_);
  return ledger_.knows(key);
}

}  // namespace rw::member_shell
