// libFuzzer target for the log entry decoder (docs/wire_formats.md "Log
// entry"). Properties: decode never crashes; an accepted entry encodes back
// to the same bytes; applying any bytes to a ledger never fails and leaves
// a snapshot that restores to the same bytes. Corpus: tests/corpus/entry_fuzz/.
#include <cstddef>
#include <cstdint>

#include "accounting/entry.h"
#include "accounting/ledger.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rw::accounting;
  const rw::Bytes bytes(data, size);
  auto entry = decode_entry(bytes);
  if (entry) {
    const std::vector<std::uint8_t> encoded = encode_entry(*entry);
    if (encoded.size() != size || !std::equal(encoded.begin(), encoded.end(), data)) __builtin_trap();
    (void)validate_entry(bytes);
  }
  // docs/consensus.md trap 7: apply takes whatever was committed.
  Ledger ledger;
  (void)ledger.apply(1, bytes);
  (void)ledger.apply(2, bytes);
  const std::vector<std::uint8_t> snapshot = ledger.snapshot();
  auto restored = Ledger::restore(snapshot);
  if (!restored || restored->snapshot() != snapshot) __builtin_trap();
  return 0;
}
