// Packet validation and building (RFC 2865 §3 and §5). Validation checks
// every structural rule before any field is used, so the accessors in
// packet.h can index without checks.
#include "radius/packet.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace rw::radius {

std::string_view to_string(Code code) {
  switch (code) {
    case Code::kAccessRequest:
      return "Access-Request";
    case Code::kAccessAccept:
      return "Access-Accept";
    case Code::kAccessReject:
      return "Access-Reject";
    case Code::kAccountingRequest:
      return "Accounting-Request";
    case Code::kAccountingResponse:
      return "Accounting-Response";
    case Code::kAccessChallenge:
      return "Access-Challenge";
    case Code::kStatusServer:
      return "Status-Server";
    case Code::kStatusClient:
      return "Status-Client";
    case Code::kDisconnectRequest:
      return "Disconnect-Request";
    case Code::kDisconnectAck:
      return "Disconnect-ACK";
    case Code::kDisconnectNak:
      return "Disconnect-NAK";
    case Code::kCoaRequest:
      return "CoA-Request";
    case Code::kCoaAck:
      return "CoA-ACK";
    case Code::kCoaNak:
      return "CoA-NAK";
  }
  return "Unknown";
}

bool is_known_code(std::uint8_t code) {
  switch (code) {
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 11:
    case 12:
    case 13:
    case 40:
    case 41:
    case 42:
    case 43:
    case 44:
    case 45:
      return true;
    default:
      return false;
  }
}

std::string_view to_string(DecodeError error) {
  switch (error) {
    case DecodeError::kDatagramTooShort:
      return "datagram_too_short";
    case DecodeError::kLengthOutOfRange:
      return "length_out_of_range";
    case DecodeError::kLengthExceedsDatagram:
      return "length_exceeds_datagram";
    case DecodeError::kUnknownCode:
      return "unknown_code";
    case DecodeError::kAttributeHeaderTruncated:
      return "attribute_header_truncated";
    case DecodeError::kAttributeLengthTooSmall:
      return "attribute_length_too_small";
    case DecodeError::kAttributeOverrunsPacket:
      return "attribute_overruns_packet";
    case DecodeError::kVendorSpecificTooShort:
      return "vendor_specific_too_short";
    case DecodeError::kMessageAuthenticatorLength:
      return "message_authenticator_length";
    case DecodeError::kDuplicateMessageAuthenticator:
      return "duplicate_message_authenticator";
  }
  return "unknown";
}

std::string_view to_string(BuildError error) {
  switch (error) {
    case BuildError::kNotBegun:
      return "not_begun";
    case BuildError::kBadAuthenticatorLength:
      return "bad_authenticator_length";
    case BuildError::kValueTooLong:
      return "value_too_long";
    case BuildError::kPacketTooLong:
      return "packet_too_long";
    case BuildError::kBadMessageAuthenticator:
      return "bad_message_authenticator";
    case BuildError::kDuplicateMessageAuthenticator:
      return "duplicate_message_authenticator";
  }
  return "unknown";
}

// The gateway passes Packets by value between pure steps.
static_assert(std::is_trivially_copyable_v<Packet>);
static_assert(static_cast<std::size_t>(DecodeError::kDuplicateMessageAuthenticator) + 1 == kDecodeErrorCount);

namespace {

constexpr std::size_t kVendorIdLength = 4;

std::uint32_t read_u32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) << 24 | static_cast<std::uint32_t>(p[1]) << 16 |
         static_cast<std::uint32_t>(p[2]) << 8 | p[3];
}

