// Plain HTTP exchanges (http_client.h).
#include "io/http_client.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "io/clock.h"
#include "io/file_descriptor.h"

namespace rw::io {
namespace {

// The wait allowed now: `wait`, cut to what is left before the deadline.
Duration allowed(const HttpExchangeLimits& limits) {
  if (!limits.deadline) return limits.wait;
  const Duration left = *limits.deadline - monotonic_now();
  if (left.to_ms() <= 0) return Duration::milliseconds(0);
  return left < limits.wait ? left : limits.wait;
}

// Waits for `events`; false when the wait allowed passed without them.
bool wait_for(int fd, short events, const HttpExchangeLimits& limits) {
  for (;;) {
    const Duration wait = allowed(limits);
    if (wait.to_ms() <= 0) return false;
    pollfd entry{fd, events, 0};
    const int ready = ::poll(&entry, 1, static_cast<int>(wait.to_ms()));
    if (ready < 0 && errno == EINTR) continue;
    return ready > 0;
  }
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Whether `answer` holds a whole HTTP answer by its Content-Length, so that
// a peer keeping the connection open (HTTP/1.1 keep-alive despite our
// "Connection: close") need not be waited for. Without the header: no.
bool complete_by_length(std::string_view answer) {
  const std::size_t head_end = answer.find("\r\n\r\n");
  if (head_end == std::string_view::npos) return false;
  std::string_view head = answer.substr(0, head_end + 2);
  for (std::size_t at = head.find("\r\n"); at != std::string_view::npos; at = head.find("\r\n", at + 2)) {
    std::string_view line = head.substr(at + 2);
    line = line.substr(0, line.find("\r\n"));
    constexpr std::string_view kName = "content-length:";
    if (line.size() < kName.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < kName.size() && same; ++i) {
      const char c = line[i] >= 'A' && line[i] <= 'Z' ? static_cast<char>(line[i] - 'A' + 'a') : line[i];
      same = c == kName[i];
    }
    if (!same) continue;
    std::size_t length = 0;
    std::size_t digits = 0;
    for (char c : line.substr(kName.size())) {
      if (c == ' ' || c == '\t') continue;
      if (!is_digit(c) || ++digits > 12) return false;
      length = length * 10 + static_cast<std::size_t>(c - '0');
    }
    return digits > 0 && answer.size() - (head_end + 4) >= length;
  }
  return false;
}

}  // namespace

Result<std::string, SystemError> http_exchange(int fd, const std::string& peer, std::string_view request,
                                               HttpExchangeLimits limits) {
  std::size_t sent = 0;
  while (sent < request.size()) {
    if (!wait_for(fd, POLLOUT, limits)) return fail(SystemError{"send to " + peer, ETIMEDOUT});
    const ssize_t put = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) return fail(last_system_error("send to " + peer));
    sent += static_cast<std::size_t>(put);
  }
  std::string answer;
  char chunk[65536];
  for (;;) {
    if (!wait_for(fd, POLLIN, limits)) return fail(SystemError{"read from " + peer, ETIMEDOUT});
    const ssize_t got = ::recv(fd, chunk, sizeof(chunk), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return fail(last_system_error("read from " + peer));
    if (got == 0) break;
    if (answer.size() + static_cast<std::size_t>(got) > limits.answer_bytes_max) {
      return fail(SystemError{
          "read from " + peer + " (answer above " + std::to_string(limits.answer_bytes_max) + " octets)",
          EMSGSIZE});
    }
    answer.append(chunk, static_cast<std::size_t>(got));
    if (complete_by_length(answer)) break;
  }
  return answer;
}

Result<HttpUrl, std::string> parse_http_url(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (url.size() < kScheme.size() || url.substr(0, kScheme.size()) != kScheme) {
    return fail(std::string("not an http:// URL"));
  }
  url.remove_prefix(kScheme.size());
  HttpUrl parsed;
  const std::size_t slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  if (slash != std::string_view::npos) parsed.path = std::string(url.substr(slash));
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return fail(std::string("an IPv6 address without its closing ]"));
    parsed.host = std::string(authority.substr(1, close - 1));
    authority.remove_prefix(close + 1);
    if (!authority.empty()) {
      if (authority.front() != ':') return fail(std::string("text after the IPv6 address"));
      port = authority.substr(1);
    }
  } else {
    const std::size_t colon = authority.find(':');
    parsed.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (parsed.host.empty()) return fail(std::string("no host"));
  if (parsed.host.find('@') != std::string::npos)
    return fail(std::string("user information is not supported"));
  for (char c : parsed.path) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f)
      return fail(std::string("a control character or space in the path"));
  }
  if (!port.empty()) {
    unsigned value = 0;
    if (port.size() > 5) return fail(std::string("the port is not a number from 1 to 65535"));
    for (char c : port) {
      if (!is_digit(c)) return fail(std::string("the port is not a number from 1 to 65535"));
      value = value * 10 + static_cast<unsigned>(c - '0');
    }
    if (value == 0 || value > 65535) return fail(std::string("the port is not a number from 1 to 65535"));
    parsed.port = static_cast<std::uint16_t>(value);
  }
  return parsed;
}

Result<AdminReply, SystemError> http_post(const HttpUrl& url, std::string_view content_type, Bytes body,
                                          Duration timeout, std::size_t answer_bytes_max) {
  const std::string peer = url.host + ":" + std::to_string(url.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(url.port);
  if (const int error = ::getaddrinfo(url.host.c_str(), port.c_str(), &hints, &found); error != 0) {
    return fail(SystemError{"resolve " + peer + " (" + ::gai_strerror(error) + ")", EHOSTUNREACH});
  }
  const HttpExchangeLimits limits{
      .wait = timeout, .deadline = monotonic_now() + timeout, .answer_bytes_max = answer_bytes_max};
  FileDescriptor fd;
  SystemError last{"connect " + peer, ECONNREFUSED};
  for (addrinfo* address = found; address != nullptr && !fd.valid(); address = address->ai_next) {
    FileDescriptor candidate(
        ::socket(address->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, address->ai_protocol));
    if (!candidate.valid()) {
      last = last_system_error("socket for " + peer);
      continue;
    }
    if (::connect(candidate.get(), address->ai_addr, address->ai_addrlen) != 0 && errno != EINPROGRESS) {
      last = last_system_error("connect " + peer);
      continue;
    }
    if (!wait_for(candidate.get(), POLLOUT, limits)) {
      last = SystemError{"connect " + peer, ETIMEDOUT};
      continue;
    }
    int error = 0;
    socklen_t length = sizeof error;
    ::getsockopt(candidate.get(), SOL_SOCKET, SO_ERROR, &error, &length);
    if (error != 0) {
      last = SystemError{"connect " + peer, error};
      continue;
    }
    fd = std::move(candidate);
  }
  ::freeaddrinfo(found);
  if (!fd.valid()) return fail(last);
  const bool v6 = url.host.find(':') != std::string::npos;
  std::string request =
      "POST " + url.path + " HTTP/1.0\r\nHost: " + (v6 ? "[" + url.host + "]" : url.host) +
      (url.port == 80 ? "" : ":" + port) + "\r\nContent-Type: " + std::string(content_type) +
      "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  request.append(reinterpret_cast<const char*>(body.data()), body.size());
  auto answer = http_exchange(fd.get(), peer, request, limits);
  if (!answer) return fail(answer.error());
  auto reply = parse_admin_reply(*answer);
  if (!reply) return fail(SystemError{"read from " + peer + " (not an HTTP answer)", EPROTO});
  return *reply;
}

}  // namespace rw::io
