// EAP over RADIUS (RFC 3579 §3.1): the EAP packet of an Access-Request is the
// concatenation, in order, of all its EAP-Message attributes, each carrying
// at most 253 octets; a reply splits its EAP packet the same way. Pure;
// nothing allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/bytes.h"
#include "base/result.h"
#include "radius/packet.h"

namespace rw::eap {

// The most octets of an EAP packet one EAP-Message attribute carries.
inline constexpr std::size_t kEapMessageChunk = radius::kMaxAttributeValueLength;

// The bound the gateway reassembles into: no EAP packet that one RADIUS
// packet (at most 4096 octets, RFC 2865 §3) carries is longer.
inline constexpr std::size_t kEapPacketBytesMax = radius::kMaxPacketLength;

enum class ReassemblyError : std::uint8_t {
  kNoEapMessage,  // The packet holds no EAP-Message.
  kTooLong,       // The EAP-Messages together pass the caller's bound.
  kCount,
};
[[nodiscard]] std::string_view to_string(ReassemblyError error);

// Concatenates every EAP-Message of `request`, in order, into `out` and
// returns the octets written; out.size() is the bound. An EAP-Message with
// no value (the NAS's EAP-Start, RFC 3579 §2.1) adds nothing: a request
// holding only that reassembles to an empty packet. Attributes between the
// EAP-Messages are not refused (RFC 3579 §3.1 asks senders to keep them
// consecutive; receivers lose nothing by being lenient).
[[nodiscard]] Result<Bytes, ReassemblyError> reassemble(const radius::Packet& request, MutableBytes out);

// How many EAP-Message attributes an EAP packet of `length` octets takes.
[[nodiscard]] constexpr std::size_t eap_message_count(std::size_t length) {
  return length == 0 ? 1 : (length + kEapMessageChunk - 1) / kEapMessageChunk;
}

// Adds `eap_packet` to `builder` as consecutive EAP-Message attributes of at
// most 253 octets each (an empty packet as one empty EAP-Message). A packet
// the builder cannot hold leaves its error for finish() to report.
void add_eap_message(radius::PacketBuilder& builder, Bytes eap_packet);

}  // namespace rw::eap
