// Seeds of `make test`'s range (radiusward-sim --seeds 1-200) that crash
// inside libraft 0.15.0 itself (docs/RELIABILITY.md "Simulator",
// docs/consensus.md "Known library problems seen in tests"), each triaged
// under gdb. radiusward-sim tolerates them only with libraft's signature:
// the first frame under the signal handler and the C library's abort and
// free frames is in libraft.so, in a seed with disk faults or low snapshot
// thresholds. Any other crash of these seeds still fails. None in 1-200:
// the two crashes seen there while the simulator was written were its own
// (the fixture's close firing callbacks into destroyed links). Seeds past
// 200 come from scripts/sim-campaign, for replay with --seeds N,M.
#pragma once

#include <cstdint>
#include <map>

namespace rw::sim {

// consensus_test's disk-fault double free (docs/consensus.md): the same
// frees, at libraft+0x8c3b called from +0xb8f3 in raft_fixture_step (gdb).
inline constexpr const char* kDoubleFree =
    "double free at libraft+0x8c3b (from +0xb8f3, raft_fixture_step) after raft_fixture_io_fault";

// consensus_test's snapshot heap overflow (docs/consensus.md), as release
// builds die of it: in free called from libraft+0x12189 in raft_fixture_close.
inline constexpr const char* kSnapshotOverflow =
    "free of a corrupted heap from libraft+0x12189 in raft_fixture_close, with low snapshot thresholds";

inline const std::map<std::uint64_t, const char*> kKnownLibraryCrashes = {
    {1179, kDoubleFree},
    {1514, kDoubleFree},
    {1950, kSnapshotOverflow},
};

}  // namespace rw::sim
