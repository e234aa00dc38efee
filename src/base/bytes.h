// Borrowed byte views and bounds-checked big-endian readers and writers over
// caller-owned memory. Nothing here allocates, so the packet path can use it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

namespace rw {

using Bytes = std::span<const std::uint8_t>;
using MutableBytes = std::span<std::uint8_t>;

inline Bytes as_bytes(std::string_view text) {
  return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}
inline std::string_view as_chars(Bytes bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// Compares in time that depends only on the lengths, never on the contents:
// for authenticators, Message-Authenticator and password material.
[[nodiscard]] inline bool constant_time_equal(Bytes a, Bytes b) {
  if (a.size() != b.size()) return false;
  std::uint8_t diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<std::uint8_t>(a[i] ^ b[i]);
  return diff == 0;
}

// Reads from a borrowed span. Every read checks bounds and returns false (or
// an empty span) past the end; the reader then stays failed.
class ByteReader {
 public:
  explicit ByteReader(Bytes bytes) : bytes_(bytes) {}

  [[nodiscard]] std::size_t remaining() const { return bytes_.size() - offset_; }
  [[nodiscard]] std::size_t offset() const { return offset_; }
  [[nodiscard]] bool failed() const { return failed_; }

  [[nodiscard]] bool read_u8(std::uint8_t& out) {
    if (!ensure(1)) return false;
    out = bytes_[offset_++];
    return true;
  }
  [[nodiscard]] bool read_u16(std::uint16_t& out) {
    if (!ensure(2)) return false;
    out = static_cast<std::uint16_t>(bytes_[offset_] << 8 | bytes_[offset_ + 1]);
    offset_ += 2;
    return true;
  }
  [[nodiscard]] bool read_u32(std::uint32_t& out) {
    if (!ensure(4)) return false;
    out = static_cast<std::uint32_t>(bytes_[offset_]) << 24 |
          static_cast<std::uint32_t>(bytes_[offset_ + 1]) << 16 |
          static_cast<std::uint32_t>(bytes_[offset_ + 2]) << 8 | bytes_[offset_ + 3];
    offset_ += 4;
    return true;
  }
  [[nodiscard]] bool read_u64(std::uint64_t& out) {
    std::uint32_t high = 0;
    std::uint32_t low = 0;
    if (!read_u32(high) || !read_u32(low)) return false;
    out = static_cast<std::uint64_t>(high) << 32 | low;
    return true;
  }
  // Returns `count` bytes, or an empty span (and fails) when fewer remain.
  [[nodiscard]] Bytes read_bytes(std::size_t count) {
    if (!ensure(count)) return {};
    Bytes out = bytes_.subspan(offset_, count);
    offset_ += count;
    return out;
  }

 private:
  bool ensure(std::size_t count) {
    if (failed_ || remaining() < count) {
      failed_ = true;
      return false;
    }
    return true;
  }

  Bytes bytes_;
  std::size_t offset_ = 0;
  bool failed_ = false;
};

// Writes into a borrowed, fixed-size buffer. A write that does not fit sets
// overflowed() and writes nothing; callers check once at the end.
class ByteWriter {
 public:
  explicit ByteWriter(MutableBytes buffer) : buffer_(buffer) {}

  [[nodiscard]] std::size_t size() const { return offset_; }
  [[nodiscard]] std::size_t remaining() const { return buffer_.size() - offset_; }
  [[nodiscard]] bool overflowed() const { return overflowed_; }
  [[nodiscard]] Bytes written() const { return Bytes(buffer_.data(), offset_); }
  [[nodiscard]] MutableBytes buffer() const { return buffer_; }

  void write_u8(std::uint8_t value) {
    if (ensure(1)) buffer_[offset_++] = value;
  }
  void write_u16(std::uint16_t value) {
    if (!ensure(2)) return;
    buffer_[offset_++] = static_cast<std::uint8_t>(value >> 8);
    buffer_[offset_++] = static_cast<std::uint8_t>(value);
  }
  void write_u32(std::uint32_t value) {
    if (!ensure(4)) return;
    for (int shift = 24; shift >= 0; shift -= 8) {
      buffer_[offset_++] = static_cast<std::uint8_t>(value >> shift);
    }
  }
  void write_u64(std::uint64_t value) {
    write_u32(static_cast<std::uint32_t>(value >> 32));
    write_u32(static_cast<std::uint32_t>(value));
  }
  void write_bytes(Bytes bytes) {
    if (!ensure(bytes.size())) return;
    if (!bytes.empty()) std::memcpy(buffer_.data() + offset_, bytes.data(), bytes.size());
    offset_ += bytes.size();
  }
  // Reserves `count` bytes to fill in later (a length field); returns their offset.
  std::size_t skip(std::size_t count) {
    std::size_t at = offset_;
    if (ensure(count)) {
      std::fill_n(buffer_.data() + offset_, count, std::uint8_t{0});
      offset_ += count;
    }
    return at;
  }

 private:
  bool ensure(std::size_t count) {
    if (overflowed_ || remaining() < count) {
      overflowed_ = true;
      return false;
    }
    return true;
  }

  MutableBytes buffer_;
  std::size_t offset_ = 0;
  bool overflowed_ = false;
};

}  // namespace rw
