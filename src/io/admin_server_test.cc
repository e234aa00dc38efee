// Tests of the admin API server and client over real sockets in a fresh
// folder: routes, errors, the socket file's life cycle and mode, and the
// bearer token on TCP.
#include "io/admin_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "io/admin_client.h"
#include "io/admin_metrics.h"
#include "io/file_descriptor.h"

namespace rw::io {
namespace {

class AdminServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // mkdtemp under /tmp: sun_path holds at most 107 bytes.
    char pattern[] = "/tmp/rw_admin_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    socket_path_ = admin_socket_path(dir_, "gateway");
    std::filesystem::create_directories(std::filesystem::path(socket_path_).parent_path());
    server_.route("GET", "/status", [](const AdminRequest& request) {
      nlohmann::json body{{"role", "gateway"}, {"query", request.query}};
      return AdminResponse{200, "application/json", body.dump() + "\n"};
    });
    server_.route("POST", "/echo", [](const AdminRequest& request) {
      return AdminResponse{200, "text/plain", request.body};
    });
    server_.route("GET", "/records",
                  [](const AdminRequest&) { return ndjson_response("{\"index\":1}\n{\"index\":2}\n"); });
    server_.route("GET", "/boom",
                  [](const AdminRequest&) -> AdminResponse { throw std::runtime_error("boom"); });
    add_version_route(server_, "0.1.0", "gateway");
    add_metrics_route(server_, [](PrometheusText& page) {
      page.gauge("radiusward_demo_pending_records", "Demo gauge.", 3);
    });
  }
  void TearDown() override {
    server_.stop();
    std::filesystem::remove_all(dir_);
  }

  void start(AdminServerOptions options = {}) {
    options.unix_socket_path = socket_path_;
    auto started = server_.start(std::move(options));
    ASSERT_TRUE(started) << started.error().to_string();
  }

  // Sends raw bytes on a fresh Unix connection and returns everything answered.
  std::string raw_exchange(std::string_view bytes) {
    FileDescriptor fd(::socket(AF_UNIX, SOCK_STREAM, 0));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, socket_path_.data(), socket_path_.size());
    EXPECT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    EXPECT_EQ(::send(fd.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
    return read_all(fd.get());
  }

  static std::string read_all(int fd) {
    std::string answer;
    char chunk[4096];
    for (ssize_t got; (got = ::recv(fd, chunk, sizeof(chunk), 0)) > 0;)
      answer.append(chunk, static_cast<std::size_t>(got));
    return answer;
  }

  std::string dir_;
  std::string socket_path_;
  AdminServer server_;
};

TEST_F(AdminServerTest, AnswersARegisteredRouteOverTheUnixSocket) {
  start();
  auto reply = admin_request(socket_path_, "GET", "/status?verbose=1");
  ASSERT_TRUE(reply) << reply.error().to_string();
  EXPECT_EQ(reply->status, 200);
  EXPECT_EQ(reply->content_type, "application/json");
  auto body = nlohmann::json::parse(reply->body);
  EXPECT_EQ(body["role"], "gateway");
  EXPECT_EQ(body["query"], "verbose=1");
}

TEST_F(AdminServerTest, PassesTheBodyToTheHandler) {
  start();
  auto reply = admin_request(socket_path_, "POST", "/echo", "{\"id\":4}");
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->body, "{\"id\":4}");
}

