// admin_server_options: the Unix socket alone, or TCP with the bearer token
// read from admin_token_file, refused when the file is missing or the token
// is short or not one word.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "config/gateway_config.h"
#include "io/admin_server.h"

namespace rw::io {
namespace {

class AdminOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("admin_options_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  config::ConfiguredPath token(const std::string& text) {
    const std::string path = (dir_ / "admin.token").string();
    std::ofstream(path) << text;
    return config::ConfiguredPath{.path = path};
  }

  std::filesystem::path dir_;
  config::HostPort listen_ = *config::parse_host_port("127.0.0.1:9464");
};

TEST_F(AdminOptionsTest, UnixSocketAloneWithoutListen) {
  auto options = admin_server_options("a.sock", std::nullopt, std::nullopt);
  ASSERT_TRUE(options.has_value());
  EXPECT_EQ(options->unix_socket_path, "a.sock");
  EXPECT_FALSE(options->tcp_listen.has_value());
}

TEST_F(AdminOptionsTest, TokenIsTheFileTextTrimmed) {
  auto options = admin_server_options("a.sock", listen_, token("  0123456789abcdef0123\n"));
  ASSERT_TRUE(options.has_value()) << options.error();
  ASSERT_TRUE(options->tcp_listen.has_value());
  EXPECT_EQ(options->tcp_listen->port, 9464);
  EXPECT_FALSE(options->tcp_listen->is_v6);
  EXPECT_EQ(options->tcp_listen->address[0], 127);
  EXPECT_EQ(options->bearer_token, "0123456789abcdef0123");
}

TEST_F(AdminOptionsTest, RefusesShortTokensTwoWordsAndMissingFiles) {
  EXPECT_FALSE(admin_server_options("a.sock", listen_, token("short\n")).has_value());
  EXPECT_FALSE(
      admin_server_options("a.sock", listen_, token("0123456789abcdef 0123456789abcdef")).has_value());
  EXPECT_FALSE(admin_server_options("a.sock", listen_, token("")).has_value());
  auto missing =
      admin_server_options("a.sock", listen_, config::ConfiguredPath{.path = (dir_ / "none").string()});
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().find("admin_token_file"), std::string::npos) << missing.error();
}

}  // namespace
}  // namespace rw::io
