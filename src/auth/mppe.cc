// MPPE key derivation from MS-CHAPv2 (RFC 3079 §3.3, §3.4).
#include "auth/mppe.h"

#include <nettle/md4.h>
#include <nettle/sha1.h>

#include <string_view>

#include "base/assert.h"

namespace rw::auth {
namespace {

constexpr std::size_t kNtResponseSize = 24;

// RFC 3079 §3.4 Magic1, Magic2, Magic3, written as the ASCII they spell.
constexpr std::string_view kMasterKeyMagic = "This is the MPPE Master Key";
constexpr std::string_view kClientSendMagic =
    "On the client side, this is the send key; on the server side, it is the receive key.";
constexpr std::string_view kServerSendMagic =
    "On the client side, this is the receive key; on the server side, it is the send key.";

// RFC 3079 §3.3 SHSpad1 (40 zero octets) and SHSpad2 (40 octets of 0xF2).
constexpr std::array<std::uint8_t, 40> kShsPad1{};
constexpr std::array<std::uint8_t, 40> kShsPad2 = [] {
  std::array<std::uint8_t, 40> pad{};
  pad.fill(0xF2);
  return pad;
}();

void sha1_update_bytes(sha1_ctx& context, Bytes bytes) { sha1_update(&context, bytes.size(), bytes.data()); }

MppeKey truncated_sha1(sha1_ctx& context) {
  std::array<std::uint8_t, SHA1_DIGEST_SIZE> digest{};
  sha1_digest(&context, digest.size(), digest.data());
  MppeKey key{};
  std::copy_n(digest.begin(), key.size(), key.begin());
  return key;
}

}  // namespace

NtHash password_hash_hash(const NtHash& nt_hash) {
  NtHash hash{};
  md4_ctx context;
  md4_init(&context);
  md4_update(&context, nt_hash.size(), nt_hash.data());
  md4_digest(&context, hash.size(), hash.data());
  return hash;
}

MppeKey mppe_master_key(const NtHash& password_hash_hash, Bytes nt_response) {
  RW_ASSERT(nt_response.size() == kNtResponseSize);
  sha1_ctx context;
  sha1_init(&context);
  sha1_update_bytes(context, password_hash_hash);
  sha1_update_bytes(context, nt_response);
  sha1_update_bytes(context, as_bytes(kMasterKeyMagic));
  return truncated_sha1(context);
}

MppeKey mppe_asymmetric_start_key(const MppeKey& master_key, MppeDirection direction, MppeSide side) {
  // RFC 3079 §3.4: Magic3 when IsSend == IsServer, Magic2 otherwise.
  const bool is_send = direction == MppeDirection::kSend;
  const bool is_server = side == MppeSide::kServer;
  const std::string_view magic = is_send == is_server ? kServerSendMagic : kClientSendMagic;
  sha1_ctx context;
  sha1_init(&context);
  sha1_update_bytes(context, master_key);
  sha1_update_bytes(context, kShsPad1);
  sha1_update_bytes(context, as_bytes(magic));
  sha1_update_bytes(context, kShsPad2);
  return truncated_sha1(context);
}

MppeKey mppe_new_key_from_sha(const MppeKey& start_key, const MppeKey& session_key) {
  sha1_ctx context;
  sha1_init(&context);
  sha1_update_bytes(context, start_key);
  sha1_update_bytes(context, kShsPad1);
  sha1_update_bytes(context, session_key);
  sha1_update_bytes(context, kShsPad2);
  return truncated_sha1(context);
}

MppeKeys ms_chap2_mppe_keys(const NtHash& nt_hash, Bytes nt_response) {
  const MppeKey master = mppe_master_key(password_hash_hash(nt_hash), nt_response);
  return MppeKeys{
      .send_key = mppe_asymmetric_start_key(master, MppeDirection::kSend, MppeSide::kServer),
      .recv_key = mppe_asymmetric_start_key(master, MppeDirection::kReceive, MppeSide::kServer),
  };
}

}  // namespace rw::auth
