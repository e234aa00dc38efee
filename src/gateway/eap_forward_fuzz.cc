// libFuzzer target for the EAP forwarding message (docs/wire_formats.md "EAP
// forwarding"). Properties: read never crashes, under the fuzz key or with
// the input's last 32 octets replaced by its valid tag (so that the fields
// past the tag are exercised); a message that reads is written back
// byte-identical, IPv4's unused address octets aside; ForwardGate's admit
// never crashes and admits a request id once. Corpus:
// tests/corpus/eap_forward_fuzz/ (a request and a reply for gateway 1 from
// peer 2 under the key below).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <nettle/hmac.h>

#include "gateway/eap_forward.h"

namespace {

using namespace rw;

// 32 octets 0x01..0x20: the corpus is signed with it.
constexpr std::array<std::uint8_t, 32> kKey{1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                                            17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};

void check(const gateway::ForwardCodec& codec, Bytes input) {
  auto message = codec.read(input);
  if (!message) return;
  std::array<std::uint8_t, gateway::kForwardMessageMax> out{};
  const std::size_t length = codec.write(*message, out);
  if (length != input.size()) __builtin_trap();
  // Written back, the IPv4 address's unused octets are zeros: compare the rest.
  for (std::size_t i = 0; i < length; ++i) {
    const bool unused = !message->nas.is_v6 && i >= 36 && i < 48;
    if (!unused && i < length - gateway::kForwardTagLength && out[i] != input[i]) __builtin_trap();
  }
  gateway::Endpoint source{};
  source.address[0] = 127;
  source.address[3] = 1;
  source.port = 1820;
  gateway::ForwardGate gate(1, {gateway::ForwardPeer{.gateway_id = 2, .address = source}},
                            1'000'000'000'000'000);
  auto first = gate.admit(*message, source, message->sent_unix_ms);
  auto again = gate.admit(*message, source, message->sent_unix_ms);
  if (first && again && message->kind == gateway::ForwardKind::kRequest) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const gateway::ForwardCodec codec{Bytes(kKey)};
  const Bytes input(data, size);
  check(codec, input);
  if (size < gateway::kForwardTagLength || size > gateway::kForwardMessageMax) return 0;
  // The same octets with a valid tag: past the HMAC, into the fields.
  std::vector<std::uint8_t> signed_input(data, data + size);
  hmac_sha256_ctx context;
  hmac_sha256_set_key(&context, kKey.size(), kKey.data());
  hmac_sha256_update(&context, size - gateway::kForwardTagLength, data);
  hmac_sha256_digest(&context, gateway::kForwardTagLength,
                     signed_input.data() + size - gateway::kForwardTagLength);
  check(codec, signed_input);
  return 0;
}
