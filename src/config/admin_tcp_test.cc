// admin_listen and admin_token_file in both configs: parsed together, and
// each refused without the other (and admin_listen without admin_socket).
#include <gtest/gtest.h>

#include "config/gateway_config.h"
#include "config/member_config.h"

namespace rw::config {
namespace {

constexpr std::string_view kGateway = "users_file: users\nclients_file: clients.conf\n";
constexpr std::string_view kMember =
    "id: 1\ndata_dir: d\nraft_address: 127.0.0.1:7201\nsubmission_listen: 127.0.0.1:7301\n"
    "members: [{id: 1, raft: 127.0.0.1:7201, submission: 127.0.0.1:7301}]\ninsecure_plaintext_cluster: "
    "true\n";

bool has_error(const ConfigErrors& errors, std::string_view text) {
  for (const ConfigError& error : errors) {
    if (error.message.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(AdminTcp, GatewayParsesListenAndTokenFile) {
  auto config = parse_gateway_config(
      std::string(kGateway) + "admin_socket: a.sock\nadmin_listen: '[::1]:9464'\nadmin_token_file: t\n",
      "/etc/rw/gateway.yaml");
  ASSERT_TRUE(config.has_value()) << config.error().front().to_string();
  ASSERT_TRUE(config->admin_listen.has_value());
  EXPECT_TRUE(config->admin_listen->is_v6);
  EXPECT_EQ(config->admin_listen->port, 9464);
  EXPECT_EQ(config->admin_token_file->path, "/etc/rw/t");
}

TEST(AdminTcp, GatewayRefusesOneWithoutTheOther) {
  auto no_token = parse_gateway_config(
      std::string(kGateway) + "admin_socket: a\nadmin_listen: 127.0.0.1:9464\n", "g.yaml");
  ASSERT_FALSE(no_token.has_value());
  EXPECT_TRUE(has_error(no_token.error(), "admin_listen needs admin_token_file"));
  auto no_listen =
      parse_gateway_config(std::string(kGateway) + "admin_socket: a\nadmin_token_file: t\n", "g.yaml");
  ASSERT_FALSE(no_listen.has_value());
  EXPECT_TRUE(has_error(no_listen.error(), "admin_token_file is set but admin_listen is not"));
  auto no_socket = parse_gateway_config(
      std::string(kGateway) + "admin_listen: 127.0.0.1:9464\nadmin_token_file: t\n", "g.yaml");
  ASSERT_FALSE(no_socket.has_value());
  EXPECT_TRUE(has_error(no_socket.error(), "admin_listen needs admin_socket"));
}

TEST(AdminTcp, MemberParsesAndRefusesAsTheGateway) {
  auto config = parse_member_config(
      std::string(kMember) + "admin_socket: a.sock\nadmin_listen: 127.0.0.1:9465\nadmin_token_file: t\n",
      "/etc/rw/member.yaml");
  ASSERT_TRUE(config.has_value()) << config.error().front().to_string();
  EXPECT_EQ(config->admin_listen->text, "127.0.0.1:9465");
  EXPECT_EQ(config->admin_token_file->path, "/etc/rw/t");
  auto no_token =
      parse_member_config(std::string(kMember) + "admin_socket: a\nadmin_listen: 127.0.0.1:9465\n", "m.yaml");
  ASSERT_FALSE(no_token.has_value());
  EXPECT_TRUE(has_error(no_token.error(), "admin_listen needs admin_token_file"));
}

}  // namespace
}  // namespace rw::config
