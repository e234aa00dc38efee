// RADIUS packets on the wire (RFC 2865 §3 and §5, RFC 2866 §3, RFC 5176 §2.3,
// RFC 5997): strict structural validation of a datagram into a borrowed,
// allocation-free view, and a builder that writes packets into a caller's
// fixed buffer. Cryptography lives in authenticator.h and attribute_crypto.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

#include "base/bytes.h"
#include "base/result.h"

namespace rw::radius {

inline constexpr std::size_t kHeaderLength = 20;
inline constexpr std::size_t kMaxPacketLength = 4096;
inline constexpr std::size_t kAuthenticatorLength = 16;
// Largest attribute value: the Length octet counts the 2-octet header.
inline constexpr std::size_t kMaxAttributeValueLength = 253;
// Largest value of a vendor sub-attribute in the 1,1 format (RFC 2865 §5.26):
// 253 minus the Vendor-Id (4) and the sub-attribute header (2).
inline constexpr std::size_t kMaxVendorValueLength = 247;
inline constexpr std::size_t kMessageAuthenticatorAttributeLength = 18;

// Packet codes (RFC 2865 §3, RFC 2866 §4, RFC 5997, RFC 5176 §2.3).
enum class Code : std::uint8_t {
  kAccessRequest = 1,
  kAccessAccept = 2,
  kAccessReject = 3,
  kAccountingRequest = 4,
  kAccountingResponse = 5,
  kAccessChallenge = 11,
  kStatusServer = 12,
  kStatusClient = 13,
  kDisconnectRequest = 40,
  kDisconnectAck = 41,
  kDisconnectNak = 42,
  kCoaRequest = 43,
  kCoaAck = 44,
  kCoaNak = 45,
};

// The RFC name of a code ("Access-Request"), or "Unknown".
std::string_view to_string(Code code);
// True for the codes listed in Code.
[[nodiscard]] bool is_known_code(std::uint8_t code);

// Standard attribute types (RFC 2865 §5, RFC 2866 §5, RFC 2868, RFC 2869,
// RFC 3162, RFC 3579, RFC 4072, RFC 5176).
namespace attr {
inline constexpr std::uint8_t kUserName = 1;
inline constexpr std::uint8_t kUserPassword = 2;
inline constexpr std::uint8_t kChapPassword = 3;
inline constexpr std::uint8_t kNasIpAddress = 4;
inline constexpr std::uint8_t kNasPort = 5;
inline constexpr std::uint8_t kServiceType = 6;
inline constexpr std::uint8_t kFramedProtocol = 7;
inline constexpr std::uint8_t kFramedIpAddress = 8;
inline constexpr std::uint8_t kFramedIpNetmask = 9;
inline constexpr std::uint8_t kFramedRouting = 10;
inline constexpr std::uint8_t kFilterId = 11;
inline constexpr std::uint8_t kFramedMtu = 12;
inline constexpr std::uint8_t kFramedCompression = 13;
inline constexpr std::uint8_t kLoginIpHost = 14;
inline constexpr std::uint8_t kLoginService = 15;
inline constexpr std::uint8_t kLoginTcpPort = 16;
inline constexpr std::uint8_t kReplyMessage = 18;
inline constexpr std::uint8_t kCallbackNumber = 19;
inline constexpr std::uint8_t kCallbackId = 20;
inline constexpr std::uint8_t kFramedRoute = 22;
inline constexpr std::uint8_t kFramedIpxNetwork = 23;
inline constexpr std::uint8_t kState = 24;
inline constexpr std::uint8_t kClass = 25;
inline constexpr std::uint8_t kVendorSpecific = 26;
inline constexpr std::uint8_t kSessionTimeout = 27;
inline constexpr std::uint8_t kIdleTimeout = 28;
inline constexpr std::uint8_t kTerminationAction = 29;
inline constexpr std::uint8_t kCalledStationId = 30;
inline constexpr std::uint8_t kCallingStationId = 31;
inline constexpr std::uint8_t kNasIdentifier = 32;
inline constexpr std::uint8_t kProxyState = 33;
inline constexpr std::uint8_t kLoginLatService = 34;
inline constexpr std::uint8_t kLoginLatNode = 35;
inline constexpr std::uint8_t kLoginLatGroup = 36;
inline constexpr std::uint8_t kFramedAppleTalkLink = 37;
inline constexpr std::uint8_t kFramedAppleTalkNetwork = 38;
inline constexpr std::uint8_t kFramedAppleTalkZone = 39;
inline constexpr std::uint8_t kAcctStatusType = 40;
inline constexpr std::uint8_t kAcctDelayTime = 41;
inline constexpr std::uint8_t kAcctInputOctets = 42;
inline constexpr std::uint8_t kAcctOutputOctets = 43;
inline constexpr std::uint8_t kAcctSessionId = 44;
inline constexpr std::uint8_t kAcctAuthentic = 45;
inline constexpr std::uint8_t kAcctSessionTime = 46;
inline constexpr std::uint8_t kAcctInputPackets = 47;
inline constexpr std::uint8_t kAcctOutputPackets = 48;
inline constexpr std::uint8_t kAcctTerminateCause = 49;
inline constexpr std::uint8_t kAcctMultiSessionId = 50;
inline constexpr std::uint8_t kAcctLinkCount = 51;
inline constexpr std::uint8_t kAcctInputGigawords = 52;
inline constexpr std::uint8_t kAcctOutputGigawords = 53;
inline constexpr std::uint8_t kEventTimestamp = 55;
inline constexpr std::uint8_t kChapChallenge = 60;
inline constexpr std::uint8_t kNasPortType = 61;
inline constexpr std::uint8_t kPortLimit = 62;
inline constexpr std::uint8_t kLoginLatPort = 63;
inline constexpr std::uint8_t kTunnelType = 64;
inline constexpr std::uint8_t kTunnelMediumType = 65;
inline constexpr std::uint8_t kTunnelClientEndpoint = 66;
inline constexpr std::uint8_t kTunnelServerEndpoint = 67;
inline constexpr std::uint8_t kAcctTunnelConnection = 68;
inline constexpr std::uint8_t kTunnelPassword = 69;
inline constexpr std::uint8_t kArapPassword = 70;
inline constexpr std::uint8_t kArapFeatures = 71;
inline constexpr std::uint8_t kArapZoneAccess = 72;
inline constexpr std::uint8_t kArapSecurity = 73;
inline constexpr std::uint8_t kArapSecurityData = 74;
inline constexpr std::uint8_t kPasswordRetry = 75;
inline constexpr std::uint8_t kPrompt = 76;
inline constexpr std::uint8_t kConnectInfo = 77;
inline constexpr std::uint8_t kConfigurationToken = 78;
inline constexpr std::uint8_t kEapMessage = 79;
inline constexpr std::uint8_t kMessageAuthenticator = 80;
inline constexpr std::uint8_t kTunnelPrivateGroupId = 81;
inline constexpr std::uint8_t kTunnelAssignmentId = 82;
inline constexpr std::uint8_t kTunnelPreference = 83;
inline constexpr std::uint8_t kArapChallengeResponse = 84;
inline constexpr std::uint8_t kAcctInterimInterval = 85;
inline constexpr std::uint8_t kAcctTunnelPacketsLost = 86;
inline constexpr std::uint8_t kNasPortId = 87;
inline constexpr std::uint8_t kFramedPool = 88;
inline constexpr std::uint8_t kChargeableUserIdentity = 89;
inline constexpr std::uint8_t kTunnelClientAuthId = 90;
inline constexpr std::uint8_t kTunnelServerAuthId = 91;
inline constexpr std::uint8_t kNasIpv6Address = 95;
inline constexpr std::uint8_t kFramedInterfaceId = 96;
inline constexpr std::uint8_t kFramedIpv6Prefix = 97;
inline constexpr std::uint8_t kLoginIpv6Host = 98;
inline constexpr std::uint8_t kFramedIpv6Route = 99;
inline constexpr std::uint8_t kFramedIpv6Pool = 100;
inline constexpr std::uint8_t kErrorCause = 101;
inline constexpr std::uint8_t kEapKeyName = 102;
}  // namespace attr

// Vendor-Id of Microsoft (RFC 2548 §2) and its vendor types used here.
inline constexpr std::uint32_t kVendorMicrosoft = 311;
namespace ms {
inline constexpr std::uint8_t kChapResponse = 1;
inline constexpr std::uint8_t kChapError = 2;
inline constexpr std::uint8_t kMppeEncryptionPolicy = 7;
inline constexpr std::uint8_t kMppeEncryptionTypes = 8;
inline constexpr std::uint8_t kChapChallenge = 11;
inline constexpr std::uint8_t kChapMppeKeys = 12;
inline constexpr std::uint8_t kMppeSendKey = 16;
inline constexpr std::uint8_t kMppeRecvKey = 17;
inline constexpr std::uint8_t kChap2Response = 25;
inline constexpr std::uint8_t kChap2Success = 26;
}  // namespace ms

// Why a datagram is not a well-formed RADIUS packet. Each reason is counted
// separately by the gateway; the list is in docs/protocol.md.
enum class DecodeError : std::uint8_t {
  kDatagramTooShort,               // fewer than 20 octets
  kLengthOutOfRange,               // Length field < 20 or > 4096
  kLengthExceedsDatagram,          // Length field > octets received
  kUnknownCode,                    // Code not in Code
  kAttributeHeaderTruncated,       // one octet left where a header starts
  kAttributeLengthTooSmall,        // attribute Length < 2
  kAttributeOverrunsPacket,        // attribute runs past the Length field
  kVendorSpecificTooShort,         // Vendor-Specific without a whole Vendor-Id
  kMessageAuthenticatorLength,     // Message-Authenticator Length != 18
  kDuplicateMessageAuthenticator,  // more than one Message-Authenticator
};

// The number of DecodeError values, numbered from 0, for arrays of counters.
inline constexpr std::size_t kDecodeErrorCount = 10;

std::string_view to_string(DecodeError error);

// One attribute of a parsed packet. `value` borrows from the datagram;
// `offset` is where the attribute's Type octet sits in the packet.
struct Attribute {
  std::uint8_t type = 0;
  Bytes value;
  std::size_t offset = 0;
};

// An attribute value read as a 32-bit integer (RFC 2865 §5 "integer",
// network order); nothing unless it is exactly 4 octets long.
[[nodiscard]] std::optional<std::uint32_t> integer_value(Bytes value);

// Walks the attributes of a Packet, which parse() has already validated;
// the iterator itself does not re-check lengths.
class AttributeIterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = Attribute;
  using difference_type = std::ptrdiff_t;
  using pointer = const Attribute*;
  using reference = Attribute;

