// Tests for MPPE key derivation against RFC 3079 §3.5.3.
#include "auth/mppe.h"

#include <gtest/gtest.h>

#include <vector>

#include "auth/vector_file_for_test.h"

namespace rw::auth {
namespace {

using testing::load_vector;
using testing::to_vector;

NtHash nt_hash_from(const std::vector<std::uint8_t>& bytes) { return testing::to_array<kNtHashSize>(bytes); }

MppeKey key_from(const std::vector<std::uint8_t>& bytes) { return nt_hash_from(bytes); }

TEST(PasswordHashHash, MatchesRfc3079) {
  const auto vector = load_vector("rfc3079_3_5_3_128bit_keys.txt");
  EXPECT_EQ(to_vector(password_hash_hash(nt_hash_from(vector.bytes("PasswordHash")))),
            vector.bytes("PasswordHashHash"));
}

TEST(MppeMasterKey, MatchesRfc3079) {
  const auto vector = load_vector("rfc3079_3_5_3_128bit_keys.txt");
  const auto master =
      mppe_master_key(nt_hash_from(vector.bytes("PasswordHashHash")), vector.bytes("NtResponse"));
  EXPECT_EQ(to_vector(master), vector.bytes("MasterKey"));
}

TEST(MppeAsymmetricStartKey, ServerSendKeyMatchesRfc3079SendStartKey128) {
  const auto vector = load_vector("rfc3079_3_5_3_128bit_keys.txt");
  const auto send =
      mppe_asymmetric_start_key(key_from(vector.bytes("MasterKey")), MppeDirection::kSend, MppeSide::kServer);
  EXPECT_EQ(to_vector(send), vector.bytes("SendStartKey128"));
}

TEST(MppeAsymmetricStartKey, ServerSendIsClientReceiveAndNotServerReceive) {
  const auto vector = load_vector("rfc3079_3_5_3_128bit_keys.txt");
  const MppeKey master = key_from(vector.bytes("MasterKey"));
  const auto server_send = mppe_asymmetric_start_key(master, MppeDirection::kSend, MppeSide::kServer);
  EXPECT_EQ(server_send, mppe_asymmetric_start_key(master, MppeDirection::kReceive, MppeSide::kClient));
  EXPECT_NE(server_send, mppe_asymmetric_start_key(master, MppeDirection::kReceive, MppeSide::kServer));
  EXPECT_EQ(mppe_asymmetric_start_key(master, MppeDirection::kReceive, MppeSide::kServer),
            mppe_asymmetric_start_key(master, MppeDirection::kSend, MppeSide::kClient));
}

TEST(MppeNewKeyFromSha, MatchesRfc3079SendSessionKey128) {
  const auto vector = load_vector("rfc3079_3_5_3_128bit_keys.txt");
  const MppeKey start = key_from(vector.bytes("SendStartKey128"));
  EXPECT_EQ(to_vector(mppe_new_key_from_sha(start, start)), vector.bytes("SendSessionKey128"));
}

TEST(MsChap2MppeKeys, DerivesTheRfc3079KeysFromTheNtHash) {
  const auto vector = load_vector("rfc3079_3_5_3_128bit_keys.txt");
  const MppeKeys keys =
      ms_chap2_mppe_keys(nt_hash_from(vector.bytes("PasswordHash")), vector.bytes("NtResponse"));
  EXPECT_EQ(to_vector(keys.send_key), vector.bytes("SendStartKey128"));
  const MppeKey master = key_from(vector.bytes("MasterKey"));
  EXPECT_EQ(keys.recv_key, mppe_asymmetric_start_key(master, MppeDirection::kReceive, MppeSide::kServer));
}

}  // namespace
}  // namespace rw::auth
