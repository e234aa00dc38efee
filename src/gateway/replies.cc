// Proxy-State copies and the signed finish shared by every reply kind.
#include "gateway/replies.h"

#include "radius/attribute_crypto.h"

namespace rw::gateway {

namespace attr = radius::attr;

void copy_proxy_states(radius::PacketBuilder& builder, const radius::Packet& request) {
  for (const radius::Attribute attribute : request.attributes()) {
    if (attribute.type == attr::kProxyState) builder.add(attr::kProxyState, attribute.value);
  }
}

void copy_proxy_state_tlvs(const radius::Packet& request, std::vector<std::uint8_t>& out) {
  out.clear();
  // Sized once: a pending request's buffer keeps its capacity from one use
  // of its slot to the next, so a slot allocates only the first time it
  // holds more Proxy-State than before, and then once, not per doubling.
  std::size_t size = 0;
  for (const radius::Attribute attribute : request.attributes()) {
    if (attribute.type == attr::kProxyState) size += attribute.value.size() + 2;
  }
  if (size == 0) return;
  out.reserve(size);
  for (const radius::Attribute attribute : request.attributes()) {
    if (attribute.type != attr::kProxyState) continue;
    out.push_back(attr::kProxyState);
    out.push_back(static_cast<std::uint8_t>(attribute.value.size() + 2));
    out.insert(out.end(), attribute.value.begin(), attribute.value.end());
  }
}

void add_proxy_state_tlvs(radius::PacketBuilder& builder, Bytes tlvs) {
  for (const radius::Attribute attribute : radius::AttributeRange{tlvs, 0, tlvs.size()}) {
    builder.add(attr::kProxyState, attribute.value);
  }
}

std::size_t finish_signed(radius::PacketBuilder& builder, Bytes request_authenticator,
                          const radius::SharedSecret& secret) {
  auto finished = builder.finish();
  if (!finished) return 0;
  radius::sign_response(*finished, request_authenticator, secret);
  return finished->size();
}

}  // namespace rw::gateway