  AttributeIterator() = default;
  AttributeIterator(Bytes packet, std::size_t offset) : packet_(packet), offset_(offset) {}

  [[nodiscard]] Attribute operator*() const {
    return {packet_[offset_], packet_.subspan(offset_ + 2, packet_[offset_ + 1] - 2u), offset_};
  }
  AttributeIterator& operator++() {
    offset_ += packet_[offset_ + 1];
    return *this;
  }
  AttributeIterator operator++(int) {
    AttributeIterator before = *this;
    ++*this;
    return before;
  }
  friend bool operator==(const AttributeIterator& a, const AttributeIterator& b) {
    return a.offset_ == b.offset_;
  }

 private:
  Bytes packet_;
  std::size_t offset_ = 0;
};

// The attributes of a Packet, in wire order.
class AttributeRange {
 public:
  AttributeRange(Bytes packet, std::size_t begin, std::size_t end)
      : packet_(packet), begin_(begin), end_(end) {}
  [[nodiscard]] AttributeIterator begin() const { return {packet_, begin_}; }
  [[nodiscard]] AttributeIterator end() const { return {packet_, end_}; }
  [[nodiscard]] bool empty() const { return begin_ == end_; }

 private:
  Bytes packet_;
  std::size_t begin_;
  std::size_t end_;
};

