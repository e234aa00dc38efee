// libFuzzer target for snapshot restore (docs/wire_formats.md "Snapshot").
// Properties: restore of arbitrary bytes never crashes; a restored snapshot
// of the current version gives back the same bytes, an older one the bytes of
// its upgrade. Random bytes rarely pass the SHA-256 trailer,
// so the input is also tried with its trailer recomputed, which lets the
// fuzzer reach the section decoders. Corpus: tests/corpus/snapshot_fuzz/.
#include <openssl/sha.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "accounting/ledger.h"

namespace {

bool same(const std::vector<std::uint8_t>& a, rw::Bytes b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// Byte 4 is the snapshot's version (docs/wire_formats.md "Snapshot"). A
// current-version snapshot comes back byte for byte. An older one is upgraded
// on restore, so what it re-encodes to must itself come back byte for byte.
void check(rw::Bytes bytes) {
  auto restored = rw::accounting::Ledger::restore(bytes);
  if (!restored) return;
  const std::vector<std::uint8_t> again = restored->snapshot();
  if (same(again, bytes)) return;
  if (bytes.size() <= 4 || bytes[4] == again.at(4)) __builtin_trap();
  auto upgraded = rw::accounting::Ledger::restore(rw::Bytes(again.data(), again.size()));
  if (!upgraded || !same(upgraded->snapshot(), rw::Bytes(again.data(), again.size()))) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  check(rw::Bytes(data, size));
  if (size >= SHA256_DIGEST_LENGTH) {
    std::vector<std::uint8_t> resealed(data, data + size);
    SHA256(resealed.data(), size - SHA256_DIGEST_LENGTH, resealed.data() + size - SHA256_DIGEST_LENGTH);
    check(resealed);
  }
  return 0;
}
