// libFuzzer target for the gateway-to-member frames. Properties: decoding
// never crashes; a decoded frame re-encodes to exactly the input bytes; a
// FrameReader fed the input in chunks (sizes taken from the input itself)
// never crashes, and every whole frame it yields round-trips like the input.
// Corpus: tests/corpus/frames_fuzz/.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "submission/frames.h"

namespace {

using namespace rw;
using namespace rw::submission;

void check_round_trip(Bytes input) {
  auto decoded = decode_frame(input);
  if (!decoded) return;
  std::vector<std::uint8_t> encoded;
  encode_frame(*decoded, encoded);
  if (encoded.size() != input.size() || std::memcmp(encoded.data(), input.data(), input.size()) != 0) {
    __builtin_trap();
  }
}

void check_reader(Bytes input) {
  // A fresh reader per input (one 1 MiB buffer) keeps inputs independent.
  FrameReader local;
  FrameReader* reader = &local;
  std::size_t offset = 0;
  std::size_t step = input.empty() ? 1 : (input[0] % 17) + 1;
  while (offset < input.size()) {
    std::size_t chunk = std::min(step, input.size() - offset);
    std::size_t taken = reader->feed(input.subspan(offset, chunk));
    offset += taken;
    for (;;) {
      auto frame = reader->next();
      if (!frame) return;
      if (!*frame) break;
      if ((*frame)->size() < kLengthPrefixBytes) __builtin_trap();
      check_round_trip(**frame);
    }
    if (taken == 0) return;  // The buffer is full of an incomplete frame; cannot happen within bounds.
    step = (step * 7 + 3) % 29 + 1;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes input(data, size);
  check_round_trip(input);
  check_reader(input);
  return 0;
}
