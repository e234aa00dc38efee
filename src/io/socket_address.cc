// sockaddr_in/sockaddr_in6 <-> gateway::Endpoint.
#include "io/socket_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace rw::io {

socklen_t to_sockaddr(const gateway::Endpoint& endpoint, sockaddr_storage& storage) {
  std::memset(&storage, 0, sizeof(storage));
  if (endpoint.is_v6) {
    auto& v6 = reinterpret_cast<sockaddr_in6&>(storage);
    v6.sin6_family = AF_INET6;
    v6.sin6_port = htons(endpoint.port);
    std::memcpy(&v6.sin6_addr, endpoint.address.data(), 16);
    return sizeof(sockaddr_in6);
  }
  auto& v4 = reinterpret_cast<sockaddr_in&>(storage);
  v4.sin_family = AF_INET;
  v4.sin_port = htons(endpoint.port);
  std::memcpy(&v4.sin_addr, endpoint.address.data(), 4);
  return sizeof(sockaddr_in);
}

gateway::Endpoint to_endpoint(const sockaddr_storage& storage) {
  gateway::Endpoint endpoint;
  if (storage.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(storage);
    endpoint.is_v6 = true;
    endpoint.port = ntohs(v6.sin6_port);
    std::memcpy(endpoint.address.data(), &v6.sin6_addr, 16);
  } else if (storage.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(storage);
    endpoint.port = ntohs(v4.sin_port);
    std::memcpy(endpoint.address.data(), &v4.sin_addr, 4);
  }
  return endpoint;
}

std::string to_string(const gateway::Endpoint& endpoint) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(endpoint.is_v6 ? AF_INET6 : AF_INET, endpoint.address.data(), text, sizeof(text));
  if (endpoint.is_v6) return fmt::format("[{}]:{}", text, endpoint.port);
  return fmt::format("{}:{}", text, endpoint.port);
}

bool is_wildcard(const gateway::Endpoint& endpoint) {
  const std::size_t size = endpoint.is_v6 ? 16 : 4;
  return std::all_of(endpoint.address.begin(), endpoint.address.begin() + static_cast<std::ptrdiff_t>(size),
                     [](std::uint8_t byte) { return byte == 0; });
}

}  // namespace rw::io
