// Conversions between the pure gateway::Endpoint and the kernel's sockaddr,
// and the text form used in logs and errors ("127.0.0.1:1812", "[::1]:1812").
#pragma once

#include <sys/socket.h>

#include <string>

#include "gateway/datagram.h"

namespace rw::io {

// Writes `endpoint` into `storage` and returns the length to pass to the kernel.
[[nodiscard]] socklen_t to_sockaddr(const gateway::Endpoint& endpoint, sockaddr_storage& storage);

// Reads an AF_INET or AF_INET6 address; other families give an all-zero IPv4
// endpoint (the kernel never hands those to a UDP socket).
[[nodiscard]] gateway::Endpoint to_endpoint(const sockaddr_storage& storage);

// "192.0.2.1:1812" or "[2001:db8::1]:1812".
[[nodiscard]] std::string to_string(const gateway::Endpoint& endpoint);

// True for 0.0.0.0 and ::, where the kernel picks the local address per packet.
[[nodiscard]] bool is_wildcard(const gateway::Endpoint& endpoint);

}  // namespace rw::io
