// libFuzzer target for EAP-TLS reassembly (tls_fragments.h). The input is a
// sequence of responses, each a two-octet big-endian length and that many
// octets of Type-Data, fed to one TlsReassembler with small bounds (4,096
// octets, 16 fragments) so that the fuzzer reaches them. Properties: no
// crash; a refusal has a name; a whole message is within the bound and
// agrees with the L it announced; split again by TlsFragmenter and
// reassembled, it comes back identical. Corpus: tests/corpus/tls_fragments_fuzz/.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "eap/tls_fragments.h"

namespace {

using namespace rw;
using namespace rw::eap;

constexpr TlsReassemblyLimits kLimits{.message_octets_max = 4096, .fragments_max = 16};

void check_round_trip(const std::vector<std::uint8_t>& message, std::size_t fragment_octets) {
  TlsFragmenter fragmenter(fragment_octets);
  fragmenter.load(message);
  TlsReassembler again(TlsReassemblyLimits{.message_octets_max = 4096, .fragments_max = 4096});
  std::optional<std::vector<std::uint8_t>> whole;
  while (fragmenter.pending()) {
    auto step = again.on_fragment(fragmenter.next());
    if (!step) __builtin_trap();
    if (*step) whole = std::move(**step);
  }
  if (!message.empty() && whole != message) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ByteReader reader(Bytes(data, size));
  TlsReassembler reassembler(kLimits);
  std::uint16_t length = 0;
  while (reader.read_u16(length)) {
    const Bytes type_data = reader.read_bytes(std::min<std::size_t>(length, reader.remaining()));
    auto frame = parse_tls_frame(type_data);
    auto step = reassembler.on_fragment(type_data);
    if (!step) {
      if (to_string(step.error()).empty()) __builtin_trap();
      continue;
    }
    if (!*step) continue;
    const std::vector<std::uint8_t>& message = **step;
    if (message.size() > kLimits.message_octets_max) __builtin_trap();
    // The last fragment's L, when present, announced the whole message.
    if (frame && frame->message_length && *frame->message_length != message.size()) __builtin_trap();
    check_round_trip(message, kTlsFragmentOctetsMin + length % 200);
  }
  return 0;
}
