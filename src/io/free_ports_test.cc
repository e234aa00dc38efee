// free_tcp_ports: distinct ports that can be bound, from the kernel or from a base.
#include "io/free_ports.h"

#include <gtest/gtest.h>

#include <set>

namespace rw::io {
namespace {

TEST(FreeTcpPorts, KernelChoicesAreDistinct) {
  auto ports = free_tcp_ports(6, std::nullopt);
  ASSERT_TRUE(ports) << ports.error().to_string();
  ASSERT_EQ(ports->size(), 6u);
  EXPECT_EQ(std::set<std::uint16_t>(ports->begin(), ports->end()).size(), 6u);
  for (const std::uint16_t port : *ports) EXPECT_NE(port, 0);
}

TEST(FreeTcpPorts, FromABaseTheyAreAtOrAboveIt) {
  auto ports = free_tcp_ports(3, 40000);
  ASSERT_TRUE(ports) << ports.error().to_string();
  ASSERT_EQ(ports->size(), 3u);
  for (std::size_t i = 0; i < ports->size(); ++i) {
    EXPECT_GE((*ports)[i], 40000);
    if (i > 0) {
      EXPECT_GT((*ports)[i], (*ports)[i - 1]);
    }
  }
}

TEST(FreeTcpPorts, RunningOutOfPortsAboveTheBaseIsAnError) { EXPECT_FALSE(free_tcp_ports(3, 65534)); }

}  // namespace
}  // namespace rw::io
