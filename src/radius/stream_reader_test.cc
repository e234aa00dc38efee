// StreamReader: RADIUS packets framed by Length on a byte stream (RFC 6613),
// whatever the chunks the stream arrives in.
#include "radius/stream_reader.h"

#include <gtest/gtest.h>

#include <vector>

namespace rw::radius {
namespace {

// A packet of `length` octets whose Identifier is `identifier`; the rest
// counts up so that a misplaced octet shows.
std::vector<std::uint8_t> packet(std::uint8_t identifier, std::size_t length) {
  std::vector<std::uint8_t> bytes(length);
  bytes[0] = 1;
  bytes[1] = identifier;
  bytes[2] = static_cast<std::uint8_t>(length >> 8);
  bytes[3] = static_cast<std::uint8_t>(length);
  for (std::size_t i = 4; i < length; ++i) bytes[i] = static_cast<std::uint8_t>(i + identifier);
  return bytes;
}

std::vector<std::uint8_t> concat(std::initializer_list<std::vector<std::uint8_t>> parts) {
  std::vector<std::uint8_t> out;
  for (const auto& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

// Feeds `stream` in chunks of `chunk` octets and collects the packets.
std::vector<std::vector<std::uint8_t>> read_all(const std::vector<std::uint8_t>& stream, std::size_t chunk) {
  StreamReader reader;
  std::vector<std::vector<std::uint8_t>> packets;
  for (std::size_t offset = 0; offset < stream.size(); offset += chunk) {
    Bytes input = Bytes(stream).subspan(offset, std::min(chunk, stream.size() - offset));
    for (;;) {
      auto next = reader.next(input);
      EXPECT_TRUE(next.has_value());
      if (!next || !*next) break;
      packets.emplace_back((*next)->begin(), (*next)->end());
    }
    EXPECT_TRUE(input.empty());
  }
  EXPECT_EQ(reader.held(), 0u);
  return packets;
}

TEST(StreamReader, SplitsPacketsWhateverTheChunks) {
  const auto a = packet(1, 20);
  const auto b = packet(2, 4096);
  const auto c = packet(3, 37);
  const auto stream = concat({a, b, c});
  for (std::size_t chunk : {std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{19}, std::size_t{20},
                            std::size_t{1000}, stream.size()}) {
    const auto packets = read_all(stream, chunk);
    ASSERT_EQ(packets.size(), 3u) << "chunk " << chunk;
    EXPECT_EQ(packets[0], a);
    EXPECT_EQ(packets[1], b);
    EXPECT_EQ(packets[2], c);
  }
}

TEST(StreamReader, KeepsAPartialPacketForTheNextCall) {
  const auto a = packet(7, 100);
  StreamReader reader;
  Bytes first = Bytes(a).first(60);
  auto none = reader.next(first);
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value());
  EXPECT_EQ(reader.held(), 60u);
  Bytes rest = Bytes(a).subspan(60);
  auto whole = reader.next(rest);
  ASSERT_TRUE(whole.has_value() && whole->has_value());
  EXPECT_EQ(std::vector<std::uint8_t>((*whole)->begin(), (*whole)->end()), a);
}

TEST(StreamReader, RefusesLengthBelowTwentyForGood) {
  auto bad = packet(1, 20);
  bad[3] = 19;
  StreamReader reader;
  Bytes input(bad);
  auto next = reader.next(input);
  ASSERT_FALSE(next.has_value());
  EXPECT_EQ(next.error(), StreamError::kLengthOutOfRange);
  // Nothing after a lost framing is a packet, even a good one.
  const auto good = packet(2, 20);
  Bytes after(good);
  EXPECT_FALSE(reader.next(after).has_value());
}

TEST(StreamReader, RefusesLengthAbove4096OnceTheHeaderIsIn) {
  std::vector<std::uint8_t> header{1, 1, 0x10, 0x01};  // Length 4097.
  StreamReader reader;
  // Byte by byte: nothing is refused before the Length field is whole.
  for (std::size_t i = 0; i < 3; ++i) {
    Bytes one = Bytes(header).subspan(i, 1);
    auto next = reader.next(one);
    ASSERT_TRUE(next.has_value());
    EXPECT_FALSE(next->has_value());
  }
  Bytes last = Bytes(header).subspan(3, 1);
  auto next = reader.next(last);
  ASSERT_FALSE(next.has_value());
  EXPECT_EQ(to_string(next.error()), "length_out_of_range");
}

TEST(StreamReader, RefusesABadLengthAfterGoodPacketsInOneChunk) {
  auto bad = packet(9, 20);
  bad[2] = 0xff;
  const auto stream = concat({packet(1, 20), packet(2, 30), bad});
  StreamReader reader;
  Bytes input(stream);
  EXPECT_TRUE(reader.next(input).value().has_value());
  EXPECT_TRUE(reader.next(input).value().has_value());
  EXPECT_FALSE(reader.next(input).has_value());
}

}  // namespace
}  // namespace rw::radius
