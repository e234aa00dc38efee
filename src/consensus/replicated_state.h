// The port between the consensus node and the replicated state machine (the
// accounting ledger in production, small test machines in tests). libraft
// drives it through FsmAdapter; nothing here knows about libraft.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/bytes.h"

namespace rw::consensus {

// A deterministic state machine fed the committed log in order.
// Threading: every call runs on the node's loop thread (docs/consensus.md trap 1),
// so implementations need no locking against the node, and must stay quick:
// a slow apply delays heartbeats and causes elections.
class ReplicatedState {
 public:
  virtual ~ReplicatedState() = default;

  // Applies the committed entry at log `index`. Indexes strictly increase
  // but have gaps (barrier and configuration entries are not passed here).
  // Must not fail (docs/consensus.md trap 7): entries are validated before they are
  // submitted, and an entry the machine cannot use is a no-op.
  virtual void apply(std::uint64_t index, Bytes entry) = 0;

  // Canonical bytes of the whole state: two machines that applied the same
  // entries return identical bytes. Serialised in memory on the loop thread
  // (docs/consensus.md trap 8), so it must stay small.
  [[nodiscard]] virtual std::vector<std::uint8_t> snapshot() const = 0;
  // The same bytes appended to `out`; FsmAdapter passes one buffer it keeps
  // warm across snapshots (trap 8). Override to write in place.
  virtual void snapshot_into(std::vector<std::uint8_t>& out) const {
    const std::vector<std::uint8_t> bytes = snapshot();
    out.insert(out.end(), bytes.begin(), bytes.end());
  }
  // At least the size snapshot() would have now, or 0 when unknown: lets
  // FsmAdapter grow its buffer before writing (trap 8).
  [[nodiscard]] virtual std::size_t snapshot_size_bound() const { return 0; }

  // Replaces the whole state with a snapshot's. Returns false, leaving the
  // state unchanged, when the bytes are corrupt.
  [[nodiscard]] virtual bool restore(Bytes snapshot) = 0;
};

}  // namespace rw::consensus
