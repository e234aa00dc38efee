// Pieces every reply kind shares: Proxy-State copied in order (RFC 2865
// §5.33, RFC 2866 §4.2), kept as wire TLVs for a reply built later, and the
// signed finish of a reply (RFC 2865 §3, RFC 2866 §3). Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/bytes.h"
#include "radius/authenticator.h"
#include "radius/packet.h"

namespace rw::gateway {

// Adds the request's Proxy-State attributes to `builder`, unmodified and in order.
void copy_proxy_states(radius::PacketBuilder& builder, const radius::Packet& request);

// Replaces `out` with the request's Proxy-State attributes as wire TLVs.
void copy_proxy_state_tlvs(const radius::Packet& request, std::vector<std::uint8_t>& out);

// Adds Proxy-State TLVs kept by copy_proxy_state_tlvs to `builder`.
void add_proxy_state_tlvs(radius::PacketBuilder& builder, Bytes tlvs);

// Finishes and signs a reply to the request with `request_authenticator`;
// its length, or 0 when it did not fit (the caller drops it as reply_too_large).
[[nodiscard]] std::size_t finish_signed(radius::PacketBuilder& builder, Bytes request_authenticator,
                                        const radius::SharedSecret& secret);

}  // namespace rw::gateway
