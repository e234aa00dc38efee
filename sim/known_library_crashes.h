// Seeds of `make test`'s range (radiusward-sim --seeds 1-200) that meet a
// fault inside libraft 0.15.0 itself (docs/RELIABILITY.md "Simulator",
// docs/consensus.md "Known library problems seen in tests"). radiusward-sim
// tolerates them only with libraft's signature: for a crash, glibc's heap
// abort in a seed with disk faults or low snapshot thresholds; for a stall,
// a follower whose log holds an entry libraft never counts as stored. Any
// other crash or violation of these seeds still fails.
#pragma once

#include <cstdint>
#include <map>

namespace rw::sim {

inline constexpr const char* kDoubleFree =
    "double free in raft_fixture_step after raft_fixture_io_fault, as in consensus_test's "
    "RandomisedFaultsWithDiskFaults (docs/consensus.md)";
inline constexpr const char* kStall =
    "idle follower's last_stored stays one entry behind its log; every acknowledged record is committed, "
    "applied on the other two members and exported exactly once";

inline const std::map<std::uint64_t, const char*> kKnownLibraryCrashes = {
    {22, kDoubleFree},
};
inline const std::map<std::uint64_t, const char*> kKnownLibraryStalls = {
    {11, kStall},
};

}  // namespace rw::sim