// A Vendor-Specific attribute's value split into its Vendor-Id and the
// vendor's own bytes (RFC 2865 §5.26).
struct VendorSpecific {
  std::uint32_t vendor = 0;
  Bytes body;
};

// Splits a Vendor-Specific value. Returns nothing when it is shorter than a
// Vendor-Id (a Packet never holds such a value).
[[nodiscard]] std::optional<VendorSpecific> split_vendor_specific(Bytes value);

// The first sub-attribute of `vendor_type` in a vendor body laid out in the
// recommended 1,1 format (type octet, length octet counting both). Returns
// nothing when absent or when the body is not in that format before the
// match: vendor bodies are checked leniently, only when looked into.
[[nodiscard]] std::optional<Bytes> find_vendor_attribute(Bytes body, std::uint8_t vendor_type);

// A validated RADIUS packet: a borrowed view of the datagram, trivially
// copyable, allocating nothing. Valid as long as the datagram's bytes are.
// It checks structure only; authenticators are checked in authenticator.h.
class Packet {
 public:
  // Validates `datagram` (RFC 2865 §3 and §5). Octets past the Length field
  // are padding and are ignored (RFC 2865 §3). Vendor-Specific bodies are
  // not parsed here; see find_vendor().
  [[nodiscard]] static Result<Packet, DecodeError> parse(Bytes datagram);

  [[nodiscard]] Code code() const { return static_cast<Code>(wire_[0]); }
  [[nodiscard]] std::uint8_t identifier() const { return wire_[1]; }
  // The 16-octet Request or Response Authenticator.
  [[nodiscard]] Bytes authenticator() const { return wire_.subspan(4, kAuthenticatorLength); }
  // The packet's bytes, up to its Length field.
  [[nodiscard]] Bytes wire() const { return wire_; }
  [[nodiscard]] std::size_t length() const { return wire_.size(); }
  // The attribute octets after the header.
  [[nodiscard]] Bytes attribute_bytes() const { return wire_.subspan(kHeaderLength); }

