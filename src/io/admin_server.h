// The admin API's HTTP/1.1 server (docs/admin_api.md): a Unix socket for
// local tools such as `radiusward ctl`, and optionally TCP with a bearer
// token. One request per connection, served one at a time on the server's
// own thread; the routes are registered by the process that runs it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "base/result.h"
#include "base/time.h"
#include "config/gateway_config.h"
#include "gateway/datagram.h"
#include "io/file_descriptor.h"
#include "io/http_request.h"
#include "io/system_error.h"

namespace rw::io {

// What a handler gets: copies, so that it owns nothing of the server's buffers.
struct AdminRequest {
  std::string method{};
  std::string path{};   // "/records"
  std::string query{};  // "limit=10", without '?'
  std::string body{};
};

struct AdminResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body{};
};

// Runs on the admin thread. It must only read state that other threads
// write under their own synchronisation (atomics, a mutex, a snapshot
// handed over): the server takes no lock for it. An exception it throws
// becomes a 500 answer; the server goes on.
using AdminHandler = std::function<AdminResponse(const AdminRequest&)>;

struct AdminServerOptions {
  // The Unix socket to create. A stale socket file there is removed first;
  // a live one (something accepts connections on it) is an error, as is a
  // file that is not a socket. Created with mode 0660, removed by stop().
  std::string unix_socket_path{};
  // Optional TCP listener; every request on it must carry
  // "Authorization: Bearer <bearer_token>" (compared in constant time).
  // Port 0 asks the kernel for one (see tcp_port()).
  std::optional<gateway::Endpoint> tcp_listen{};
  std::string bearer_token{};
  // A client must send its request and take the answer within this time.
  Duration io_timeout = Duration::seconds(5);
};

// Thread-compatible: route() before start(), stop() from the thread that started it.
class AdminServer {
 public:
  AdminServer() = default;
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;
  // Stops the server if it runs.
  ~AdminServer();

  // Registers `handler` for exact `method` and `path` (no pattern matching).
  // Requires: start() not yet called.
  void route(std::string method, std::string path, AdminHandler handler);

  // Binds the sockets and starts the thread. Errors name the call and path.
  // Requires: tcp_listen implies a non-empty bearer_token.
  [[nodiscard]] Result<void, SystemError> start(AdminServerOptions options);

  // Stops the thread, closes the sockets and removes the socket file.
  void stop();

  // The bound TCP port, when a TCP listener runs.
  [[nodiscard]] std::optional<std::uint16_t> tcp_port() const { return tcp_port_; }

  // Requests answered by a route (any status), and connections refused
  // (malformed request, timeout, closed early); readable from any thread.
  [[nodiscard]] std::uint64_t served() const { return served_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }

  // Answers one parsed request: the bearer token when it came `over_tcp`,
  // then the route and its handler. Exposed for tests.
  [[nodiscard]] AdminResponse respond(const HttpRequest& request, bool over_tcp) const;

 private:
  void run();
  void serve(FileDescriptor connection, bool over_tcp);
  // Reads and answers one request; no answer when the client went away or was too slow.
  [[nodiscard]] std::optional<AdminResponse> read_request(int fd, bool over_tcp);

  std::map<std::pair<std::string, std::string>, AdminHandler> routes_;
  AdminServerOptions options_{};
  FileDescriptor unix_listener_{};
  FileDescriptor tcp_listener_{};
  FileDescriptor wake_read_{};
  FileDescriptor wake_write_{};
  std::optional<std::uint16_t> tcp_port_{};
  std::thread thread_{};
  std::atomic<std::uint64_t> served_{0};
  std::atomic<std::uint64_t> refused_{0};
};

// The shortest bearer token accepted from admin_token_file: a guessable
// token on a TCP port is no access control.
inline constexpr std::size_t kAdminTokenBytesMin = 16;

// The options of the admin API a config names: its Unix socket `socket`
// and, with `listen`, TCP with the bearer token read from `token_file` (the
// file's text without surrounding whitespace; at least kAdminTokenBytesMin
// bytes, no whitespace inside). Errors name the file.
[[nodiscard]] Result<AdminServerOptions, std::string> admin_server_options(
    std::string socket, const std::optional<config::HostPort>& listen,
    const std::optional<config::ConfiguredPath>& token_file);

// A JSON error body: {"error": "<message>"}.
[[nodiscard]] AdminResponse admin_error(int status, std::string_view message);

// The reason phrase of an HTTP status (RFC 9110 §15), "Unknown" otherwise.
[[nodiscard]] std::string_view http_reason(int status);

}  // namespace rw::io
