// The Diameter AVPs EAP-TTLS carries inside its tunnel (RFC 5281 §10.1):
// Code, flags (V vendor, M mandatory), a 24-bit length, the optional
// Vendor-ID, the data, padding to four octets. Pure and bounded; the peer's
// AVPs are untrusted (docs/limits.md "EAP-TLS").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"

namespace rw::eap {

inline constexpr std::uint8_t kAvpFlagVendor = 0x80;     // V: a Vendor-ID follows the length.
inline constexpr std::uint8_t kAvpFlagMandatory = 0x40;  // M: the receiver must understand it.
inline constexpr std::uint32_t kAvpUserName = 1;         // RADIUS User-Name (RFC 5281 §10.4).
inline constexpr std::uint32_t kAvpUserPassword = 2;     // RADIUS User-Password, in clear inside TLS.
// Microsoft's vendor AVPs for MS-CHAPv2 (RFC 5281 §11.2.4, numbered as in RFC 2548 §2).
inline constexpr std::uint32_t kVendorMicrosoft = 311;
inline constexpr std::uint32_t kAvpMsChapError = 2;
inline constexpr std::uint32_t kAvpMsChapChallenge = 11;
inline constexpr std::uint32_t kAvpMsChap2Response = 25;
inline constexpr std::uint32_t kAvpMsChap2Success = 26;

// One AVP; `data` borrows from the parsed input.
struct Avp {
  std::uint32_t code = 0;
  std::uint8_t flags = 0;
  std::optional<std::uint32_t> vendor_id;
  Bytes data;
};

enum class AvpError : std::uint8_t {
  kTruncatedHeader,  // Fewer octets left than an AVP header.
  kLengthTooShort,   // AVP Length below its own header's size.
  kLengthPastEnd,    // AVP Length runs past the data.
  kTooManyAvps,      // More AVPs than the bound.
};
[[nodiscard]] std::string_view to_string(AvpError error);

// The peer's AVPs, in order; at most `avps_max` of them. The padding of
// the last AVP may be missing.
[[nodiscard]] Result<std::vector<Avp>, AvpError> parse_avps(Bytes data, std::size_t avps_max = 32);

// One AVP (no vendor) with its padding. Requires: data.size() < 2^24 - 8.
[[nodiscard]] std::vector<std::uint8_t> encode_avp(std::uint32_t code, Bytes data, bool mandatory = true);
// One AVP with a Vendor-ID when given (V set). Requires: data.size() < 2^24 - 12.
[[nodiscard]] std::vector<std::uint8_t> encode_vendor_avp(std::optional<std::uint32_t> vendor_id,
                                                          std::uint32_t code, Bytes data,
                                                          bool mandatory = true);

}  // namespace rw::eap
