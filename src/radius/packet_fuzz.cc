// libFuzzer target for the packet codec. Properties: parse never crashes;
// an accepted packet rebuilt from its parsed attributes with PacketBuilder
// is byte-identical to wire(); every keyed check and attribute decryption
// runs on it without crashing. Corpus: tests/corpus/packet_fuzz/ (seeded
// with the RFC 2865 §7 vectors).
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "radius/attribute_crypto.h"
#include "radius/authenticator.h"
#include "radius/packet.h"

namespace {

using namespace rw;
using namespace rw::radius;

const SharedSecret& fuzz_secret() {
  static const SharedSecret secret = *SharedSecret::create(as_bytes("xyzzy5461"));
  return secret;
}

// The round-trip property: the builder writes back exactly what was parsed.
void check_rebuild(const Packet& packet) {
  std::array<std::uint8_t, kMaxPacketLength> buffer;
  PacketBuilder builder(buffer);
  builder.begin(packet.code(), packet.identifier(), packet.authenticator());
  for (Attribute attribute : packet.attributes()) builder.add(attribute.type, attribute.value);
  auto rebuilt = builder.finish();
  if (!rebuilt || rebuilt->size() != packet.length() ||
      std::memcmp(rebuilt->data(), packet.wire().data(), packet.length()) != 0) {
    __builtin_trap();
  }
  if (builder.message_authenticator_offset() != packet.message_authenticator_offset()) __builtin_trap();
  auto reparsed = Packet::parse(*rebuilt);
  if (!reparsed || reparsed->length() != packet.length()) __builtin_trap();
}

// Runs every secret-dependent check and decryption; only crashes matter.
void exercise_crypto(const Packet& packet) {
  const SharedSecret& secret = fuzz_secret();
  std::array<std::uint8_t, kMaxHiddenValueLength> out;
  (void)check_request_message_authenticator(packet, secret);
  (void)check_response_message_authenticator(packet, packet.authenticator(), secret);
  (void)verify_request_authenticator(packet, secret);
  (void)verify_response_authenticator(packet, packet.authenticator(), secret);
  for (Attribute attribute : packet.attributes()) {
    if (attribute.type == attr::kUserPassword) {
      auto password = unhide_user_password(attribute.value, packet.authenticator(), secret, out);
      if (password && password->size() > attribute.value.size()) __builtin_trap();
    } else if (attribute.type == attr::kTunnelPassword) {
      (void)unhide_tunnel_password(attribute.value, packet.authenticator(), secret, out);
    }
  }
  for (std::uint8_t vendor_type : {ms::kMppeSendKey, ms::kMppeRecvKey}) {
    if (auto key = packet.find_vendor(kVendorMicrosoft, vendor_type)) {
      (void)decrypt_mppe_key(*key, packet.authenticator(), secret, out);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto packet = Packet::parse(Bytes(data, size));
  if (!packet) {
    if (to_string(packet.error()).empty()) __builtin_trap();
    return 0;
  }
  check_rebuild(*packet);
  exercise_crypto(*packet);
  return 0;
}
