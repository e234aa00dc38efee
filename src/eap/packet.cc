// The EAP packet codec (RFC 3748 §4).
#include "eap/packet.h"

#include <algorithm>
#include <limits>

namespace rw::eap {

std::string_view to_string(Code code) {
  switch (code) {
    case Code::kRequest:
      return "Request";
    case Code::kResponse:
      return "Response";
    case Code::kSuccess:
      return "Success";
    case Code::kFailure:
      return "Failure";
  }
  return "Unknown";
}

std::string_view to_string(ParseError error) {
  switch (error) {
    case ParseError::kTooShort:
      return "too_short";
    case ParseError::kUnknownCode:
      return "unknown_code";
    case ParseError::kLengthTooSmall:
      return "length_too_small";
    case ParseError::kLengthExceedsData:
      return "length_exceeds_data";
    case ParseError::kResultWithData:
      return "result_with_data";
    case ParseError::kCount:
      break;
  }
  return "unknown";
}

Result<Packet, ParseError> parse(Bytes octets) {
  ByteReader reader(octets);
  std::uint8_t code = 0;
  std::uint8_t identifier = 0;
  std::uint16_t length = 0;
  if (!reader.read_u8(code) || !reader.read_u8(identifier) || !reader.read_u16(length)) {
    return fail(ParseError::kTooShort);
  }
  if (code < static_cast<std::uint8_t>(Code::kRequest) || code > static_cast<std::uint8_t>(Code::kFailure)) {
    return fail(ParseError::kUnknownCode);
  }
  Packet packet{.code = static_cast<Code>(code), .identifier = identifier};
  const std::size_t least = packet.has_type() ? kHeaderLength + 1 : kHeaderLength;
  if (length < least) return fail(ParseError::kLengthTooSmall);
  if (length > octets.size()) return fail(ParseError::kLengthExceedsData);
  if (!packet.has_type()) {
    if (length != kHeaderLength) return fail(ParseError::kResultWithData);
    return packet;
  }
  packet.type = octets[kHeaderLength];
  packet.type_data = octets.subspan(kHeaderLength + 1, length - kHeaderLength - 1u);
  return packet;
}

Bytes write(const Packet& packet, MutableBytes out) {
  const std::size_t length = packet.length();
  if (length > std::numeric_limits<std::uint16_t>::max() || length > out.size()) return {};
  ByteWriter writer(out);
  writer.write_u8(static_cast<std::uint8_t>(packet.code));
  writer.write_u8(packet.identifier);
  writer.write_u16(static_cast<std::uint16_t>(length));
  if (packet.has_type()) {
    writer.write_u8(packet.type);
    writer.write_bytes(packet.type_data);
  }
  return writer.written();
}

}  // namespace rw::eap
