// The client side of plain HTTP for the few exchanges radiusward starts
// itself: the admin API's over its Unix socket (admin_client.h) and an
// EAP-TLS certificate's OCSP query to its responder (RFC 6960 Appendix A,
// docs/security.md "OCSP"). One request, the whole answer read until the
// peer closes, every wait bounded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/bytes.h"
#include "base/result.h"
#include "base/time.h"
#include "io/admin_client.h"
#include "io/system_error.h"

namespace rw::io {

struct HttpExchangeLimits {
  Duration wait = Duration::seconds(30);  // Longest wait without progress.
  std::optional<Instant> deadline{};      // The whole exchange ends by then (monotonic), if set.
  std::size_t answer_bytes_max = 65'536;
};

// Sends `request` over the connected stream `fd` and reads until the peer
// closes. Errors name `peer`: ETIMEDOUT past a wait or the deadline,
// EMSGSIZE past answer_bytes_max.
[[nodiscard]] Result<std::string, SystemError> http_exchange(int fd, const std::string& peer,
                                                             std::string_view request,
                                                             HttpExchangeLimits limits);

// An http:// URL: the host (a name, an IPv4 address or a bracketed IPv6
// one), the port (80 when absent) and the path ("/" when absent).
struct HttpUrl {
  std::string host{};
  std::uint16_t port = 80;
  std::string path{"/"};
};
// Errors say what is wrong; https:// is refused (OCSP answers are signed,
// RFC 6960 §A.1 uses plain HTTP).
[[nodiscard]] Result<HttpUrl, std::string> parse_http_url(std::string_view url);

// POSTs `body` as `content_type` to `url` over TCP (HTTP/1.0), the whole
// exchange, name lookup excepted, within `timeout`; the answer, whatever its
// status, at most `answer_bytes_max` octets.
[[nodiscard]] Result<AdminReply, SystemError> http_post(const HttpUrl& url, std::string_view content_type,
                                                        Bytes body, Duration timeout,
                                                        std::size_t answer_bytes_max);

}  // namespace rw::io
