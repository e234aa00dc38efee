// The seam between the I/O shell and the gateway's pure request handling:
// the shell receives datagrams, hands each to a DatagramHandler with the time,
// where it arrived and the source address, and sends back whatever reply the
// handler wrote. Replies that come later (an Accounting-Response once its
// record is committed, an Access-Accept once SQL or the crypt(3) pool
// answered) are asked for with on_answer. One handler instance per
// worker thread; a handler is never shared between threads, so it needs no
// locks. The one thing workers share is the gateway's EAP conversations,
// since the kernel's SO_REUSEPORT hash may hand the follow-ups of one
// conversation, sent from other source ports, to other workers
// (docs/design.md "EAP across several gateways").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "auth/auth_error.h"
#include "base/bytes.h"
#include "base/time.h"

namespace rw::auth {
struct SqlUser;
}  // namespace rw::auth

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
  // RADIUS over TLS (RFC 6614), default TCP 2083: one connection carries
  // Access-Requests and Accounting-Requests alike, and its clients are the
  // RadSec clients (GatewayState::find_client).
  kRadSec,
};

// Where and when a datagram arrived. A deferred reply carries it back, so
// that it leaves from the same socket and local address the request was sent
// to (RFC 2865 §3: the NAS matches replies by address and port).
struct Arrival {
  Listener listener = Listener::kAuthentication;
  // The shell's index of the socket the datagram came in on.
  std::uint16_t socket = 0;
  // The local address the NAS sent to, when the shell learned it (a wildcard
  // socket's IP_PKTINFO / IPV6_PKTINFO); without it the socket's own address
  // is the source. The port is not used.
  std::optional<Endpoint> local{};
  // The interface of a link-local IPv6 `local` (0 otherwise).
  std::uint32_t interface_index = 0;
  // RadSec: the shell's id of the TLS connection the packet came on, which
  // a deferred reply goes back on (0 for UDP). Never reused by a shell, so a
  // reply for a connection that closed meanwhile finds none.
  std::uint64_t connection = 0;
  // The wall clock at arrival, Unix milliseconds: the time an accounting
  // record carries (the handler reads no clock).
  std::int64_t unix_ms = 0;
  // The monotonic clock at arrival, as the shell read it for the batch: the
  // start of the reply latency the shell measures (docs/admin_api.md
  // "/metrics"). The handler only carries it.
  Instant received{};
  // Another gateway forwarded the request here (gateway/eap_forward.h): it
  // is decided as if it had come from the NAS, and never forwarded again.
  bool forwarded = false;
};

// Names one request whose reply comes later: the worker whose handler holds
// it, its slot there and the slot's generation (so that an answer for a slot
// since reused is recognised as stale). Opaque outside the handler except
// for ticket_worker, which the shell routes answers by.
using Ticket = std::uint64_t;
[[nodiscard]] constexpr Ticket make_ticket(std::uint16_t worker, std::uint16_t slot,
                                           std::uint32_t generation) {
  return Ticket{worker} << 48 | Ticket{slot} << 32 | generation;
}
[[nodiscard]] constexpr std::uint16_t ticket_worker(Ticket ticket) {
  return static_cast<std::uint16_t>(ticket >> 48);
}
[[nodiscard]] constexpr std::uint16_t ticket_slot(Ticket ticket) {
  return static_cast<std::uint16_t>(ticket >> 32);
}
[[nodiscard]] constexpr std::uint32_t ticket_generation(Ticket ticket) {
  return static_cast<std::uint32_t>(ticket);
}

// What can answer a parked request, and the answer.
struct EapStepJob;  // eap_step.h

enum class AnswerKind : std::uint8_t {
  kRecord,        // Its accounting record was committed or refused.
  kSessionCount,  // The cluster's count of the user's open sessions (Simultaneous-Use).
  kUserLookup,    // The SQL user store's answer.
  kCryptVerdict,  // The crypt(3) pool's verdict on the User-Password.
  kForwarded,     // The reply of the gateway an EAP follow-up was forwarded to.
  kEapStep,       // The EAP pool stepped a conversation (eap_step.h).
};
struct Answer {
  Ticket ticket = 0;
  AnswerKind kind = AnswerKind::kRecord;
  // kRecord: committed (the reply is due) or refused (forget the request).
  bool committed = false;
  // kSessionCount: the count, or none when the cluster could not give one.
  std::optional<std::uint32_t> open_sessions{};
  // kUserLookup: the user's compiled rows, or null when the database could
  // not answer (the request is dropped unanswered, never rejected).
  std::shared_ptr<const auth::SqlUser> user{};
  // kCryptVerdict: whether the password matched; why not otherwise.
  bool crypt_matched = false;
  auth::AuthError crypt_error = auth::AuthError::kCryptFailed;
  // kForwarded: the RADIUS reply that gateway sent, signed for the NAS
  // (one allocation per relayed reply, made on the forwarder's thread).
  std::shared_ptr<const std::vector<std::uint8_t>> forwarded{};
  // kEapStep: the job, with the conversation it held and the step it made.
  std::shared_ptr<EapStepJob> eap_step{};
};

// A reply produced after its request: `length` bytes written into the
// caller's buffer, to be sent to `to` from `arrival`'s socket and address.
struct DeferredReply {
  Arrival arrival{};
  Endpoint to{};
  std::size_t length = 0;
};

// Handles datagrams for one worker. The shell owns the buffers.
class DatagramHandler {
 public:
  virtual ~DatagramHandler() = default;

  // Handles one datagram from `from` that arrived as `arrival` says. Writes a
  // reply into `reply` (at least 4096 bytes) and returns its length, or
  // returns 0 when nothing is to be sent (dropped, or the answer comes later).
  // Requires: datagram.size() <= 65535; never throws, never crashes on input.
  [[nodiscard]] virtual std::size_t on_datagram(Instant now, const Arrival& arrival, const Endpoint& from,
                                                Bytes datagram, MutableBytes reply) = 0;

  // Called at least every 100 ms: expires caches. Bounded work.
  virtual void on_tick(Instant now) = 0;

  // What another thread answered for the request `ticket` names (its
  // record committed or refused, a session count, an SQL user, a crypt(3)
  // verdict). Writes the reply, when one is now due, into `reply` (at least
  // 4096 bytes) and says where it goes; nothing when the request is dropped,
  // still waits for something else, or the ticket is stale.
  [[nodiscard]] virtual std::optional<DeferredReply> on_answer(Instant /*now*/, const Answer& /*answer*/,
                                                               MutableBytes /*reply*/) {
    return std::nullopt;
  }

  // A reply that became due by time alone (a request whose deferred
  // decision reached its deadline), written into `reply` (at least 4096
  // bytes), or nothing when none is due. The shell calls it after on_tick
  // until it returns nothing; bounded work per call.
  [[nodiscard]] virtual std::optional<DeferredReply> next_timed_reply(Instant /*now*/,
                                                                      MutableBytes /*reply*/) {
    return std::nullopt;
  }
};

// Builds one handler per worker thread.
class DatagramHandlerFactory {
 public:
  virtual ~DatagramHandlerFactory() = default;
  [[nodiscard]] virtual std::unique_ptr<DatagramHandler> make_handler(int worker_index) = 0;
};

}  // namespace rw::gateway
