// The seam between the I/O shell and the gateway's pure request handling:
// the shell receives datagrams, hands each to a DatagramHandler with the time
// and the source address, and sends back whatever reply the handler wrote.
// One handler instance per worker thread; a handler is never shared between
// threads, so it needs no locks (DESIGN.md "EAP across several gateways").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "base/bytes.h"
#include "base/time.h"

namespace rw::gateway {

// An IPv4 or IPv6 address and UDP port, as plain bytes (no sockaddr), so that
// pure code and the simulator can use it. IPv4 uses the first 4 bytes.
struct Endpoint {
  std::array<std::uint8_t, 16> address{};
  bool is_v6 = false;
  std::uint16_t port = 0;

  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

// Which listener a datagram arrived on.
enum class Listener : std::uint8_t {
  kAuthentication,  // default UDP 1812
  kAccounting,      // default UDP 1813
};

// Handles datagrams for one worker. The shell owns the buffers.
class DatagramHandler {
 public:
  virtual ~DatagramHandler() = default;

  // Handles one datagram from `from` on `listener`. Writes a reply into
  // `reply` (at least 4096 bytes) and returns its length, or returns 0 when
  // nothing is to be sent (dropped, or the answer comes later).
  // Requires: datagram.size() <= 65535; never throws, never crashes on input.
  [[nodiscard]] virtual std::size_t on_datagram(Instant now, Listener listener, const Endpoint& from,
                                                Bytes datagram, MutableBytes reply) = 0;

  // Called at least every 100 ms: expires caches. Bounded work.
  virtual void on_tick(Instant now) = 0;
};

// Builds one handler per worker thread.
class DatagramHandlerFactory {
 public:
  virtual ~DatagramHandlerFactory() = default;
  [[nodiscard]] virtual std::unique_ptr<DatagramHandler> make_handler(int worker_index) = 0;
};

}  // namespace rw::gateway
