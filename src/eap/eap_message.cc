// EAP-Message reassembly and splitting (RFC 3579 §3.1).
#include "eap/eap_message.h"

#include <algorithm>

namespace rw::eap {

std::string_view to_string(ReassemblyError error) {
  switch (error) {
    case ReassemblyError::kNoEapMessage:
      return "no_eap_message";
    case ReassemblyError::kTooLong:
      return "too_long";
    case ReassemblyError::kCount:
      break;
  }
  return "unknown";
}

Result<Bytes, ReassemblyError> reassemble(const radius::Packet& request, MutableBytes out) {
  std::size_t size = 0;
  bool found = false;
  for (const radius::Attribute attribute : request.attributes()) {
    if (attribute.type != radius::attr::kEapMessage) continue;
    found = true;
    if (attribute.value.size() > out.size() - size) return fail(ReassemblyError::kTooLong);
    std::copy(attribute.value.begin(), attribute.value.end(),
              out.begin() + static_cast<std::ptrdiff_t>(size));
    size += attribute.value.size();
  }
  if (!found) return fail(ReassemblyError::kNoEapMessage);
  return Bytes(out.data(), size);
}

void add_eap_message(radius::PacketBuilder& builder, Bytes eap_packet) {
  if (eap_packet.empty()) {
    builder.add(radius::attr::kEapMessage, {});
    return;
  }
  while (!eap_packet.empty()) {
    const std::size_t chunk = std::min(eap_packet.size(), kEapMessageChunk);
    builder.add(radius::attr::kEapMessage, eap_packet.first(chunk));
    eap_packet = eap_packet.subspan(chunk);
  }
}

}  // namespace rw::eap
