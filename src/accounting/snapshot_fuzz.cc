// libFuzzer target for snapshot restore (docs/wire_formats.md "Snapshot").
// Properties: restore of arbitrary bytes never crashes; a restored snapshot
// gives back the same bytes. Random bytes rarely pass the SHA-256 trailer,
// so the input is also tried with its trailer recomputed, which lets the
// fuzzer reach the section decoders. Corpus: tests/corpus/snapshot_fuzz/.
#include <openssl/sha.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "accounting/ledger.h"

namespace {

void check(rw::Bytes bytes) {
  auto restored = rw::accounting::Ledger::restore(bytes);
  if (!restored) return;
  const std::vector<std::uint8_t> again = restored->snapshot();
  if (again.size() != bytes.size() || !std::equal(again.begin(), again.end(), bytes.begin()))
    __builtin_trap();
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
