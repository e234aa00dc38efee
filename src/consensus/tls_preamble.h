// The identity rules of the raft TLS transport: the certificate common name a
// member presents (`member-<id>`), and the preamble a connecting member sends
// first inside TLS with the acceptance it gets back (docs/wire_formats.md,
// "Raft TLS preamble"). Pure: bytes in, values out.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace rw::consensus {

// "rwRT", version 1, address length (u8), raft id (u64 big-endian).
inline constexpr std::size_t kPreambleHeadSize = 14;
inline constexpr std::size_t kMaxPreambleAddress = 255;
inline constexpr std::size_t kMaxPreambleSize = kPreambleHeadSize + kMaxPreambleAddress;
inline constexpr std::uint8_t kPreambleVersion = 1;
// The accepting member's answer once identity and preamble are checked; a
// refusal is a closed connection without an answer.
inline constexpr std::array<std::uint8_t, 5> kPreambleAccepted = {'r', 'w', 'O', 'K', kPreambleVersion};

struct Preamble {
  std::uint64_t id = 0;
  std::string address;  // The sender's raft address, as libraft knows it.
};

enum class PreambleError {
  kBadMagic,
  kBadVersion,
  kZeroId,
  kBadAddressLength,     // 0: an address is required.
  kBadAddressCharacter,  // Only printable ASCII without spaces.
  kTrailingBytes,        // Bytes past the preamble before the acceptance.
};
[[nodiscard]] std::string_view to_string(PreambleError error);

// `preamble.address` must be 1..255 printable ASCII characters and id > 0.
[[nodiscard]] std::vector<std::uint8_t> encode_preamble(const Preamble& preamble);

// Parses what has arrived so far: nullopt while more bytes are needed (at most
// kMaxPreambleSize in all), the preamble once complete, an error as soon as
// the bytes cannot be a preamble.
[[nodiscard]] Result<std::optional<Preamble>, PreambleError> parse_preamble(
    std::span<const std::uint8_t> bytes);

// "member-<id>": decimal, no sign, no leading zero, id > 0.
[[nodiscard]] std::string member_common_name(std::uint64_t id);
// The id of a member's certificate common name, or nullopt for anything else
// (a gateway's `gateway-<name>`, `member-0`, `member-02`, trailing text).
[[nodiscard]] std::optional<std::uint64_t> member_id_of_common_name(std::string_view common_name);

}  // namespace rw::consensus
