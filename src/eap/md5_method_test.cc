#include "eap/md5_method.h"

#include <gtest/gtest.h>

#include "auth/password.h"
#include "auth/vector_file_for_test.h"
#include "eap/packet.h"

namespace rw::eap {
namespace {

using auth::testing::load_vectors;

// Replays a fixed challenge: the vectors' challenges are not random.
class FixedRandom final : public RandomSource {
 public:
  explicit FixedRandom(std::vector<std::uint8_t> octets) : octets_(std::move(octets)) {}
  void fill(MutableBytes out) override {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = octets_[i % octets_.size()];
  }

 private:
  std::vector<std::uint8_t> octets_;
};

TEST(EapMd5, MatchesTheVectors) {
  for (const auto& record : load_vectors("eap_md5.txt")) {
    FixedRandom random(record.bytes("Challenge"));
    Md5Method method("alice", random);
    const MethodStep start = method.start();
    ASSERT_EQ(start.kind, MethodStep::Kind::kRequest);
    const std::uint8_t identifier = record.octet("Identifier");
    std::array<std::uint8_t, 64> buffer{};
    const Bytes request = write(Packet{.code = Code::kRequest,
                                       .identifier = identifier,
                                       .type = static_cast<std::uint8_t>(Type::kMd5Challenge),
                                       .type_data = start.type_data},
                                buffer);
    EXPECT_EQ(std::vector<std::uint8_t>(request.begin(), request.end()), record.bytes("Request"));
    method.on_identifier(identifier);

    const auto value = md5_response_value(identifier, record.text("Password"), record.bytes("Challenge"));
    EXPECT_EQ(std::vector<std::uint8_t>(value.begin(), value.end()), record.bytes("Value"));

    const auto wire = record.bytes("Response");
    auto response = parse(wire);
    ASSERT_TRUE(response.has_value());
    ASSERT_EQ(method.on_response(response->type_data).kind, MethodStep::Kind::kCredential);
    const auth::Credential password = auth::Credential::cleartext(record.text("Password"));
    EXPECT_EQ(method.on_credential(&password).kind, MethodStep::Kind::kSuccess);
  }
}

class EapMd5Test : public ::testing::Test {
 protected:
  EapMd5Test() : random_(3), method_("alice", random_) {
    const MethodStep start = method_.start();
    challenge_.assign(start.type_data.begin() + 1, start.type_data.end());
    method_.on_identifier(kIdentifier);
  }
  MethodStep answer(std::string_view password) {
    const auto value = md5_response_value(kIdentifier, password, challenge_);
    return method_.on_response(md5_type_data(value, "peer-name"));
  }

  static constexpr std::uint8_t kIdentifier = 77;
  SeededRandom random_;
  Md5Method method_;
  std::vector<std::uint8_t> challenge_;
};

TEST_F(EapMd5Test, SendsASixteenOctetRandomChallenge) {
  EXPECT_EQ(challenge_.size(), kMd5ChallengeLength);
  SeededRandom other(4);
  Md5Method second("alice", other);
  const MethodStep start = second.start();
  EXPECT_NE(std::vector<std::uint8_t>(start.type_data.begin() + 1, start.type_data.end()), challenge_);
}

TEST_F(EapMd5Test, AcceptsTheRightPassword) {
  ASSERT_EQ(answer("wonderland").kind, MethodStep::Kind::kCredential);
  const auth::Credential password = auth::Credential::cleartext("wonderland");
  const MethodStep step = method_.on_credential(&password);
  EXPECT_EQ(step.kind, MethodStep::Kind::kSuccess);
  EXPECT_FALSE(step.msk.has_value());
  EXPECT_EQ(method_.decided_identity(), "alice");
}

TEST_F(EapMd5Test, RefusesAWrongPassword) {
  ASSERT_EQ(answer("looking-glass").kind, MethodStep::Kind::kCredential);
  const auth::Credential password = auth::Credential::cleartext("wonderland");
  const MethodStep step = method_.on_credential(&password);
  EXPECT_EQ(step.kind, MethodStep::Kind::kFailure);
  EXPECT_EQ(step.auth_error, auth::AuthError::kWrongPassword);
}

TEST_F(EapMd5Test, RefusesTheAnswerToAnotherIdentifier) {
  const auto value = md5_response_value(kIdentifier + 1, "wonderland", challenge_);
  ASSERT_EQ(method_.on_response(md5_type_data(value)).kind, MethodStep::Kind::kCredential);
  const auth::Credential password = auth::Credential::cleartext("wonderland");
  EXPECT_EQ(method_.on_credential(&password).auth_error, auth::AuthError::kWrongPassword);
}

TEST_F(EapMd5Test, NeedsACleartextPassword) {
  ASSERT_EQ(answer("clientPass").kind, MethodStep::Kind::kCredential);
  const auth::Credential hash = auth::Credential::nt_hash(*auth::nt_password_hash("clientPass"));
  EXPECT_EQ(method_.on_credential(&hash).auth_error, auth::AuthError::kChapNeedsCleartext);
  const MethodStep none = method_.on_credential(nullptr);
  EXPECT_EQ(none.kind, MethodStep::Kind::kFailure);
  EXPECT_FALSE(none.auth_error.has_value());
}

TEST_F(EapMd5Test, RefusesAnEmptyStoredPassword) {
  ASSERT_EQ(answer("").kind, MethodStep::Kind::kCredential);
  const auth::Credential empty = auth::Credential::cleartext("");
  EXPECT_EQ(method_.on_credential(&empty).auth_error, auth::AuthError::kEmptyPassword);
}

TEST_F(EapMd5Test, RefusesMalformedResponses) {
  const std::vector<std::vector<std::uint8_t>> malformed = {
      {},
      {15, 1, 2, 3},                                                    // Value-Size not 16.
      {16, 1, 2, 3},                                                    // Shorter than Value-Size.
      {17, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17},  // Value-Size 17.
  };
  for (const auto& data : malformed) {
    Md5Method method("alice", random_);
    (void)method.start();
    const MethodStep step = method.on_response(data);
    EXPECT_EQ(step.kind, MethodStep::Kind::kFailure);
    EXPECT_FALSE(step.reason.empty());
  }
}

}  // namespace
}  // namespace rw::eap
