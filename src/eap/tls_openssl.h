// OpenSSL helpers shared by the EAP TLS engine's files (tls_server_context.cc,
// tls_session.cc): owners that free OpenSSL objects, and the error queue as
// text. Internal to src/eap.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace rw::eap::openssl {

template <class T, void (*Free)(T*)>
struct Freer {
  void operator()(T* p) const { Free(p); }
};
template <class T, void (*Free)(T*)>
using Owned = std::unique_ptr<T, Freer<T, Free>>;

// Every reason OpenSSL queued on this thread, oldest first, joined by "; ",
// or `fallback` when none; clears the queue.
[[nodiscard]] std::string error_queue(std::string_view fallback);

}  // namespace rw::eap::openssl
