// The client side of the admin API (docs/admin_api.md), used by
// `radiusward ctl` and by tests: one HTTP/1.1 request over the Unix socket,
// the whole answer read until the server closes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "base/time.h"
#include "io/system_error.h"

namespace rw::io {

// Largest answer the client reads (a long /records listing).
inline constexpr std::size_t kAdminReplyBytesMax = std::size_t{1} << 30;

struct AdminReply {
  int status = 0;
  std::string content_type{};
  std::string body{};
};

// Sends `method target` (and `body`, if not empty, as application/json) to
// the server at `socket_path` and returns its answer, whatever the status.
// Errors: connecting failed (the errno says why: ENOENT, ECONNREFUSED,
// EACCES), the exchange took longer than `timeout` without progress, or the
// answer is not HTTP (EPROTO).
[[nodiscard]] Result<AdminReply, SystemError> admin_request(const std::string& socket_path,
                                                            std::string_view method, std::string_view target,
                                                            std::string_view body = {},
                                                            Duration timeout = Duration::seconds(30));

// Where a process of a deployment folder puts its admin socket:
// `dir`/admin/`process`.sock, with `process` "gateway" or "member-<id>"
// (docs/admin_api.md). `radiusward dev` and `radiusward ctl --dir` agree through this.
[[nodiscard]] std::string admin_socket_path(std::string_view dir, std::string_view process);

// Parses a whole HTTP/1.1 answer read until EOF: status line, headers and
// a body of Content-Length bytes (or everything after the headers without
// one). Pure; exposed for tests. No answer when the bytes are not HTTP.
[[nodiscard]] std::optional<AdminReply> parse_admin_reply(std::string_view bytes);

}  // namespace rw::io
