// The envelope around every command entry this node appends. libraft 0.15.0
// stores entry payloads padded to 8 bytes and hands the padded length back
// when it reloads the log from disk, so the exact length has to travel in
// the entry. Layout (docs/consensus.md, "Entry envelope"):
//   u32 big-endian payload length | u32 big-endian version (1) | payload | 0-7 zero bytes
// Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "base/bytes.h"

namespace rw::consensus {

inline constexpr std::size_t kEnvelopeHeaderSize = 8;
inline constexpr std::uint32_t kEnvelopeVersion = 1;

// Bytes an envelope of `payload_size` occupies: a multiple of 8.
[[nodiscard]] constexpr std::size_t envelope_size(std::size_t payload_size) {
  return (kEnvelopeHeaderSize + payload_size + 7) / 8 * 8;
}

// Writes the envelope of `payload` into `out`, which must hold
// envelope_size(payload.size()) bytes.
void write_envelope(Bytes payload, MutableBytes out);

// Seals an envelope written in place: `buffer` holds kEnvelopeHeaderSize
// placeholder bytes followed by the payload; fills the header and appends
// the zero padding.
void seal_envelope(std::vector<std::uint8_t>& buffer);

// The payload inside `entry`, or nullopt when the bytes are not an envelope
// this version wrote (wrong version, length past the end, or padding that is
// too long or not zero).
[[nodiscard]] std::optional<Bytes> open_envelope(Bytes entry);

}  // namespace rw::consensus
