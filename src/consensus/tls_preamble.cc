// The raft TLS preamble and the member certificate name rule (tls_preamble.h).
#include "consensus/tls_preamble.h"

#include <charconv>

#include "base/assert.h"

namespace rw::consensus {
namespace {

constexpr std::array<std::uint8_t, 4> kMagic = {'r', 'w', 'R', 'T'};
constexpr std::string_view kMemberPrefix = "member-";

bool printable(std::uint8_t c) { return c > 0x20 && c < 0x7f; }

}  // namespace

std::string_view to_string(PreambleError error) {
  switch (error) {
    case PreambleError::kBadMagic:
      return "not a raft preamble";
    case PreambleError::kBadVersion:
      return "unsupported preamble version";
    case PreambleError::kZeroId:
      return "raft id 0";
    case PreambleError::kBadAddressLength:
      return "empty address";
    case PreambleError::kBadAddressCharacter:
      return "address with a non-printable character";
    case PreambleError::kTrailingBytes:
      return "bytes after the preamble";
  }
  return "invalid preamble";
}

std::vector<std::uint8_t> encode_preamble(const Preamble& preamble) {
  RW_ASSERT(preamble.id != 0);
  RW_ASSERT(!preamble.address.empty() && preamble.address.size() <= kMaxPreambleAddress);
  std::vector<std::uint8_t> bytes(kMagic.begin(), kMagic.end());
  bytes.push_back(kPreambleVersion);
  bytes.push_back(static_cast<std::uint8_t>(preamble.address.size()));
  for (int shift = 56; shift >= 0; shift -= 8)
    bytes.push_back(static_cast<std::uint8_t>(preamble.id >> shift));
  for (const char c : preamble.address) {
    RW_ASSERT(printable(static_cast<std::uint8_t>(c)));
    bytes.push_back(static_cast<std::uint8_t>(c));
  }
  return bytes;
}

Result<std::optional<Preamble>, PreambleError> parse_preamble(std::span<const std::uint8_t> bytes) {
  // Reject a wrong magic or version from the first bytes that show it, so a
  // stranger is not waited for until the deadline.
  for (std::size_t i = 0; i < kMagic.size() && i < bytes.size(); ++i) {
    if (bytes[i] != kMagic[i]) return fail(PreambleError::kBadMagic);
  }
  if (bytes.size() > 4 && bytes[4] != kPreambleVersion) return fail(PreambleError::kBadVersion);
  if (bytes.size() > 5 && bytes[5] == 0) return fail(PreambleError::kBadAddressLength);
  if (bytes.size() < kPreambleHeadSize) return std::optional<Preamble>{};
  const std::size_t address_size = bytes[5];
  if (bytes.size() < kPreambleHeadSize + address_size) return std::optional<Preamble>{};
  if (bytes.size() > kPreambleHeadSize + address_size) return fail(PreambleError::kTrailingBytes);
  Preamble preamble;
  for (std::size_t i = 6; i < kPreambleHeadSize; ++i) preamble.id = (preamble.id << 8) | bytes[i];
  if (preamble.id == 0) return fail(PreambleError::kZeroId);
  for (const std::uint8_t c : bytes.subspan(kPreambleHeadSize)) {
    if (!printable(c)) return fail(PreambleError::kBadAddressCharacter);
    preamble.address.push_back(static_cast<char>(c));
  }
  return std::optional<Preamble>{std::move(preamble)};
}

std::string member_common_name(std::uint64_t id) {
  RW_ASSERT(id != 0);
  return std::string(kMemberPrefix) + std::to_string(id);
}

std::optional<std::uint64_t> member_id_of_common_name(std::string_view common_name) {
  if (!common_name.starts_with(kMemberPrefix)) return std::nullopt;
  const std::string_view digits = common_name.substr(kMemberPrefix.size());
  if (digits.empty() || digits.front() < '1' || digits.front() > '9') return std::nullopt;
  std::uint64_t id = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return id;
}

}  // namespace rw::consensus
