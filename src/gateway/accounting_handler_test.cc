// AccountingHandler and the Status-Server handler on their own: a request
// becomes a record to submit (or a named drop), a committed one a signed
// Accounting-Response with its Proxy-States.
#include "gateway/accounting_handler.h"

#include <gtest/gtest.h>

#include "accounting/accounting_request_for_test.h"
#include "config/clients_file.h"
#include "gateway/replies.h"
#include "radius/authenticator.h"

namespace rw::gateway {
namespace {

using radius::Code;
constexpr std::string_view kClients = "client localhost {\n  ipaddr = 127.0.0.1\n  secret = testing123\n}\n";

class AccountingHandlerTest : public ::testing::Test {
 protected:
  AccountingHandlerTest() {
    auto clients = config::parse_clients(kClients, "clients.conf");
    auto users = config::UsersFile::parse("", "users", radius::Dictionary::builtin(), gateway_users_limits());
    state_ = *GatewayState::build({radius::Dictionary::builtin(), clients->clients, std::move(*users), {}});
    from_.address = {127, 0, 0, 1};
    client_ = state_->find_client(from_);
  }
  RequestContext context(const radius::Packet& packet) {
    return RequestContext{.now = Instant{1},
                          .arrival = arrival_,
                          .from = from_,
                          .packet = packet,
                          .state = *state_,
                          .client = *client_,
                          .secret = state_->secret_of(*client_)};
  }
  std::shared_ptr<const GatewayState> state_;
  const config::ClientDef* client_ = nullptr;
  Endpoint from_;
  Arrival arrival_{.listener = Listener::kAccounting};
  AccountingHandler handler_{
      std::make_shared<const accounting::KeyRecipe>(accounting::KeyRecipe::freeradius_default())};
  std::array<std::uint8_t, 4096> reply_{};
};

TEST_F(AccountingHandlerTest, ARequestBecomesItsRecordAndACommitItsSignedResponse) {
  accounting::testing::RequestSpec spec;
  spec.proxy_state = "hop";
  const accounting::testing::AccountingRequest request(spec);
  const radius::Packet packet = request.packet();
  const Action action = handler_.submit(context(packet));
  ASSERT_EQ(action.kind, Action::Kind::kSubmit);
  ASSERT_NE(action.record_key, nullptr);
  EXPECT_FALSE(action.record.empty());

  PendingRequest pending;
  pending.key.identifier = packet.identifier();
  std::copy_n(packet.authenticator().begin(), 16, pending.key.authenticator.begin());
  pending.secret = &state_->secret_of(*client_);
  copy_proxy_state_tlvs(packet, pending.proxy_states);
  const std::size_t length = AccountingHandler::respond(pending, reply_);
  ASSERT_GT(length, 0u);
  auto response = radius::Packet::parse(Bytes(reply_.data(), length));
  ASSERT_TRUE(response);
  EXPECT_EQ(response->code(), Code::kAccountingResponse);
  EXPECT_TRUE(radius::verify_response_authenticator(*response, packet.authenticator(), *pending.secret));
  ASSERT_TRUE(response->find(radius::attr::kProxyState));
  EXPECT_EQ(as_chars(response->find(radius::attr::kProxyState)->value), "hop");
}

TEST_F(AccountingHandlerTest, ARequestThatMakesNoRecordIsDroppedByName) {
  accounting::testing::RequestSpec spec;
  spec.omit_session_id = true;
  const accounting::testing::AccountingRequest request(spec);
  const Action action = handler_.submit(context(request.packet()));
  ASSERT_EQ(action.kind, Action::Kind::kDrop);
  EXPECT_EQ(action.drop, DropReason::kAccountingInvalid);
}

TEST_F(AccountingHandlerTest, StatusServerIsAnsweredOnEachListener) {
  const accounting::testing::AccountingRequest request(accounting::testing::RequestSpec{});
  const Action action = answer_status_server(context(request.packet()), reply_);
  ASSERT_EQ(action.kind, Action::Kind::kReply);
  EXPECT_EQ(static_cast<Code>(reply_[0]), Code::kAccountingResponse);
}

}  // namespace
}  // namespace rw::gateway
