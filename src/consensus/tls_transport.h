// A libraft transport (struct raft_uv_transport) that carries member-to-member
// raft traffic inside mutually authenticated TLS 1.3. libraft reads and writes
// one end of a socketpair; a bridge thread per connection does the handshake,
// checks the peer's certificate identity and preamble, and shuttles bytes
// between the socketpair and TLS. Threads, limits and the identity rule:
// docs/consensus.md "Transport" and docs/security.md "Raft port".
#pragma once

#include <openssl/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"
#include "consensus/log_level.h"

struct raft_uv_transport;
struct uv_loop_s;

namespace rw::consensus {

// Takes ownership of `context` (one reference); SSL_CTX_free when the last
// copy goes.
[[nodiscard]] std::shared_ptr<SSL_CTX> share_ssl_context(SSL_CTX* context);

// Blocks SIGPIPE in the calling thread: a raft peer that went away must give
// EPIPE (OpenSSL and libuv write with write(2)), not kill the process. Per
// thread, so the process's disposition is untouched. Every thread that
// writes to a raft socket calls it first.
void block_sigpipe_in_this_thread();

struct TlsTransportOptions {
  // Accepting side: the member's certificate and key, the cluster CA (and its
  // CRL with X509_V_FLAG_CRL_CHECK when one is configured). The transport
  // itself requires TLS 1.3 and a verified client certificate on every
  // connection, whatever the context says.
  std::shared_ptr<SSL_CTX> server_context;
  // Connecting side: may be the same context as server_context.
  std::shared_ptr<SSL_CTX> client_context;
  // Whether `id` is a member allowed to connect (certificate `member-<id>`).
  // Called on bridge threads: must be thread-safe. Empty: Node fills it with
  // its voters.
  std::function<bool(std::uint64_t id)> is_member;
  // "IPv4:port" the listening socket binds; empty: the member's own raft
  // address (Node fills it from NodeOptions::bind_address).
  std::string bind_address;
  // TCP connect + TLS handshake + preamble + acceptance, each direction.
  unsigned handshake_timeout_ms = 5000;
  // Inbound connections still in their handshake; more are closed at once.
  std::size_t max_pending_inbound = 16;
  // Inbound connections handed to libraft (a member opens one; a restarted
  // member briefly two); more are refused after the handshake.
  std::size_t max_established_inbound = 64;
  // Refusals of inbound peers and failures of outbound connects, each at
  // most one line per log_interval_ms (the rest are counted in the next
  // line). Called on bridge threads: must be thread-safe and quick.
  std::function<void(LogLevel, std::string_view)> log;
  unsigned log_interval_ms = 1000;
};

// Monotonic counts since start.
struct TlsTransportCounters {
  std::uint64_t inbound_accepted = 0;    // Handed to libraft.
  std::uint64_t outbound_connected = 0;  // Handed to libraft.
  std::uint64_t refused_handshake = 0;   // No, foreign, revoked or expired certificate; not TLS 1.3.
  std::uint64_t refused_identity = 0;    // CN not member-<id> of a member, or not the preamble's id.
  std::uint64_t refused_preamble = 0;    // Malformed preamble.
  std::uint64_t refused_timeout = 0;     // Handshake deadline passed (inbound).
  std::uint64_t refused_overload = 0;    // Pending or established inbound cap reached.
  std::uint64_t outbound_failed = 0;     // Connect, handshake, peer identity or acceptance failed.
};

class TlsTransport {
 public:
  // Fills `transport` (which libraft's raft_uv_init then borrows; `data` is
  // left to libraft) for `loop`. The analog of raft_uv_tcp_init.
  [[nodiscard]] static Result<std::unique_ptr<TlsTransport>, std::string> create(
      struct raft_uv_transport* transport, struct uv_loop_s* loop, TlsTransportOptions options);
  // The analog of raft_uv_tcp_close: after libraft's close completed, or when
  // libraft was never started (then uv_run the loop once more afterwards).
  // Joins every bridge thread and closes every descriptor.
  ~TlsTransport();
  TlsTransport(const TlsTransport&) = delete;
  TlsTransport& operator=(const TlsTransport&) = delete;

  // Any thread.
  [[nodiscard]] TlsTransportCounters counters() const;

  struct Impl;

 private:
  explicit TlsTransport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rw::consensus