TEST_F(AdminServerTest, ServesVersionMetricsAndNdjson) {
  start();
  auto version = admin_request(socket_path_, "GET", "/version");
  ASSERT_TRUE(version);
  EXPECT_EQ(nlohmann::json::parse(version->body)["version"], "0.1.0");
  auto records = admin_request(socket_path_, "GET", "/records");
  ASSERT_TRUE(records);
  EXPECT_EQ(records->content_type, "application/x-ndjson");
  EXPECT_EQ(records->body, "{\"index\":1}\n{\"index\":2}\n");
  auto metrics = admin_request(socket_path_, "GET", "/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->content_type, kPrometheusContentType);
  EXPECT_NE(
      metrics->body.find("# TYPE radiusward_demo_pending_records gauge\nradiusward_demo_pending_records 3\n"),
      std::string::npos);
  // Version and records were answered before this request.
  EXPECT_NE(metrics->body.find("radiusward_admin_requests_total{outcome=\"answered\"} 2\n"),
            std::string::npos);
}

TEST_F(AdminServerTest, AnswersUnknownPathsAndMethodsWithErrors) {
  start();
  auto missing = admin_request(socket_path_, "GET", "/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  auto wrong_method = admin_request(socket_path_, "DELETE", "/status");
  ASSERT_TRUE(wrong_method);
  EXPECT_EQ(wrong_method->status, 405);
  auto boom = admin_request(socket_path_, "GET", "/boom");
  ASSERT_TRUE(boom);
  EXPECT_EQ(boom->status, 500);
  EXPECT_EQ(nlohmann::json::parse(boom->body)["error"], "boom");
}

TEST_F(AdminServerTest, RefusesMalformedRequestsWith400AndGoesOn) {
  start();
  std::string answer = raw_exchange("GET /status HTTP/1.1\r\nA: b\r\n folded\r\n\r\n");
  auto reply = parse_admin_reply(answer);
  ASSERT_TRUE(reply) << answer;
  EXPECT_EQ(reply->status, 400);
  EXPECT_NE(reply->body.find("obsolete_line_folding"), std::string::npos);
  EXPECT_EQ(admin_request(socket_path_, "GET", "/status")->status, 200);
  EXPECT_GE(server_.refused(), 1u);
}

TEST_F(AdminServerTest, CreatesTheSocketWithMode0660AndRemovesItAtStop) {
  start();
  struct stat status {};
  ASSERT_EQ(::stat(socket_path_.c_str(), &status), 0);
  EXPECT_TRUE(S_ISSOCK(status.st_mode));
  EXPECT_EQ(status.st_mode & 0777, 0660u);
  server_.stop();
  EXPECT_FALSE(std::filesystem::exists(socket_path_));
}

TEST_F(AdminServerTest, RemovesAStaleSocketFileAtStart) {
  {
    // A socket file whose process is gone: bound, never listening, closed.
    FileDescriptor fd(::socket(AF_UNIX, SOCK_STREAM, 0));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, socket_path_.data(), socket_path_.size());
    ASSERT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  }
  ASSERT_TRUE(std::filesystem::exists(socket_path_));
  start();
  EXPECT_EQ(admin_request(socket_path_, "GET", "/status")->status, 200);
}

TEST_F(AdminServerTest, RefusesASocketInUseAndAFileThatIsNotASocket) {
  start();
  AdminServer second;
  auto in_use = second.start(AdminServerOptions{.unix_socket_path = socket_path_});
  ASSERT_FALSE(in_use);
  EXPECT_NE(in_use.error().to_string().find("in use"), std::string::npos);
  server_.stop();
  std::ofstream(socket_path_) << "not a socket";
  auto not_socket = second.start(AdminServerOptions{.unix_socket_path = socket_path_});
  ASSERT_FALSE(not_socket);
  EXPECT_NE(not_socket.error().to_string().find("not a socket"), std::string::npos);
  EXPECT_TRUE(std::filesystem::is_regular_file(socket_path_));  // Left alone.
}

TEST_F(AdminServerTest, ClientReportsAMissingServerClearly) {
  auto reply = admin_request(socket_path_, "GET", "/status");
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().error_number, ENOENT);
  EXPECT_NE(reply.error().to_string().find(socket_path_), std::string::npos);
}

std::string tcp_exchange(std::uint16_t port, std::string_view bytes) {
  FileDescriptor fd(::socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  EXPECT_EQ(::send(fd.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
  std::string answer;
  char chunk[4096];
  for (ssize_t got; (got = ::recv(fd.get(), chunk, sizeof(chunk), 0)) > 0;)
    answer.append(chunk, static_cast<std::size_t>(got));
  return answer;
}

TEST_F(AdminServerTest, RequiresTheBearerTokenOnTcp) {
  gateway::Endpoint loopback{.address = {127, 0, 0, 1}, .is_v6 = false, .port = 0};
  start(AdminServerOptions{.tcp_listen = loopback, .bearer_token = "s3cret"});
  ASSERT_TRUE(server_.tcp_port());
  auto without = parse_admin_reply(tcp_exchange(*server_.tcp_port(), "GET /status HTTP/1.1\r\n\r\n"));
  ASSERT_TRUE(without);
  EXPECT_EQ(without->status, 401);
  auto wrong = parse_admin_reply(
      tcp_exchange(*server_.tcp_port(), "GET /status HTTP/1.1\r\nAuthorization: Bearer nope\r\n\r\n"));
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  auto right = parse_admin_reply(
      tcp_exchange(*server_.tcp_port(), "GET /status HTTP/1.1\r\nAuthorization: Bearer s3cret\r\n\r\n"));
  ASSERT_TRUE(right);
  EXPECT_EQ(right->status, 200);
  // The Unix socket needs no token: its file mode is the access control.
  EXPECT_EQ(admin_request(socket_path_, "GET", "/status")->status, 200);
}

TEST(ParseAdminReply, ReadsStatusHeadersAndBody) {
  auto reply = parse_admin_reply(
      "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, 404);
  EXPECT_EQ(reply->content_type, "application/json");
  EXPECT_EQ(reply->body, "{}");
  EXPECT_FALSE(parse_admin_reply("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabc"));  // Cut short.
  EXPECT_FALSE(parse_admin_reply("SSH-2.0-OpenSSH\r\n\r\n"));
  EXPECT_FALSE(parse_admin_reply("HTTP/1.1 2x0 OK\r\n\r\n"));
}

TEST(AdminSocketPath, FollowsTheDeploymentFolderConvention) {
  EXPECT_EQ(admin_socket_path("/run/rw", "member-2"), "/run/rw/admin/member-2.sock");
  EXPECT_EQ(admin_socket_path("/run/rw/", "gateway"), "/run/rw/admin/gateway.sock");
}

}  // namespace
}  // namespace rw::io
