// Minting and checking the EAP State (docs/wire_formats.md "EAP State").
#include "eap/state.h"

#include <optional>

#include "base/assert.h"

namespace rw::eap {
namespace {

// The octets the tag covers: version, gateway id, slot and generation.
constexpr std::size_t kSignedLength = kStateLength - kStateTagLength;

}  // namespace

std::string_view to_string(StateError error) {
  switch (error) {
    case StateError::kWrongLength:
      return "wrong_length";
    case StateError::kUnknownVersion:
      return "unknown_version";
    case StateError::kOtherGateway:
      return "other_gateway";
    case StateError::kBadTag:
      return "bad_tag";
    case StateError::kCount:
      break;
  }
  return "unknown";
}

std::optional<std::uint32_t> state_gateway_id(Bytes state) {
  if (state.size() != kStateLength || state[0] != kStateVersion) return std::nullopt;
  ByteReader reader(state.subspan(1, 4));
  std::uint32_t id = 0;
  if (!reader.read_u32(id)) return std::nullopt;
  return id;
}

StateCodec::StateCodec(std::uint32_t gateway_id, RandomSource& random) : gateway_id_(gateway_id) {
  std::array<std::uint8_t, kKeyLength> key{};
  random.fill(key);
  hmac_sha256_set_key(&keyed_, key.size(), key.data());
  key.fill(0);
}

StateCodec::StateCodec(std::uint32_t gateway_id, Bytes key) : gateway_id_(gateway_id) {
  RW_ASSERT(key.size() == kKeyLength);
  hmac_sha256_set_key(&keyed_, key.size(), key.data());
}

void StateCodec::tag(Bytes signed_part, std::span<std::uint8_t, kStateTagLength> out) const {
  hmac_sha256_ctx context = keyed_;
  hmac_sha256_update(&context, signed_part.size(), signed_part.data());
  hmac_sha256_digest(&context, out.size(), out.data());
}

StateBytes StateCodec::mint(std::uint32_t slot, std::uint32_t generation) const {
  StateBytes state{};
  ByteWriter writer(state);
  writer.write_u8(kStateVersion);
  writer.write_u32(gateway_id_);
  writer.write_u32(slot);
  writer.write_u32(generation);
  tag(Bytes(state.data(), kSignedLength),
      std::span<std::uint8_t, kStateTagLength>(state.data() + kSignedLength, kStateTagLength));
  return state;
}

Result<StateFields, StateError> StateCodec::verify(Bytes state) const {
  if (state.size() != kStateLength) return fail(StateError::kWrongLength);
  ByteReader reader(state);
  std::uint8_t version = 0;
  StateFields fields;
  if (!reader.read_u8(version) || !reader.read_u32(fields.gateway_id) || !reader.read_u32(fields.slot) ||
      !reader.read_u32(fields.generation)) {
    return fail(StateError::kWrongLength);
  }
  if (version != kStateVersion) return fail(StateError::kUnknownVersion);
  if (fields.gateway_id != gateway_id_) return fail(StateError::kOtherGateway);
  std::array<std::uint8_t, kStateTagLength> expected{};
  tag(state.first(kSignedLength), expected);
  if (!constant_time_equal(expected, state.subspan(kSignedLength))) return fail(StateError::kBadTag);
  return fields;
}

}  // namespace rw::eap
