// Finds free loopback TCP ports by binding them.
#include "io/free_ports.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <string>

#include "io/file_descriptor.h"

namespace rw::io {
namespace {

// Binds a new TCP socket to 127.0.0.1:port (0: the kernel's choice).
// Returns the socket, or an invalid one with errno set.
FileDescriptor bind_loopback(std::uint16_t port) {
  FileDescriptor fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return fd;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    const int bind_error = errno;
    fd.reset();
    errno = bind_error;
  }
  return fd;
}

std::uint16_t bound_port(const FileDescriptor& fd) {
  sockaddr_in address{};
  socklen_t length = sizeof address;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) return 0;
  return ntohs(address.sin_port);
}

}  // namespace

Result<std::vector<std::uint16_t>, SystemError> free_tcp_ports(std::size_t count,
                                                               std::optional<std::uint16_t> base) {
  std::vector<FileDescriptor> held;
  std::vector<std::uint16_t> ports;
  std::uint32_t next = base.value_or(0);
  while (ports.size() < count) {
    if (base && next > 65535)
      return fail(SystemError{"bind 127.0.0.1:" + std::to_string(*base) + "..65535", EADDRINUSE});
    const auto port = static_cast<std::uint16_t>(base ? next++ : 0);
    FileDescriptor fd = bind_loopback(port);
    if (!fd.valid()) {
      if (base && (errno == EADDRINUSE || errno == EACCES)) continue;
      return fail(last_system_error("bind 127.0.0.1:" + std::to_string(port)));
    }
    const std::uint16_t found = bound_port(fd);
    if (found == 0) return fail(last_system_error("getsockname"));
    ports.push_back(found);
    held.push_back(std::move(fd));
  }
  return ports;
}

}  // namespace rw::io
