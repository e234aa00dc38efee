// libFuzzer target of the audit verifier (docs/style.md §7): arbitrary bytes
// as one to three files, with and without a key, never crash it; and
// records of arbitrary bytes (hostile NAS data) written by the chain always
// verify intact, whatever their bytes (the round trip).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "audit/chain.h"
#include "audit/verify.h"
#include "base/assert.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rw::audit;
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::uint8_t mode = data[0];
  if (mode % 4 == 3) {
    // Round trip: the input's bytes become identity, client and rule.
    const std::size_t third = input.size() / 3;
    Chain chain(mode & 0x10 ? ChainKey::keyed("fuzz-key") : ChainKey(), Head{});
    std::string file = chain.header(static_cast<std::int64_t>(size) * 1'000'003, HeaderReason::kNew);
    file += chain.decision(DecisionRecord{.unix_ms = -static_cast<std::int64_t>(size),
                                          .client = input.substr(0, third),
                                          .address = "::1",
                                          .identity = input.substr(third, third),
                                          .method = "PAP",
                                          .accepted = (mode & 0x20) != 0,
                                          .rule = input.substr(2 * third),
                                          .reason = "ok"});
    file += chain.gap(0, size);
    Verifier verifier(mode & 0x10 ? std::optional(ChainKey::keyed("fuzz-key")) : std::nullopt);
    verifier.on_file("fuzz", file);
    const Verification result = verifier.finish();
    RW_ASSERT(result.intact() && result.head == chain.head());
    return 0;
  }
  Verifier verifier(mode % 4 == 1 ? std::optional(ChainKey::keyed("fuzz-key")) : std::nullopt);
  std::size_t start = 0;
  // Files are separated by a NUL byte, at most three.
  for (int file = 0; file < 3 && start <= input.size(); ++file) {
    std::size_t end = file == 2 ? std::string_view::npos : input.find('\0', start);
    if (end == std::string_view::npos) end = input.size();
    verifier.on_file("fuzz", input.substr(start, end - start));
    start = end + 1;
  }
  (void)verifier.finish();
  (void)inspect_tail(input, mode % 2 == 0, ChainKey());
  return 0;
}
