// EAP-MD5 (RFC 3748 §5.4): CHAP (RFC 1994 §4.1) inside EAP. The server sends
// a random 16-octet challenge; the peer answers MD5(Identifier || password ||
// challenge), which the server checks against the known good
// Cleartext-Password the users policy gives (the kCredential step of
// method.h). No mutual authentication and no keys: the gateway offers it
// only to wired NASes and only when eap.md5 is on (docs/authentication.md
// "EAP"). Pure: randomness from a RandomSource.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/random.h"
#include "eap/method.h"

namespace rw::eap {

// RFC 1994 §4.1: the Value of a Response is an MD5 digest.
inline constexpr std::size_t kMd5ValueLength = 16;
// The challenge the server sends: as long as the digest (RFC 1994 §2
// asks for an unpredictable one; 16 octets, as hostapd and FreeRADIUS send).
inline constexpr std::size_t kMd5ChallengeLength = 16;

// The Type-Data of an MD5-Challenge Request or Response (RFC 1994 §4.1):
// Value-Size, Value, and the optional Name.
[[nodiscard]] std::vector<std::uint8_t> md5_type_data(Bytes value, std::string_view name = {});

// The Value a peer answers `challenge` with (RFC 1994 §4.1): for tests and
// the load generator, which play the peer.
[[nodiscard]] std::array<std::uint8_t, kMd5ValueLength> md5_response_value(std::uint8_t identifier,
                                                                           std::string_view password,
                                                                           Bytes challenge);

class Md5Method final : public Method {
 public:
  // Requires: `random` outlives the method (a CSPRNG in production).
  Md5Method(std::string_view identity, RandomSource& random);

  [[nodiscard]] Type type() const override { return Type::kMd5Challenge; }
  // The MD5-Challenge Request: a fresh random challenge.
  [[nodiscard]] MethodStep start() override;
  // Keeps the peer's Value and asks for the password (kCredential); fails a
  // Response whose Value is not 16 octets.
  [[nodiscard]] MethodStep on_response(Bytes type_data) override;
  [[nodiscard]] std::string_view decided_identity() const override { return identity_; }
  void on_identifier(std::uint8_t identifier) override { identifier_ = identifier; }
  // Compares in constant time. Needs a Cleartext-Password: a hash of the
  // password cannot answer a challenge (auth::AuthError::kChapNeedsCleartext).
  [[nodiscard]] MethodStep on_credential(const auth::Credential* known_good) override;

 private:
  std::string identity_;
  RandomSource& random_;
  std::uint8_t identifier_ = 0;
  std::array<std::uint8_t, kMd5ChallengeLength> challenge_{};
  std::array<std::uint8_t, kMd5ValueLength> value_{};
  bool answered_ = false;
};

}  // namespace rw::eap
