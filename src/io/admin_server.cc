// The admin API server (admin_server.h): poll() over the listeners and a
// wake-up pipe, one connection at a time, Connection: close.
#include "io/admin_server.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <exception>

#include "base/assert.h"
#include "base/bytes.h"
#include "io/clock.h"
#include "io/socket_address.h"
#include "io/text_file.h"

namespace rw::io {
namespace {

// Largest request the server reads: a full head and a full body.
constexpr std::size_t kRequestBytesMax = kHttpHeadBytesMax + kHttpBodyBytesMax;

Result<sockaddr_un, SystemError> unix_address(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(address.sun_path)) {
    return fail(SystemError{"admin socket path " + path + " (empty or longer than 107 bytes)", ENAMETOOLONG});
  }
  std::memcpy(address.sun_path, path.data(), path.size());
  return address;
}

// A socket file left by a process that died is removed; a live one (it
// accepts a connection) or a file that is not a socket is left alone.
Result<void, SystemError> remove_stale_socket(const std::string& path, const sockaddr_un& address) {
  struct stat status {};
  if (::lstat(path.c_str(), &status) != 0) {
    if (errno == ENOENT) return {};
    return fail(last_system_error("lstat " + path));
  }
  if (!S_ISSOCK(status.st_mode))
    return fail(SystemError{"admin socket " + path + " is not a socket", EEXIST});
  FileDescriptor probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!probe.valid()) return fail(last_system_error("socket AF_UNIX"));
  if (::connect(probe.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0) {
    return fail(SystemError{"admin socket " + path + " is in use by a running process", EADDRINUSE});
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return fail(last_system_error("unlink " + path));
  return {};
}

Result<FileDescriptor, SystemError> listen_unix(const std::string& path) {
  auto address = unix_address(path);
  if (!address) return fail(address.error());
  if (auto removed = remove_stale_socket(path, *address); !removed) return fail(removed.error());
  FileDescriptor fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return fail(last_system_error("socket AF_UNIX"));
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&*address), sizeof(*address)) != 0) {
    return fail(last_system_error("bind " + path));
  }
  // Before listen(): nobody can connect to a socket that does not listen
  // yet, so the wider mode bind() gave (umask) is never usable.
  std::optional<SystemError> error;
  if (::chmod(path.c_str(), 0660) != 0) {
    error = last_system_error("chmod 0660 " + path);
  } else if (::listen(fd.get(), 16) != 0) {
    error = last_system_error("listen " + path);
  }
  if (error) {
    (void)::unlink(path.c_str());
    return fail(std::move(*error));
  }
  return fd;
}

Result<FileDescriptor, SystemError> listen_tcp(const gateway::Endpoint& endpoint, std::uint16_t& port) {
  sockaddr_storage storage{};
  const socklen_t length = to_sockaddr(endpoint, storage);
  FileDescriptor fd(::socket(storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  const std::string where = "admin " + to_string(endpoint);
  if (!fd.valid()) return fail(last_system_error("socket " + where));
  int on = 1;
  (void)::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&storage), length) != 0) {
    return fail(last_system_error("bind " + where));
  }
  if (::listen(fd.get(), 16) != 0) return fail(last_system_error("listen " + where));
  sockaddr_storage bound{};
  socklen_t bound_length = sizeof(bound);
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &bound_length) != 0) {
    return fail(last_system_error("getsockname " + where));
  }
  port = to_endpoint(bound).port;
  return fd;
}

std::string serialize(const AdminResponse& response) {
  std::string out =
      "HTTP/1.1 " + std::to_string(response.status) + " " + std::string(http_reason(response.status));
  out += "\r\nContent-Type: " + response.content_type;
  out += "\r\nContent-Length: " + std::to_string(response.body.size());
  out += "\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n";
  out += response.body;
  return out;
}

// Waits for `events` on `fd` or the wake-up pipe until `deadline`. False on
// timeout, stop or error.
bool wait_for(int fd, short events, int wake_fd, Instant deadline) {
  for (;;) {
    const std::int64_t left_ms = (deadline - monotonic_now()).to_ms();
    if (left_ms <= 0) return false;
    pollfd fds[2] = {{fd, events, 0}, {wake_fd, POLLIN, 0}};
    const int ready = ::poll(fds, 2, static_cast<int>(std::min<std::int64_t>(left_ms, 1000)));
    if (ready < 0 && errno != EINTR) return false;
    if (ready <= 0) continue;
    if (fds[1].revents != 0) return false;
    return true;
  }
}

}  // namespace

std::string_view http_reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 409:
      return "Conflict";
    case 422:
      return "Unprocessable Content";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Unknown";
  }
}

AdminResponse admin_error(int status, std::string_view message) {
  nlohmann::json body{{"error", std::string(message)}};
  return AdminResponse{status, "application/json",
                       body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"};
}

AdminServer::~AdminServer() { stop(); }

void AdminServer::route(std::string method, std::string path, AdminHandler handler) {
  RW_ASSERT(!thread_.joinable());
  routes_[{std::move(method), std::move(path)}] = std::move(handler);
}

Result<void, SystemError> AdminServer::start(AdminServerOptions options) {
  RW_ASSERT(!thread_.joinable());
  RW_ASSERT(!options.tcp_listen || !options.bearer_token.empty());
  options_ = std::move(options);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) return fail(last_system_error("pipe2"));
  wake_read_ = FileDescriptor(pipe_fds[0]);
  wake_write_ = FileDescriptor(pipe_fds[1]);
  auto unix_listener = listen_unix(options_.unix_socket_path);
  if (!unix_listener) return fail(unix_listener.error());
  unix_listener_ = std::move(*unix_listener);
  if (options_.tcp_listen) {
    std::uint16_t port = 0;
    auto tcp_listener = listen_tcp(*options_.tcp_listen, port);
    if (!tcp_listener) {
      unix_listener_.reset();
      (void)::unlink(options_.unix_socket_path.c_str());
      return fail(tcp_listener.error());
    }
    tcp_listener_ = std::move(*tcp_listener);
    tcp_port_ = port;
  }
  thread_ = std::thread([this] { run(); });
  return {};
}

