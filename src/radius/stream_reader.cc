// StreamReader: the Length-field framing of RADIUS over TCP (RFC 6613),
// which RADIUS over TLS keeps (RFC 6614).
#include "radius/stream_reader.h"

#include <algorithm>

namespace rw::radius {
namespace {

// Octets up to and including the Length field: Code, Identifier, Length.
constexpr std::size_t kLengthEnd = 4;

std::size_t length_field(const std::uint8_t* header) {
  return static_cast<std::size_t>(header[2]) << 8 | header[3];
}

bool length_in_range(std::size_t length) { return length >= kHeaderLength && length <= kMaxPacketLength; }

}  // namespace

std::string_view to_string(StreamError error) {
  switch (error) {
    case StreamError::kLengthOutOfRange:
      return "length_out_of_range";
  }
  return "unknown";
}

Result<std::optional<Bytes>, StreamError> StreamReader::next(Bytes& input) {
  if (failed_) return fail(StreamError::kLengthOutOfRange);
  if (held_ == 0 && input.size() >= kLengthEnd) {
    // The common case: the whole packet is in `input`, no copy.
    const std::size_t length = length_field(input.data());
    if (!length_in_range(length)) {
      failed_ = true;
      return fail(StreamError::kLengthOutOfRange);
    }
    if (input.size() >= length) {
      const Bytes packet = input.first(length);
      input = input.subspan(length);
      return std::optional<Bytes>(packet);
    }
  }
  while (!input.empty()) {
    const std::size_t wanted = expected_ == 0 ? kLengthEnd : expected_;
    const std::size_t take = std::min(wanted - held_, input.size());
    std::copy_n(input.begin(), take, buffer_.begin() + static_cast<std::ptrdiff_t>(held_));
    held_ += take;
    input = input.subspan(take);
    if (expected_ == 0 && held_ == kLengthEnd) {
      expected_ = length_field(buffer_.data());
      if (!length_in_range(expected_)) {
        failed_ = true;
        return fail(StreamError::kLengthOutOfRange);
      }
    }
    if (expected_ != 0 && held_ == expected_) {
      const Bytes packet(buffer_.data(), expected_);
      held_ = 0;
      expected_ = 0;
      return std::optional<Bytes>(packet);
    }
  }
  return std::optional<Bytes>();
}

}  // namespace rw::radius
