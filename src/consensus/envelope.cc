// The entry envelope: exact payload length over libraft's 8-byte padding.
#include "consensus/envelope.h"

#include "base/assert.h"

namespace rw::consensus {

void write_envelope(Bytes payload, MutableBytes out) {
  RW_ASSERT(out.size() == envelope_size(payload.size()));
  RW_ASSERT(payload.size() <= UINT32_MAX);
  ByteWriter writer(out);
  writer.write_u32(static_cast<std::uint32_t>(payload.size()));
  writer.write_u32(kEnvelopeVersion);
  writer.write_bytes(payload);
  writer.skip(writer.remaining());  // Zero padding to a multiple of 8.
  RW_ASSERT(!writer.overflowed());
}

void seal_envelope(std::vector<std::uint8_t>& buffer) {
  RW_ASSERT(buffer.size() >= kEnvelopeHeaderSize);
  const std::size_t payload = buffer.size() - kEnvelopeHeaderSize;
  RW_ASSERT(payload <= UINT32_MAX);
  buffer.resize(envelope_size(payload), 0);
  ByteWriter writer(MutableBytes(buffer.data(), kEnvelopeHeaderSize));
  writer.write_u32(static_cast<std::uint32_t>(payload));
  writer.write_u32(kEnvelopeVersion);
  RW_ASSERT(!writer.overflowed());
}

std::optional<Bytes> open_envelope(Bytes entry) {
  ByteReader reader(entry);
  std::uint32_t length = 0;
  std::uint32_t version = 0;
  if (!reader.read_u32(length) || !reader.read_u32(version)) return std::nullopt;
  if (version != kEnvelopeVersion) return std::nullopt;
  if (reader.remaining() < length) return std::nullopt;
  // libraft may hand back the padded length (from disk) or the exact one
  // (from memory): both are accepted, nothing longer.
  if (entry.size() > envelope_size(length)) return std::nullopt;
  for (std::size_t i = kEnvelopeHeaderSize + length; i < entry.size(); ++i) {
    if (entry[i] != 0) return std::nullopt;
  }
  return entry.subspan(kEnvelopeHeaderSize, length);
}

}  // namespace rw::consensus
