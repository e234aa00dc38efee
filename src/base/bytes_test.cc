#include "base/bytes.h"

#include <array>

#include <gtest/gtest.h>

#include "base/random.h"
#include "base/result.h"

namespace rw {
namespace {

TEST(ByteReader, ReadsBigEndianAndFailsPastTheEnd) {
  const std::array<std::uint8_t, 7> input{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07};
  ByteReader reader(input);
  std::uint16_t a = 0;
  std::uint32_t b = 0;
  ASSERT_TRUE(reader.read_u16(a));
  ASSERT_TRUE(reader.read_u32(b));
  EXPECT_EQ(a, 0x0102);
  EXPECT_EQ(b, 0x03040506u);
  EXPECT_TRUE(reader.read_bytes(2).empty());
  EXPECT_TRUE(reader.failed());
  std::uint8_t c = 0;
  EXPECT_FALSE(reader.read_u8(c));
}

TEST(ByteWriter, OverflowWritesNothing) {
  std::array<std::uint8_t, 3> buffer{};
  ByteWriter writer(buffer);
  writer.write_u16(0xabcd);
  writer.write_u16(0x1234);
  EXPECT_TRUE(writer.overflowed());
  EXPECT_EQ(writer.size(), 2u);
  EXPECT_EQ(buffer[0], 0xab);
  EXPECT_EQ(buffer[2], 0x00);
}

TEST(ConstantTimeEqual, ComparesContentsAndLengths) {
  EXPECT_TRUE(constant_time_equal(as_bytes("abc"), as_bytes("abc")));
  EXPECT_FALSE(constant_time_equal(as_bytes("abc"), as_bytes("abd")));
  EXPECT_FALSE(constant_time_equal(as_bytes("abc"), as_bytes("ab")));
}

TEST(SeededRandom, SameSeedSameStream) {
  SeededRandom a(42);
  SeededRandom b(42);
  SeededRandom c(43);
  EXPECT_EQ(a.next_u64(), b.next_u64());
  EXPECT_NE(a.next_u64(), c.next_u64());
}

Result<int, int> half(int x) {
  if (x % 2 != 0) return fail(x);
  return x / 2;
}

TEST(Result, CarriesValueOrError) {
  EXPECT_EQ(half(4).value(), 2);
  EXPECT_EQ(half(3).error(), 3);
}

}  // namespace
}  // namespace rw
