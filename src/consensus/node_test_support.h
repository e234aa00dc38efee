// Shared by the Node integration test and the Node benchmark: free loopback
// ports, fresh data folders on a real disk, and a polling wait. Test-only.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

namespace rw::consensus {

// A loopback TCP port free at the time of the call (the kernel picks it).
inline std::uint16_t free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

// A fresh folder for data: $RW_CONSENSUS_TEST_DIR (the build folder in ctest)
// or /var/tmp, never /tmp, which may be a tmpfs libraft's probe treats apart.
inline std::filesystem::path fresh_data_root(const std::string& name) {
  const char* base = std::getenv("RW_CONSENSUS_TEST_DIR");
  std::filesystem::path root =
      base != nullptr ? std::filesystem::path(base) : std::filesystem::path("/var/tmp");
  root /= name + "." + std::to_string(::getpid());
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root);
  return root;
}

// Polls `condition` every millisecond until it holds or `timeout` passes.
template <class Condition>
bool wait_until(Condition condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return condition();
}

}  // namespace rw::consensus
