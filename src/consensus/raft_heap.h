// libraft's allocator for the whole process: the C library's, except that
// an allocation that fails ends the process instead of returning NULL
// (docs/consensus.md "Known library problems seen in tests": libraft
// 0.15.0's recvAppendEntries frees a received batch and then, when the reply
// cannot be allocated or sent, returns an error on which recvCb frees the
// same batch again).
#pragma once

namespace rw::consensus {

// Installs the allocator with raft_heap_set. Idempotent and thread-safe;
// Node::start calls it before any libraft call of the process. Memory
// allocated before it was installed may be freed after: both use malloc.
void install_raft_heap();

}  // namespace rw::consensus