  [[nodiscard]] AttributeRange attributes() const { return {wire_, kHeaderLength, wire_.size()}; }
  // The first attribute of `type`, if any.
  [[nodiscard]] std::optional<Attribute> find(std::uint8_t type) const;
  [[nodiscard]] std::size_t count(std::uint8_t type) const;
  // The first attribute of `type` read as a 32-bit integer (RFC 2865 §5
  // "integer"); nothing when absent or not exactly 4 octets long.
  [[nodiscard]] std::optional<std::uint32_t> find_u32(std::uint8_t type) const;
  // The value of the first vendor sub-attribute (vendor, vendor_type) in
  // the 1,1 format, searching every Vendor-Specific attribute in order.
  [[nodiscard]] std::optional<Bytes> find_vendor(std::uint32_t vendor, std::uint8_t vendor_type) const;

  // Where the Message-Authenticator attribute's Type octet is, if present.
  [[nodiscard]] std::optional<std::size_t> message_authenticator_offset() const {
    if (message_authenticator_offset_ == 0) return std::nullopt;
    return message_authenticator_offset_;
  }

 private:
  Packet(Bytes wire, std::uint16_t message_authenticator_offset)
      : wire_(wire), message_authenticator_offset_(message_authenticator_offset) {}

  Bytes wire_;
  // 0 when absent: no attribute can start inside the header.
  std::uint16_t message_authenticator_offset_ = 0;
};

// Why a packet could not be built.
enum class BuildError : std::uint8_t {
  kNotBegun,                       // add() or finish() before begin()
  kBadAuthenticatorLength,         // begin() with an authenticator not 16 octets
  kValueTooLong,                   // value longer than an attribute can carry
  kPacketTooLong,                  // more than 4096 octets or the buffer's size
  kBadMessageAuthenticator,        // Message-Authenticator value not 16 octets
  kDuplicateMessageAuthenticator,  // a second Message-Authenticator
};

std::string_view to_string(BuildError error);

// Writes a packet into a caller-owned buffer. Nothing allocates; the first
// error is kept, later calls do nothing, and finish() reports it, so a chain
// of add() calls needs one check at the end.
//
//   PacketBuilder builder(buffer);
//   builder.begin(Code::kAccessAccept, request.identifier(), request.authenticator());
//   builder.reserve_message_authenticator();
//   builder.add(attr::kReplyMessage, as_bytes("welcome"));
//   auto wire = builder.finish();   // then sign_response() (authenticator.h)
class PacketBuilder {
 public:
  // The buffer is borrowed until finish(); at most 4096 octets of it are used.
  explicit PacketBuilder(MutableBytes buffer);

  // Starts a packet, discarding any previous one. `authenticator` goes in
  // the header: the random Request Authenticator of an Access-Request or
  // Status-Server, or empty for 16 zeros where signing fills it in
  // (responses, Accounting-, Disconnect- and CoA-Request).
  void begin(Code code, std::uint8_t identifier, Bytes authenticator = {});
  // Appends an attribute. Requires nothing: a too-long value is an error.
  // A Message-Authenticator added here is tracked as by
  // reserve_message_authenticator().
  void add(std::uint8_t type, Bytes value);
  void add_u32(std::uint8_t type, std::uint32_t value);
  // Appends a Vendor-Specific attribute holding one sub-attribute in the
  // 1,1 format (RFC 2865 §5.26).
  void add_vendor(std::uint32_t vendor, std::uint8_t vendor_type, Bytes value);
  // Appends a zeroed Message-Authenticator (RFC 3579 §3.2) for signing to
  // fill. It is placed where called; the gateway calls it first, so that
  // a proxy or NAS finds it early.
  void reserve_message_authenticator();

  // Writes the Length field and returns the packet, or the first error.
  [[nodiscard]] Result<MutableBytes, BuildError> finish();

  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] std::optional<BuildError> error() const { return error_; }
  [[nodiscard]] std::optional<std::size_t> message_authenticator_offset() const {
    return message_authenticator_offset_;
  }

 private:
  // Reserves `count` octets and returns where they start, or nullptr.
  std::uint8_t* append(std::size_t count);
  void set_error(BuildError error);

  MutableBytes buffer_;
  std::size_t size_ = 0;
  bool begun_ = false;
  std::optional<BuildError> error_;
  std::optional<std::size_t> message_authenticator_offset_;
};

}  // namespace rw::radius
