// The floor server's handler: a signed Access-Accept for a correct
// Access-Request, nothing for anything else.
#include "gateway/floor_handler.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "base/random.h"
#include "radius/packet.h"

namespace rw::gateway {
namespace {

using radius::Code;
using radius::attr::kUserName;

class FloorHandlerTest : public ::testing::Test {
 protected:
  FloorHandlerTest()
      : random_(7), secret_(*radius::SharedSecret::create(as_bytes("testing123"))), handler_(secret_) {}

  // A request of `code` from a client with `secret`, with or without a
  // Message-Authenticator.
  Bytes request(Code code, const radius::SharedSecret& secret, bool message_authenticator = true) {
    authenticator_ = radius::make_request_authenticator(random_);
    radius::PacketBuilder builder(request_buffer_);
    builder.begin(code, 42, code == Code::kAccessRequest ? Bytes(authenticator_) : Bytes{});
    if (message_authenticator) builder.reserve_message_authenticator();
    builder.add(kUserName, as_bytes("alice"));
    auto wire = builder.finish();
    radius::sign_request(*wire, secret);
    return *wire;
  }
  std::size_t answer(Bytes datagram) {
    return handler_.on_datagram(Instant{}, Arrival{}, Endpoint{}, datagram, reply_);
  }

  SeededRandom random_;
  radius::SharedSecret secret_;
  FloorHandler handler_;
  radius::Authenticator authenticator_{};
  std::array<std::uint8_t, 4096> request_buffer_{};
  std::array<std::uint8_t, 4096> reply_{};
};

TEST_F(FloorHandlerTest, AnswersACorrectAccessRequestWithASignedAccept) {
  const std::size_t length = answer(request(Code::kAccessRequest, secret_));
  ASSERT_GT(length, 0U);
  auto accept = radius::Packet::parse(Bytes(reply_.data(), length));
  ASSERT_TRUE(accept);
  EXPECT_EQ(accept->code(), Code::kAccessAccept);
  EXPECT_EQ(accept->identifier(), 42);
  EXPECT_TRUE(radius::verify_response_authenticator(*accept, authenticator_, secret_));
  EXPECT_EQ(radius::check_response_message_authenticator(*accept, authenticator_, secret_),
            radius::MessageAuthenticatorStatus::kValid);
}

TEST_F(FloorHandlerTest, DropsWhatACorrectServerMustNotAnswer) {
  auto other = *radius::SharedSecret::create(as_bytes("not-the-secret"));
  EXPECT_EQ(answer(request(Code::kAccessRequest, other)), 0U) << "wrong Message-Authenticator";
  EXPECT_EQ(answer(request(Code::kAccessRequest, secret_, false)), 0U) << "no Message-Authenticator";
  EXPECT_EQ(answer(request(Code::kAccountingRequest, secret_)), 0U) << "not an Access-Request";
  const std::vector<std::uint8_t> runt{1, 42, 0, 20};
  EXPECT_EQ(answer(runt), 0U) << "shorter than its header";
}

}  // namespace
}  // namespace rw::gateway