void AdminServer::stop() {
  if (!thread_.joinable()) return;
  const char byte = 1;
  (void)!::write(wake_write_.get(), &byte, 1);
  thread_.join();
  unix_listener_.reset();
  tcp_listener_.reset();
  (void)::unlink(options_.unix_socket_path.c_str());
  tcp_port_.reset();
}

void AdminServer::run() {
  pthread_setname_np(pthread_self(), "rw-admin");  // top -H, perf (docs/architecture.md "Threads").
  for (;;) {
    pollfd fds[3] = {{wake_read_.get(), POLLIN, 0}, {unix_listener_.get(), POLLIN, 0}, {-1, POLLIN, 0}};
    if (tcp_listener_.valid()) fds[2].fd = tcp_listener_.get();
    if (::poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      die(last_system_error("poll admin"));
    }
    if (fds[0].revents != 0) return;
    for (int i = 1; i <= 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & POLLIN) == 0) continue;
      FileDescriptor connection(::accept4(fds[i].fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
      // EAGAIN, ECONNABORTED, EMFILE: nothing to serve now; poll again.
      if (connection.valid()) serve(std::move(connection), i == 2);
    }
  }
}

AdminResponse AdminServer::respond(const HttpRequest& request, bool over_tcp) const {
  if (over_tcp) {
    const std::string expected = "Bearer " + options_.bearer_token;
    std::string_view given = request.header("Authorization").value_or("");
    if (!constant_time_equal(as_bytes(given), as_bytes(expected))) {
      return admin_error(401, "a bearer token is required on TCP");
    }
  }
  auto found = routes_.find({std::string(request.method), std::string(request.path)});
  if (found == routes_.end()) {
    for (const auto& [key, handler] : routes_) {
      if (key.second == request.path) return admin_error(405, "method not allowed");
    }
    return admin_error(404, "no such endpoint: " + std::string(request.path));
  }
  AdminRequest copy{std::string(request.method), std::string(request.path), std::string(request.query),
                    std::string(request.body)};
  try {
    return found->second(copy);
  } catch (const std::exception& error) {
    return admin_error(500, error.what());
  }
}

std::optional<AdminResponse> AdminServer::read_request(int fd, bool over_tcp) {
  std::vector<std::uint8_t> buffer(kRequestBytesMax);
  std::size_t received = 0;
  const Instant deadline = monotonic_now() + options_.io_timeout;
  for (;;) {
    if (!wait_for(fd, POLLIN, wake_read_.get(), deadline)) return std::nullopt;
    const ssize_t got = ::recv(fd, buffer.data() + received, buffer.size() - received, 0);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (got <= 0) return std::nullopt;  // Closed before a whole request.
    received += static_cast<std::size_t>(got);
    auto parsed = parse_http_request(Bytes(buffer.data(), received));
    if (!parsed) return admin_error(400, to_string(parsed.error()));
    if (*parsed) {
      AdminResponse response = respond((*parsed)->request, over_tcp);
      served_.fetch_add(1, std::memory_order_relaxed);
      return response;
    }
    // The parser bounds head and body, so a full buffer holds a whole request;
    // this is only a guard.
    if (received == buffer.size()) return admin_error(400, "request too large");
  }
}

void AdminServer::serve(FileDescriptor connection, bool over_tcp) {
  std::optional<AdminResponse> response = read_request(connection.get(), over_tcp);
  if (!response) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (response->status == 400) refused_.fetch_add(1, std::memory_order_relaxed);
  const std::string bytes = serialize(*response);
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    // Inactivity, not total time: a large /records answer may take longer.
    if (!wait_for(connection.get(), POLLOUT, wake_read_.get(), monotonic_now() + options_.io_timeout)) return;
    const ssize_t put = ::send(connection.get(), bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (put < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (put <= 0) return;
    sent += static_cast<std::size_t>(put);
  }
  ::shutdown(connection.get(), SHUT_WR);
}

Result<AdminServerOptions, std::string> admin_server_options(
    std::string socket, const std::optional<config::HostPort>& listen,
    const std::optional<config::ConfiguredPath>& token_file) {
  AdminServerOptions options{.unix_socket_path = std::move(socket)};
  if (!listen) return options;
  RW_ASSERT(token_file.has_value());  // check_admin_tcp refused the config otherwise.
  auto text = read_text_file(token_file->path);
  if (!text) return fail("admin_token_file: " + text.error().to_string());
  const std::string_view spaces = " \t\r\n";
  const std::size_t first = text->find_first_not_of(spaces);
  const std::size_t last = text->find_last_not_of(spaces);
  const std::string token =
      first == std::string::npos ? std::string() : text->substr(first, last - first + 1);
  if (token.size() < kAdminTokenBytesMin || token.find_first_of(spaces) != std::string::npos) {
    return fail("admin_token_file " + token_file->path + ": the token must be one word of at least " +
                std::to_string(kAdminTokenBytesMin) + " bytes");
  }
  gateway::Endpoint endpoint{.is_v6 = listen->is_v6, .port = listen->port};
  endpoint.address = listen->bytes;
  options.tcp_listen = endpoint;
  options.bearer_token = token;
  return options;
}

}  // namespace rw::io
