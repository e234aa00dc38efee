// The bench's floor server (issue 15, docs/benchmarking.md "Floor server"):
// the smallest correct Access-Request responder, run in the same UdpServer
// (recvmmsg, sendmmsg, the same worker count) as the gateway, so that the
// difference between its ceiling and radiusward's PAP ceiling is what the
// gateway's request handling costs. Per datagram it does only what any
// correct server must: the packet's structure (RFC 2865 §3), its
// Message-Authenticator (RFC 3579 §3.2, required), and a fixed Access-Accept
// carrying a Message-Authenticator, signed (RFC 2865 §3). No users, no
// duplicate cache, no policy; anything else is dropped.
#pragma once

#include <memory>

#include "gateway/datagram.h"
#include "radius/authenticator.h"

namespace rw::gateway {

class FloorHandler final : public DatagramHandler {
 public:
  explicit FloorHandler(const radius::SharedSecret& secret) : secret_(secret) {}

  std::size_t on_datagram(Instant now, const Arrival& arrival, const Endpoint& from, Bytes datagram,
                          MutableBytes reply) override;
  void on_tick(Instant /*now*/) override {}

 private:
  const radius::SharedSecret& secret_;
};

// One FloorHandler per worker, all with one secret the factory owns.
class FloorHandlerFactory final : public DatagramHandlerFactory {
 public:
  explicit FloorHandlerFactory(radius::SharedSecret secret) : secret_(std::move(secret)) {}
  std::unique_ptr<DatagramHandler> make_handler(int /*worker_index*/) override {
    return std::make_unique<FloorHandler>(secret_);
  }

 private:
  radius::SharedSecret secret_;
};

}  // namespace rw::gateway
