// RADIUS packets framed by their Length field on a byte stream, as RADIUS
// over TLS carries them (RFC 6614, RFC 6613): the stream is a
// sequence of whole packets with nothing between them, so the Length field
// of each header says where the next begins. Pure: no I/O, no allocation.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "base/bytes.h"
#include "base/result.h"
#include "radius/packet.h"

namespace rw::radius {

// Why a stream cannot be read any further. RFC 6613: a Length outside
// 20..4096 means the stream has lost its framing, and the connection must
// be closed (nothing after it can be trusted to start a packet).
enum class StreamError : std::uint8_t {
  kLengthOutOfRange,  // A header's Length field < 20 or > 4096.
};
[[nodiscard]] std::string_view to_string(StreamError error);

// Splits the bytes of one connection into packets. Holds at most one
// partial packet (4096 octets), so a peer can make it buffer no more.
// Packets are only framed here: Packet::parse checks their structure.
class StreamReader {
 public:
  // Takes bytes from the front of `input` (advancing it) until one whole
  // packet is complete and returns it, or returns nothing once `input` is
  // used up without completing one (what was taken is kept for the next
  // call). The packet is a view into `input` when it lies there whole, else
  // into the reader's buffer; valid until the next call. After an error
  // every call returns the same error.
  [[nodiscard]] Result<std::optional<Bytes>, StreamError> next(Bytes& input);

  // Octets of a partial packet held now (0 between packets).
  [[nodiscard]] std::size_t held() const { return held_; }

 private:
  std::array<std::uint8_t, kMaxPacketLength> buffer_{};
  std::size_t held_ = 0;
  // The Length of the held packet once its header is in, else 0.
  std::size_t expected_ = 0;
  bool failed_ = false;
};

}  // namespace rw::radius
