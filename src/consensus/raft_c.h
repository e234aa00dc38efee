// The one place that includes libraft's C headers, which lack extern "C"
// guards (docs/consensus.md trap 2). Only src/consensus includes this file.
#pragma once

extern "C" {
#include <raft.h>
#include <raft/uv.h>
}