// Checks the attribute run of `wire` (whose length is the Length field)
// and finds the Message-Authenticator. Returns its offset, 0 when absent.
Result<std::uint16_t, DecodeError> check_attributes(Bytes wire) {
  std::uint16_t message_authenticator_offset = 0;
  std::size_t offset = kHeaderLength;
  while (offset < wire.size()) {
    if (wire.size() - offset < 2) return fail(DecodeError::kAttributeHeaderTruncated);
    const std::uint8_t type = wire[offset];
    const std::size_t length = wire[offset + 1];
    if (length < 2) return fail(DecodeError::kAttributeLengthTooSmall);
    if (length > wire.size() - offset) return fail(DecodeError::kAttributeOverrunsPacket);
    if (type == attr::kVendorSpecific && length < 2 + kVendorIdLength) {
      // RFC 2865 §5.26: the value starts with a 4-octet Vendor-Id. The rest
      // is the vendor's and is only parsed when looked into.
      return fail(DecodeError::kVendorSpecificTooShort);
    }
    if (type == attr::kMessageAuthenticator) {
      // RFC 3579 §3.2: Length is 18; RFC 3579 §3.2 allows one per packet.
      if (length != kMessageAuthenticatorAttributeLength) {
        return fail(DecodeError::kMessageAuthenticatorLength);
      }
      if (message_authenticator_offset != 0) return fail(DecodeError::kDuplicateMessageAuthenticator);
      message_authenticator_offset = static_cast<std::uint16_t>(offset);
    }
    offset += length;
  }
  return message_authenticator_offset;
}

}  // namespace

std::optional<VendorSpecific> split_vendor_specific(Bytes value) {
  if (value.size() < kVendorIdLength) return std::nullopt;
  return VendorSpecific{read_u32(value.data()), value.subspan(kVendorIdLength)};
}

std::optional<Bytes> find_vendor_attribute(Bytes body, std::uint8_t vendor_type) {
  std::size_t offset = 0;
  while (body.size() - offset >= 2) {
    const std::size_t length = body[offset + 1];
    if (length < 2 || length > body.size() - offset) return std::nullopt;
    if (body[offset] == vendor_type) return body.subspan(offset + 2, length - 2);
    offset += length;
  }
  return std::nullopt;
}

Result<Packet, DecodeError> Packet::parse(Bytes datagram) {
  if (datagram.size() < kHeaderLength) return fail(DecodeError::kDatagramTooShort);
  const std::size_t length = static_cast<std::size_t>(datagram[2]) << 8 | datagram[3];
  if (length < kHeaderLength || length > kMaxPacketLength) return fail(DecodeError::kLengthOutOfRange);
  // RFC 2865 §3: a packet shorter than its Length field MUST be silently
  // discarded; octets past Length are padding and are ignored.
  if (length > datagram.size()) return fail(DecodeError::kLengthExceedsDatagram);
  if (!is_known_code(datagram[0])) return fail(DecodeError::kUnknownCode);
  Bytes wire = datagram.first(length);
  auto message_authenticator_offset = check_attributes(wire);
  if (!message_authenticator_offset) return fail(message_authenticator_offset.error());
  return Packet(wire, *message_authenticator_offset);
}

std::optional<Attribute> Packet::find(std::uint8_t type) const {
  for (Attribute attribute : attributes()) {
    if (attribute.type == type) return attribute;
  }
  return std::nullopt;
}

std::size_t Packet::count(std::uint8_t type) const {
  std::size_t n = 0;
  for (Attribute attribute : attributes()) n += attribute.type == type ? 1 : 0;
  return n;
}

std::optional<std::uint32_t> integer_value(Bytes value) {
  if (value.size() != 4) return std::nullopt;
  return read_u32(value.data());
}

std::optional<std::uint32_t> Packet::find_u32(std::uint8_t type) const {
  auto attribute = find(type);
  if (!attribute) return std::nullopt;
  return integer_value(attribute->value);
}

std::optional<Bytes> Packet::find_vendor(std::uint32_t vendor, std::uint8_t vendor_type) const {
  for (Attribute attribute : attributes()) {
    if (attribute.type != attr::kVendorSpecific) continue;
    auto vsa = split_vendor_specific(attribute.value);
    if (!vsa || vsa->vendor != vendor) continue;
    if (auto value = find_vendor_attribute(vsa->body, vendor_type)) return value;
  }
  return std::nullopt;
}

PacketBuilder::PacketBuilder(MutableBytes buffer)
    : buffer_(buffer.first(std::min(buffer.size(), kMaxPacketLength))) {}

