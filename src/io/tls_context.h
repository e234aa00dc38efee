// TLS 1.3 with mutual certificates for traffic between the processes of one
// cluster (docs/security.md "Cluster certificates"), and TLS 1.2/1.3 for the
// gateway's RadSec peers (docs/security.md "RadSec"): an SSL_CTX built from
// PEM files, the verified peer's common name, the cluster's naming rule for
// common names, and a non-blocking TLS stream for epoll loops.
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/bytes.h"
#include "base/result.h"

namespace rw::io {

// The PEM files of one process's cluster identity. `crl` is optional: with
// it, a peer certificate the CA revoked is refused.
struct TlsFiles {
  std::string ca{};    // The cluster CA certificate: the only trust anchor.
  std::string cert{};  // This process's certificate, issued by the CA.
  std::string key{};   // Its private key.
  std::optional<std::string> crl{};
};

enum class TlsRole : std::uint8_t {
  kClient,  // Connects; verifies the server's certificate.
  kServer,  // Accepts; requires and verifies the client's certificate.
};

// A file that could not be used, or a TLS failure: `file` is empty when no
// file is at fault; `reason` is OpenSSL's.
struct TlsError {
  std::string file{};
  std::string reason{};
  [[nodiscard]] std::string to_string() const;  // "FILE: reason" or "reason".
};

// The protocol versions a context speaks.
enum class TlsVersions : std::uint8_t {
  k13,       // TLS 1.3 only: traffic between the processes of one cluster.
  k12And13,  // TLS 1.2 and 1.3: RadSec peers (RFC 6614; RFC 8996 retired 1.0 and 1.1).
};

// Shared because every connection's SSL keeps its own reference (SSL_new
// takes one); the last owner frees it.
using TlsContext = std::shared_ptr<SSL_CTX>;

// Builds a context for `role`: TLS 1.3 only; peer verification mandatory
// against `files.ca` alone (SSL_VERIFY_PEER, plus
// SSL_VERIFY_FAIL_IF_NO_PEER_CERT for kServer); CRL checking of the peer's
// certificate when `files.crl` is given (X509_V_FLAG_CRL_CHECK); the key
// must match the certificate. No session tickets, partial writes allowed
// and write buffers may move between retries (what epoll loops need).
// Does not check the peer's name: callers compare peer_common_name() with
// the name they expect (member_common_name, is_gateway_common_name).
// `versions` widens the first point to TLS 1.2 for peers outside the
// cluster (RadSec NASes and proxies).
[[nodiscard]] Result<TlsContext, TlsError> make_tls_context(const TlsFiles& files, TlsRole role,
                                                            TlsVersions versions = TlsVersions::k13);

// Every reason OpenSSL queued on this thread, oldest first, joined by "; ",
// or `fallback` when none; clears the queue.
[[nodiscard]] std::string openssl_reasons(std::string_view fallback);

// The subject common name of the peer's certificate, only when the handshake
// finished and the chain verified (SSL_get_verify_result == X509_V_OK).
[[nodiscard]] std::optional<std::string> peer_common_name(const SSL* ssl);

// The cluster's identity rule: a member's certificate names `member-<id>`
// (its decimal raft id), a gateway's `gateway-<name>`; the cluster CA issues
// both.
[[nodiscard]] std::string member_common_name(std::uint64_t member_id);
[[nodiscard]] std::string gateway_common_name(std::string_view gateway_name);
// The raft id of a member common name, or nothing for any other name.
[[nodiscard]] std::optional<std::uint64_t> member_id_of(std::string_view common_name);
[[nodiscard]] bool is_gateway_common_name(std::string_view common_name);
// Gateway names: 1..64 of [a-z0-9-], so that a CN cannot hide anything.
[[nodiscard]] bool valid_gateway_name(std::string_view name);

// One TLS connection over a non-blocking socket the caller owns (and closes
// after the stream). Calls never block: kWantRead/kWantWrite say which epoll
// event to wait for before calling again.
class TlsStream {
 public:
  enum class Status : std::uint8_t {
    kDone,       // Handshake finished, or `bytes` moved.
    kWantRead,   // Call again when the socket is readable.
    kWantWrite,  // Call again when the socket is writable.
    kClosed,     // The peer closed the TLS session.
    kFailed,     // Protocol, verification or socket error: see error().
  };
  struct Io {
    Status status = Status::kDone;
    std::size_t bytes = 0;
  };

  // A stream on `fd` with its own SSL from `context`.
  [[nodiscard]] static Result<std::unique_ptr<TlsStream>, TlsError> attach(const TlsContext& context, int fd,
                                                                           TlsRole role);
  ~TlsStream();
  TlsStream(const TlsStream&) = delete;
  TlsStream& operator=(const TlsStream&) = delete;

  // Drives the handshake; kDone once it finished (then again at once).
  [[nodiscard]] Status handshake();
  [[nodiscard]] bool handshake_done() const { return handshake_done_; }
  // At most `space.size()` bytes of application data.
  [[nodiscard]] Io read(MutableBytes space);
  // Writes a prefix of `data` (partial writes allowed).
  [[nodiscard]] Io write(Bytes data);
  // Decrypted bytes buffered inside the SSL: read() returns them without the
  // socket becoming readable again.
  [[nodiscard]] bool has_pending() const;
  // Sends the TLS close_notify alert, best effort: one non-blocking
  // attempt, its outcome ignored, so that the peer sees an orderly end
  // rather than a truncated stream. Call it once, before closing the socket.
  void close_notify();
  // The reason of the last kFailed.
  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] SSL* ssl() const { return ssl_; }

 private:
  TlsStream() = default;
  Status status_of(int result, const char* what);

  SSL* ssl_ = nullptr;
  bool handshake_done_ = false;
  std::string error_{};
};

// One read or write on a non-blocking socket: through `tls` when not null,
// plain recv/send otherwise, with the same statuses (EAGAIN and EINTR are
// kWantRead/kWantWrite, EOF kClosed, other errors kFailed). Lets one epoll
// loop serve both the TLS and the plaintext mode.
[[nodiscard]] TlsStream::Io receive_some(TlsStream* tls, int fd, MutableBytes space);
[[nodiscard]] TlsStream::Io send_some(TlsStream* tls, int fd, Bytes data);

}  // namespace rw::io
