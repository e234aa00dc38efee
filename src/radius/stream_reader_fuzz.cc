// libFuzzer target for StreamReader, the Length framing of RADIUS on a byte
// stream (RFC 6613). The first input byte picks a chunk size, the rest
// is the stream. Properties: never crashes; every packet returned has a
// Length of 20..4096 equal to its size; the same stream fed whole and in
// chunks gives the same packets and the same verdict. Corpus:
// tests/corpus/stream_reader_fuzz/.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "radius/stream_reader.h"

namespace {

using namespace rw;
using namespace rw::radius;

struct Outcome {
  std::vector<std::vector<std::uint8_t>> packets;
  bool failed = false;
};

Outcome read_in_chunks(Bytes stream, std::size_t chunk) {
  Outcome outcome;
  StreamReader reader;
  for (std::size_t offset = 0; offset < stream.size() && !outcome.failed; offset += chunk) {
    Bytes input = stream.subspan(offset, std::min(chunk, stream.size() - offset));
    for (;;) {
      auto next = reader.next(input);
      if (!next) {
        outcome.failed = true;
        break;
      }
      if (!*next) break;
      const Bytes packet = **next;
      const std::size_t length = static_cast<std::size_t>(packet[2]) << 8 | packet[3];
      if (length != packet.size() || length < kHeaderLength || length > kMaxPacketLength) __builtin_trap();
      outcome.packets.emplace_back(packet.begin(), packet.end());
    }
    if (!outcome.failed && !input.empty()) __builtin_trap();
  }
  return outcome;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk = data[0] == 0 ? 1 : data[0];
  const Bytes stream(data + 1, size - 1);
  const Outcome whole = read_in_chunks(stream, stream.size() == 0 ? 1 : stream.size());
  const Outcome pieces = read_in_chunks(stream, chunk);
  if (whole.failed != pieces.failed || whole.packets != pieces.packets) __builtin_trap();
  return 0;
}