void PacketBuilder::begin(Code code, std::uint8_t identifier, Bytes authenticator) {
  size_ = 0;
  begun_ = true;
  error_.reset();
  message_authenticator_offset_.reset();
  if (!authenticator.empty() && authenticator.size() != kAuthenticatorLength) {
    set_error(BuildError::kBadAuthenticatorLength);
    return;
  }
  std::uint8_t* header = append(kHeaderLength);
  if (header == nullptr) return;
  header[0] = static_cast<std::uint8_t>(code);
  header[1] = identifier;
  if (authenticator.empty()) {
    std::memset(header + 4, 0, kAuthenticatorLength);
  } else {
    std::memcpy(header + 4, authenticator.data(), kAuthenticatorLength);
  }
}

void PacketBuilder::add(std::uint8_t type, Bytes value) {
  if (type == attr::kMessageAuthenticator) {
    if (value.size() != kAuthenticatorLength) return set_error(BuildError::kBadMessageAuthenticator);
    if (message_authenticator_offset_) return set_error(BuildError::kDuplicateMessageAuthenticator);
    if (begun_ && !error_) message_authenticator_offset_ = size_;
  }
  if (value.size() > kMaxAttributeValueLength) return set_error(BuildError::kValueTooLong);
  std::uint8_t* out = append(2 + value.size());
  if (out == nullptr) return;
  out[0] = type;
  out[1] = static_cast<std::uint8_t>(2 + value.size());
  if (!value.empty()) std::memcpy(out + 2, value.data(), value.size());
}

void PacketBuilder::add_u32(std::uint8_t type, std::uint32_t value) {
  const std::uint8_t bytes[4] = {static_cast<std::uint8_t>(value >> 24),
                                 static_cast<std::uint8_t>(value >> 16),
                                 static_cast<std::uint8_t>(value >> 8), static_cast<std::uint8_t>(value)};
  add(type, bytes);
}

void PacketBuilder::add_vendor(std::uint32_t vendor, std::uint8_t vendor_type, Bytes value) {
  if (value.size() > kMaxVendorValueLength) return set_error(BuildError::kValueTooLong);
  std::uint8_t* out = append(2 + kVendorIdLength + 2 + value.size());
  if (out == nullptr) return;
  out[0] = attr::kVendorSpecific;
  out[1] = static_cast<std::uint8_t>(2 + kVendorIdLength + 2 + value.size());
  out[2] = static_cast<std::uint8_t>(vendor >> 24);
  out[3] = static_cast<std::uint8_t>(vendor >> 16);
  out[4] = static_cast<std::uint8_t>(vendor >> 8);
  out[5] = static_cast<std::uint8_t>(vendor);
  out[6] = vendor_type;
  out[7] = static_cast<std::uint8_t>(2 + value.size());
  if (!value.empty()) std::memcpy(out + 8, value.data(), value.size());
}

void PacketBuilder::reserve_message_authenticator() {
  static constexpr std::uint8_t kZeros[kAuthenticatorLength] = {};
  add(attr::kMessageAuthenticator, kZeros);
}

Result<MutableBytes, BuildError> PacketBuilder::finish() {
  if (!begun_) return fail(BuildError::kNotBegun);
  if (error_) return fail(*error_);
  buffer_[2] = static_cast<std::uint8_t>(size_ >> 8);
  buffer_[3] = static_cast<std::uint8_t>(size_);
  return buffer_.first(size_);
}

std::uint8_t* PacketBuilder::append(std::size_t count) {
  if (!begun_) {
    set_error(BuildError::kNotBegun);
    return nullptr;
  }
  if (error_) return nullptr;
  if (count > buffer_.size() - size_) {
    set_error(BuildError::kPacketTooLong);
    return nullptr;
  }
  std::uint8_t* out = buffer_.data() + size_;
  size_ += count;
  return out;
}

void PacketBuilder::set_error(BuildError error) {
  if (!error_) error_ = error;
}

}  // namespace rw::radius
