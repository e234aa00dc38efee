// The admin API client (admin_client.h).
#include "io/admin_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "io/clock.h"
#include "io/file_descriptor.h"
#include "io/http_client.h"

namespace rw::io {
namespace {

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool starts_with_ignoring_case(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (lower(text[i]) != lower(prefix[i])) return false;
  }
  return true;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

Result<FileDescriptor, SystemError> connect_unix(const std::string& socket_path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket_path.empty() || socket_path.size() >= sizeof(address.sun_path)) {
    return fail(SystemError{"connect " + socket_path, ENAMETOOLONG});
  }
  std::memcpy(address.sun_path, socket_path.data(), socket_path.size());
  FileDescriptor fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return fail(last_system_error("socket AF_UNIX"));
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    return fail(last_system_error("connect " + socket_path));
  }
  return fd;
}

}  // namespace

std::string admin_socket_path(std::string_view dir, std::string_view process) {
  std::string path(dir);
  if (!path.empty() && path.back() != '/') path += '/';
  path += "admin/";
  path += process;
  path += ".sock";
  return path;
}

std::optional<AdminReply> parse_admin_reply(std::string_view bytes) {
  const std::size_t head_end = bytes.find("\r\n\r\n");
  if (head_end == std::string_view::npos) return std::nullopt;
  std::string_view head = bytes.substr(0, head_end + 2);
  std::string_view rest = bytes.substr(head_end + 4);
  std::size_t line_end = head.find("\r\n");
  std::string_view status_line = head.substr(0, line_end);
  // "HTTP/1.1 200 OK": the version, a space, three digits, then a space or the end.
  if (!status_line.starts_with("HTTP/1.") || status_line.size() < 12 || status_line[8] != ' ' ||
      (status_line.size() > 12 && status_line[12] != ' ')) {
    return std::nullopt;
  }
  AdminReply reply;
  for (std::size_t i = 9; i < 12; ++i) {
    if (status_line[i] < '0' || status_line[i] > '9') return std::nullopt;
    reply.status = reply.status * 10 + (status_line[i] - '0');
  }
  std::optional<std::size_t> length;
  head.remove_prefix(line_end + 2);
  while (!head.empty()) {
    line_end = head.find("\r\n");
    std::string_view line = head.substr(0, line_end);
    head.remove_prefix(line_end + 2);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    std::string_view value = trim(line.substr(colon + 1));
    if (starts_with_ignoring_case(line, "content-type:")) reply.content_type = std::string(value);
    if (starts_with_ignoring_case(line, "content-length:")) {
      std::size_t parsed = 0;
      if (value.empty() || value.size() > 12) return std::nullopt;
      for (char c : value) {
        if (c < '0' || c > '9') return std::nullopt;
        parsed = parsed * 10 + static_cast<std::size_t>(c - '0');
      }
      length = parsed;
    }
  }
  if (length) {
    if (rest.size() < *length) return std::nullopt;  // Cut short: the server died mid-answer.
    rest = rest.substr(0, *length);
  }
  reply.body = std::string(rest);
  return reply;
}

Result<AdminReply, SystemError> admin_request(const std::string& socket_path, std::string_view method,
                                              std::string_view target, std::string_view body,
                                              Duration timeout) {
  auto connected = connect_unix(socket_path);
  if (!connected) return fail(connected.error());
  const int fd = connected->get();
  std::string request = std::string(method) + " " + std::string(target) + " HTTP/1.1\r\nHost: localhost\r\n";
  if (!body.empty()) {
    request += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  request += "Connection: close\r\n\r\n";
  request += body;
  auto answer = http_exchange(fd, socket_path, request,
                              HttpExchangeLimits{.wait = timeout, .answer_bytes_max = kAdminReplyBytesMax});
  if (!answer) return fail(answer.error());
  auto reply = parse_admin_reply(*answer);
  if (!reply) return fail(SystemError{"read from " + socket_path + " (not an HTTP answer)", EPROTO});
  return *reply;
}

}  // namespace rw::io
