// EAP packets (RFC 3748 §4): Code, Identifier, Length and, for Requests and
// Responses, the Type and its Type-Data. Parsing checks structure with a
// named reason and never reads past the octets received, whatever Length
// says; building writes into a caller's buffer. Pure; nothing allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/bytes.h"
#include "base/result.h"

namespace rw::eap {

// Code, Identifier and Length (RFC 3748 §4).
inline constexpr std::size_t kHeaderLength = 4;

// RFC 3748 §4.
enum class Code : std::uint8_t {
  kRequest = 1,
  kResponse = 2,
  kSuccess = 3,
  kFailure = 4,
};
// "Request", "Response", "Success", "Failure", or "Unknown".
[[nodiscard]] std::string_view to_string(Code code);

// Why octets are not an EAP packet.
enum class ParseError : std::uint8_t {
  kTooShort,           // Fewer than the 4 octets of the header.
  kUnknownCode,        // Code not 1 to 4.
  kLengthTooSmall,     // Length below 4, or below 5 for a Request or Response (no Type).
  kLengthExceedsData,  // Length larger than the octets received.
  kResultWithData,     // RFC 3748 §4.2: a Success or Failure longer than 4 octets.
  kCount,
};
[[nodiscard]] std::string_view to_string(ParseError error);
inline constexpr std::size_t kParseErrorCount = static_cast<std::size_t>(ParseError::kCount);

// One EAP packet. Parsed, it borrows from the octets it was parsed from;
// built, it borrows `type_data` from the caller.
struct Packet {
  Code code = Code::kRequest;
  std::uint8_t identifier = 0;
  // The Type of a Request or Response (RFC 3748 §5: Identity 1, Nak 3,
  // MD5-Challenge 4, ...); 0 for Success and Failure.
  std::uint8_t type = 0;
  Bytes type_data{};  // The octets after the Type, up to Length.

  // Length on the wire: the header, and the Type and Type-Data of a Request or Response.
  [[nodiscard]] std::size_t length() const {
    return has_type() ? kHeaderLength + 1 + type_data.size() : kHeaderLength;
  }
  [[nodiscard]] bool has_type() const { return code == Code::kRequest || code == Code::kResponse; }
};

// Parses `octets`. RFC 3748 §4: octets past Length are link-layer padding
// and are ignored. An Expanded Type (254) is returned as is: its Vendor-Id
// and Vendor-Type are the first 7 octets of `type_data`.
[[nodiscard]] Result<Packet, ParseError> parse(Bytes octets);

// Writes `packet` into `out` and returns the octets written: empty when it
// does not fit `out` or its Length would pass 65535.
[[nodiscard]] Bytes write(const Packet& packet, MutableBytes out);

}  // namespace rw::eap
