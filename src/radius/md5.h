// MD5 and HMAC-MD5 (RFC 1321, RFC 2104) for the RADIUS authenticators and
// attribute hiding. Backed by OpenSSL's low-level MD5, the fastest of the
// candidates measured (docs/protocol.md "MD5"). Nothing here allocates.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "base/bytes.h"

namespace rw::radius {

inline constexpr std::size_t kMd5Length = 16;
using Md5Digest = std::array<std::uint8_t, kMd5Length>;

// An incremental MD5 computation. A plain value: copying it forks the
// computation, which is how HMAC states and secret prefixes are reused.
class Md5 {
 public:
  Md5();

  void update(Bytes bytes);
  // Writes the digest. The object must not be updated afterwards.
  void finish(std::span<std::uint8_t, kMd5Length> out);
  [[nodiscard]] Md5Digest finish();

  // MD5 of one contiguous buffer.
  [[nodiscard]] static Md5Digest of(Bytes bytes);

 private:
  // Holds OpenSSL's MD5_CTX (92 bytes) without exposing its header here.
  alignas(8) std::array<unsigned char, 96> state_;
};

// HMAC-MD5 with a key fixed at construction. The inner and outer states
// after the key blocks are precomputed, so each message costs the MD5 of
// the message plus one block, not two extra key blocks.
class HmacMd5Key {
 public:
  // Keys longer than 64 octets are first hashed (RFC 2104 §2).
  explicit HmacMd5Key(Bytes key);

  // Starts a MAC computation: update the returned state with the message,
  // then pass it to finish().
  [[nodiscard]] Md5 begin() const { return inner_; }
  void finish(Md5 inner, std::span<std::uint8_t, kMd5Length> out) const;

  // HMAC-MD5 of one contiguous message.
  [[nodiscard]] Md5Digest mac(Bytes message) const;

 private:
  Md5 inner_;
  Md5 outer_;
};

}  // namespace rw::radius
