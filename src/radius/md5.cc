// MD5 over OpenSSL's low-level interface. It is deprecated in OpenSSL 3 but
// present, and it beat both EVP (with a reused, pre-fetched context) and
// nettle on a 200-octet packet (docs/protocol.md "MD5").
#include "radius/md5.h"

#include <algorithm>
#include <new>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <openssl/md5.h>

namespace rw::radius {
namespace {

constexpr std::size_t kBlockLength = 64;

static_assert(sizeof(MD5_CTX) <= 96 && alignof(MD5_CTX) <= 8);

MD5_CTX* context(std::array<unsigned char, 96>& state) {
  return std::launder(reinterpret_cast<MD5_CTX*>(state.data()));
}

}  // namespace

Md5::Md5() { MD5_Init(new (state_.data()) MD5_CTX); }

void Md5::update(Bytes bytes) { MD5_Update(context(state_), bytes.data(), bytes.size()); }

void Md5::finish(std::span<std::uint8_t, kMd5Length> out) { MD5_Final(out.data(), context(state_)); }

Md5Digest Md5::finish() {
  Md5Digest out;
  finish(out);
  return out;
}

Md5Digest Md5::of(Bytes bytes) {
  Md5 md5;
  md5.update(bytes);
  return md5.finish();
}

HmacMd5Key::HmacMd5Key(Bytes key) {
  std::array<std::uint8_t, kBlockLength> block{};
  if (key.size() > kBlockLength) {
    Md5Digest hashed = Md5::of(key);
    std::copy(hashed.begin(), hashed.end(), block.begin());
  } else if (!key.empty()) {
    std::copy(key.begin(), key.end(), block.begin());
  }
  std::array<std::uint8_t, kBlockLength> pad;
  for (std::size_t i = 0; i < kBlockLength; ++i) pad[i] = block[i] ^ 0x36;
  inner_.update(pad);
  for (std::size_t i = 0; i < kBlockLength; ++i) pad[i] = block[i] ^ 0x5c;
  outer_.update(pad);
}

void HmacMd5Key::finish(Md5 inner, std::span<std::uint8_t, kMd5Length> out) const {
  Md5Digest inner_digest = inner.finish();
  Md5 outer = outer_;
  outer.update(inner_digest);
  outer.finish(out);
}

Md5Digest HmacMd5Key::mac(Bytes message) const {
  Md5 inner = begin();
  inner.update(message);
  Md5Digest out;
  finish(inner, out);
  return out;
}

}  // namespace rw::radius

#pragma GCC diagnostic pop
