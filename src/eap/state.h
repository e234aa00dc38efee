// The State attribute (RFC 2865 §5.24, RFC 3579 §2.6.1) the gateway sends in
// each Access-Challenge and the NAS returns with the next Access-Request of
// the EAP conversation: which gateway holds the conversation, its slot and
// generation there, and a truncated HMAC-SHA256 tag under a key only that
// gateway process holds, so that a NAS or anyone on the path can neither
// forge one nor point one at another conversation. The layout is drawn in
// docs/wire_formats.md "EAP State". Pure; nothing allocates.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include <nettle/hmac.h>

#include "base/bytes.h"
#include "base/random.h"
#include "base/result.h"

namespace rw::eap {

inline constexpr std::uint8_t kStateVersion = 1;
// Version (1), gateway id (4), slot (4), generation (4), tag (16).
inline constexpr std::size_t kStateTagLength = 16;
inline constexpr std::size_t kStateLength = 1 + 4 + 4 + 4 + kStateTagLength;
using StateBytes = std::array<std::uint8_t, kStateLength>;

// What a State names.
struct StateFields {
  // The gateway that holds the conversation (eap.gateway_id): a gateway that
  // receives another's State will forward it there (docs/design.md "EAP
  // across several gateways"); until then it refuses it.
  std::uint32_t gateway_id = 0;
  std::uint32_t slot = 0;        // Where the conversation sits in that gateway's table.
  std::uint32_t generation = 0;  // Which use of the slot: an ended conversation's State no longer matches.

  friend bool operator==(const StateFields&, const StateFields&) = default;
};

// Why a State is refused before its conversation is looked up.
enum class StateError : std::uint8_t {
  kWrongLength,     // Not kStateLength octets: not one of ours.
  kUnknownVersion,  // A layout this gateway does not know.
  kOtherGateway,    // Another gateway's conversation.
  kBadTag,          // Forged, altered, or minted by an earlier process of this gateway.
  kCount,
};
[[nodiscard]] std::string_view to_string(StateError error);

// The gateway id a State names, read without checking anything else; for a
// gateway that forwards another's conversation. Nothing when the State is
// not of a known length and version.
[[nodiscard]] std::optional<std::uint32_t> state_gateway_id(Bytes state);

// Mints and checks States under one HMAC-SHA256 key. Immutable after
// construction: any number of threads may use one concurrently.
class StateCodec {
 public:
  inline static constexpr std::size_t kKeyLength = 32;

  // A fresh random key for this process (`random` a CSPRNG in production):
  // a restart invalidates every State, as it ends every conversation.
  StateCodec(std::uint32_t gateway_id, RandomSource& random);
  // A given key, for tests. Requires: key.size() == kKeyLength.
  StateCodec(std::uint32_t gateway_id, Bytes key);

  [[nodiscard]] std::uint32_t gateway_id() const { return gateway_id_; }

  // The State for `slot` and `generation` of this gateway's table.
  [[nodiscard]] StateBytes mint(std::uint32_t slot, std::uint32_t generation) const;

  // Checks length, version, gateway id and tag (in constant time), in that
  // order, and returns what the State names.
  [[nodiscard]] Result<StateFields, StateError> verify(Bytes state) const;

 private:
  void tag(Bytes signed_part, std::span<std::uint8_t, kStateTagLength> out) const;

  std::uint32_t gateway_id_;
  hmac_sha256_ctx keyed_{};  // Copied for each tag; never updated in place.
};

}  // namespace rw::eap
