// Csprng over OpenSSL RAND_bytes.
#include "io/csprng.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace rw::io {
namespace {

void rand_bytes_or_abort(std::uint8_t* out, std::size_t size) {
  while (size > 0) {
    const int chunk = static_cast<int>(size > INT_MAX ? INT_MAX : size);
    if (RAND_bytes(out, chunk) != 1) {
      std::fprintf(stderr, "radiusward: fatal: RAND_bytes failed; refusing to run without randomness\n");
      std::abort();
    }
    out += chunk;
    size -= static_cast<std::size_t>(chunk);
  }
}

}  // namespace

Csprng::~Csprng() { OPENSSL_cleanse(buffer_.data(), buffer_.size()); }

void Csprng::refill() {
  rand_bytes_or_abort(buffer_.data(), buffer_.size());
  available_ = buffer_.size();
}

void Csprng::fill(MutableBytes out) {
  if (out.size() > buffer_.size()) {
    // Large requests (keys) skip the buffer.
    rand_bytes_or_abort(out.data(), out.size());
    return;
  }
  std::size_t written = 0;
  while (written < out.size()) {
    if (available_ == 0) refill();
    const std::size_t take = std::min(available_, out.size() - written);
    std::uint8_t* from = buffer_.data() + buffer_.size() - available_;
    std::memcpy(out.data() + written, from, take);
    OPENSSL_cleanse(from, take);
    available_ -= take;
    written += take;
  }
}

Csprng& thread_csprng() {
  thread_local Csprng csprng;
  return csprng;
}

}  // namespace rw::io
