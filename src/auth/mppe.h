// MPPE key material for RADIUS (RFC 3079 §3, RFC 2548 §2.4): the 128-bit
// master and start keys derived from an MS-CHAPv2 exchange, and the values of
// MS-MPPE-Encryption-Policy and MS-MPPE-Encryption-Types. The keys come out in
// clear; encrypting them into MS-MPPE-Send-Key / MS-MPPE-Recv-Key (RFC 2548
// §2.4.2, salt + shared secret) is the RADIUS codec's job. Pure.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "auth/password.h"
#include "base/bytes.h"

namespace rw::auth {

inline constexpr std::size_t kMppeKeySize = 16;  // 128-bit keys only (RFC 3079 §3.1).
using MppeKey = std::array<std::uint8_t, kMppeKeySize>;

// MS-MPPE-Encryption-Policy values (RFC 2548 §2.4.4).
inline constexpr std::uint32_t kMppeEncryptionAllowed = 1;
inline constexpr std::uint32_t kMppeEncryptionRequired = 2;
// MS-MPPE-Encryption-Types bits (RFC 2548 §2.4.5).
inline constexpr std::uint32_t kMppeEncryptionTypes40Bit = 2;
inline constexpr std::uint32_t kMppeEncryptionTypes128Bit = 4;

// RFC 2759 §8.4 HashNtPasswordHash: MD4 of the NT hash.
[[nodiscard]] NtHash password_hash_hash(const NtHash& nt_hash);

// RFC 3079 §3.4 GetMasterKey: the first 16 octets of
// SHA-1(PasswordHashHash + NT-Response + "This is the MPPE Master Key").
// Requires: nt_response.size() == 24.
[[nodiscard]] MppeKey mppe_master_key(const NtHash& password_hash_hash, Bytes nt_response);

enum class MppeDirection : std::uint8_t { kSend, kReceive };
enum class MppeSide : std::uint8_t { kServer, kClient };

// RFC 3079 §3.4 GetAsymmetricStartKey for a 16-octet key. The magic string
// depends on both direction and side: the server's send key is the client's
// receive key ("On the client side, this is the receive key; on the server
// side, it is the send key.").
[[nodiscard]] MppeKey mppe_asymmetric_start_key(const MppeKey& master_key, MppeDirection direction,
                                                MppeSide side);

// RFC 3079 §3.3 GetNewKeyFromSHA for 16-octet keys: what MPPE itself does to
// turn a start key into the first session key. Not needed for RADIUS (the
// NAS does it); here for the RFC 3079 §3.5.3 vector and the documentation.
[[nodiscard]] MppeKey mppe_new_key_from_sha(const MppeKey& start_key, const MppeKey& session_key);

// The two keys a RADIUS server returns after MS-CHAPv2, from the NAS's point
// of view (the NAS is the PPP authenticator, the "server" of RFC 3079):
// send_key goes into MS-MPPE-Send-Key (NAS to peer), recv_key into
// MS-MPPE-Recv-Key (peer to NAS), both as start keys.
struct MppeKeys {
  MppeKey send_key;
  MppeKey recv_key;
};

// Derives MppeKeys from the NT hash and the peer's 24-octet NT-Response.
// Requires: nt_response.size() == 24.
[[nodiscard]] MppeKeys ms_chap2_mppe_keys(const NtHash& nt_hash, Bytes nt_response);

}  // namespace rw::auth
