// Tests of the gateway-to-member frames: byte layouts against
// docs/wire_formats.md, strict decoding, and FrameReader over arbitrary chunks.
#include "submission/frames.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

#include <string>

#include "base/random.h"

namespace rw::submission {
namespace {

std::vector<std::uint8_t> encode(const Frame& frame) {
  std::vector<std::uint8_t> out;
  encode_frame(frame, out);
  return out;
}

RecordKey key_of(std::uint8_t fill) {
  RecordKey key;
  key.fill(fill);
  return key;
}

TEST(EncodeFrame, HelloLayoutMatchesWireFormats) {
  auto bytes = encode(Hello{.version = 1, .gateway_id = 0x0102030405060708});
  std::vector<std::uint8_t> expected{0, 0, 0, 11, 1, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(bytes, expected);
}

TEST(EncodeFrame, SubmitLayoutMatchesWireFormats) {
  const std::uint8_t record[] = {0xaa, 0xbb, 0xcc};
  Submit submit{.request_id = 7, .records = {{key_of(0x11), Bytes(record)}}};
  auto bytes = encode(submit);
  ASSERT_EQ(bytes.size(), submit_frame_bytes(1, 3));
  EXPECT_EQ(bytes[3], bytes.size() - 4);
  EXPECT_EQ(bytes[4], 3);      // Type Submit.
  EXPECT_EQ(bytes[12], 7);     // Low byte of the request id.
  EXPECT_EQ(bytes[13], 0);     // Record count, high byte.
  EXPECT_EQ(bytes[14], 1);     // Record count, low byte.
  EXPECT_EQ(bytes[15], 0x11);  // Key, first byte.
  EXPECT_EQ(bytes[31], 0);     // Record length, high byte.
  EXPECT_EQ(bytes[32], 3);     // Record length, low byte.
  EXPECT_EQ(bytes[33], 0xaa);  // Record bytes.
}

TEST(DecodeFrame, RoundTripsEveryType) {
  const std::uint8_t record_a[] = {1, 2, 3};
  const std::uint8_t record_b[] = {4};
  const std::string long_name(kUserNameBytesMax, 'x');
  std::vector<Frame> frames{
      Hello{.gateway_id = 42},
      HelloAck{.member_id = 2, .is_leader = false, .leader = "127.0.0.1:7401"},
      HelloAck{.member_id = 1, .is_leader = true},
      Submit{.request_id = 9, .records = {{key_of(1), Bytes(record_a)}, {key_of(2), Bytes(record_b)}}},
      Committed{.request_id = 9, .log_index = 1234},
      NotLeader{.request_id = 3, .leader = "[::1]:7402"},
      NotLeader{.request_id = 3},
      Busy{.request_id = 4, .reason = BusyReason::kNoQuorum},
      Ping{.nonce = 5},
      Pong{.nonce = 5},
      SessionCountQuery{.request_id = 6, .user_name = "alice"},
      SessionCountQuery{.request_id = 6, .user_name = std::string_view(long_name)},
      SessionCountAnswer{.request_id = 6, .open_sessions = 0xfffffffe},
  };
  for (const Frame& frame : frames) {
    auto bytes = encode(frame);
    auto decoded = decode_frame(bytes);
    ASSERT_TRUE(decoded) << to_string(decoded.error());
    ASSERT_EQ(decoded->index(), frame.index());
    EXPECT_EQ(encode(*decoded), bytes);
  }
}

TEST(EncodeFrame, SessionCountLayoutsMatchWireFormats) {
  EXPECT_EQ(encode(SessionCountQuery{.request_id = 0x0102030405060708, .user_name = "bob"}),
            (std::vector<std::uint8_t>{0, 0, 0, 13, 9, 1, 2, 3, 4, 5, 6, 7, 8, 3, 'b', 'o', 'b'}));
  EXPECT_EQ(encode(SessionCountAnswer{.request_id = 7, .open_sessions = 0x01020304}),
            (std::vector<std::uint8_t>{0, 0, 0, 13, 10, 0, 0, 0, 0, 0, 0, 0, 7, 1, 2, 3, 4}));
}

TEST(DecodeFrame, SessionCountQueryBorrowsTheUserName) {
  auto bytes = encode(SessionCountQuery{.request_id = 1, .user_name = "carol"});
  auto decoded = decode_frame(bytes);
  ASSERT_TRUE(decoded);
  const auto& query = std::get<SessionCountQuery>(*decoded);
  EXPECT_EQ(query.user_name, "carol");
  EXPECT_EQ(query.user_name.data(), reinterpret_cast<const char*>(bytes.data() + 14));
}

TEST(DecodeFrame, SubmitRecordsBorrowTheInput) {
  const std::uint8_t record[] = {9, 8, 7};
  auto bytes = encode(Submit{.request_id = 1, .records = {{key_of(3), Bytes(record)}}});
  auto decoded = decode_frame(bytes);
  ASSERT_TRUE(decoded);
  const auto& submit = std::get<Submit>(*decoded);
  ASSERT_EQ(submit.records.size(), 1u);
  EXPECT_EQ(submit.records[0].key, key_of(3));
  EXPECT_EQ(submit.records[0].record.data(), bytes.data() + bytes.size() - 3);
}

Result<Frame, FrameError> decode_vector(std::vector<std::uint8_t> bytes) { return decode_frame(bytes); }

TEST(DecodeFrame, RejectsWithNamedErrors) {
  EXPECT_EQ(decode_vector({0, 0, 0}).error(), FrameError::kTruncated);
  EXPECT_EQ(decode_vector({0, 0, 0, 0}).error(), FrameError::kEmptyFrame);
  EXPECT_EQ(decode_vector({0, 0x10, 0, 1, 7}).error(), FrameError::kFrameTooLarge);
  EXPECT_EQ(decode_vector({0, 0, 0, 2, 7}).error(), FrameError::kLengthMismatch);
  EXPECT_EQ(decode_vector({0, 0, 0, 1, 11}).error(), FrameError::kUnknownType);
  EXPECT_EQ(decode_vector({0, 0, 0, 1, 0}).error(), FrameError::kUnknownType);
  EXPECT_EQ(decode_vector({0, 0, 0, 5, 7, 0, 0, 0, 0}).error(), FrameError::kTruncated);
  EXPECT_EQ(decode_vector({0, 0, 0, 10, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0}).error(), FrameError::kTrailingBytes);
  EXPECT_EQ(decode_vector({0, 0, 0, 11, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0}).error(),
            FrameError::kUnsupportedVersion);
  EXPECT_EQ(decode_vector({0, 0, 0, 10, 6, 0, 0, 0, 0, 0, 0, 0, 1, 5}).error(),
            FrameError::kUnknownBusyReason);
  EXPECT_EQ(decode_vector({0, 0, 0, 11, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0}).error(), FrameError::kEmptySubmit);
  // HelloAck with is_leader = 2.
  EXPECT_EQ(decode_vector({0, 0, 0, 13, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0}).error(),
            FrameError::kBadBoolean);
}

TEST(DecodeFrame, RejectsSessionCountQueryWithoutAUsableUserName) {
  // User-Name length 0.
  EXPECT_EQ(decode_vector({0, 0, 0, 10, 9, 0, 0, 0, 0, 0, 0, 0, 1, 0}).error(), FrameError::kBadUserName);
  // Length 254: more than a RADIUS attribute can carry.
  std::vector<std::uint8_t> long_name{0, 0, 1, 8, 9, 0, 0, 0, 0, 0, 0, 0, 1, 254};
  long_name.resize(4 + 10 + 254, 'x');
  EXPECT_EQ(decode_frame(long_name).error(), FrameError::kBadUserName);
  // Length 3 with two bytes.
  EXPECT_EQ(decode_vector({0, 0, 0, 12, 9, 0, 0, 0, 0, 0, 0, 0, 1, 3, 'a', 'b'}).error(),
            FrameError::kTruncated);
  // An answer without its count.
  EXPECT_EQ(decode_vector({0, 0, 0, 9, 10, 0, 0, 0, 0, 0, 0, 0, 1}).error(), FrameError::kTruncated);
}

TEST(DecodeFrame, RejectsRecordCountBeyondBound) {
  std::vector<std::uint8_t> bytes{0, 0, 0, 11, 3, 0, 0, 0, 0, 0, 0, 0, 1};
  bytes.push_back(static_cast<std::uint8_t>((kSubmitRecordsMax + 1) >> 8));
  bytes.push_back(static_cast<std::uint8_t>(kSubmitRecordsMax + 1));
  EXPECT_EQ(decode_frame(bytes).error(), FrameError::kTooManyRecords);
}

TEST(DecodeFrame, RejectsLyingRecordCountWithoutReadingPastTheEnd) {
  std::vector<std::uint8_t> bytes{0, 0, 0, 11, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0x0f, 0xff};
  EXPECT_EQ(decode_frame(bytes).error(), FrameError::kTruncated);
}

TEST(DecodeFrame, RejectsEmptyAndOversizedRecords) {
  auto build = [](std::uint16_t length) {
    std::vector<std::uint8_t> body{3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1};
    body.insert(body.end(), 16, 0x5a);
    body.push_back(static_cast<std::uint8_t>(length >> 8));
    body.push_back(static_cast<std::uint8_t>(length));
    body.insert(body.end(), length, 0x01);
    // Appended byte by byte: g++ 12 warns falsely on vector::insert here.
    std::vector<std::uint8_t> frame{0, 0, static_cast<std::uint8_t>(body.size() >> 8),
                                    static_cast<std::uint8_t>(body.size())};
    for (std::uint8_t byte : body) frame.push_back(byte);
    return frame;
  };
  EXPECT_EQ(decode_frame(build(0)).error(), FrameError::kEmptyRecord);
  EXPECT_EQ(decode_frame(build(kRecordBytesMax + 1)).error(), FrameError::kRecordTooLarge);
  EXPECT_TRUE(decode_frame(build(kRecordBytesMax)));
}

// Every whole frame the reader holds now, decoded (their records view the
// reader's buffer: valid until the next feed); an error fails the test.
std::vector<Frame> drain(FrameReader& reader) {
  std::vector<Frame> frames;
  for (;;) {
    auto frame = reader.next();
    EXPECT_TRUE(frame);
    if (!frame || !*frame) return frames;
    auto decoded = decode_frame(**frame);
    EXPECT_TRUE(decoded);
    if (!decoded) return frames;
    frames.push_back(std::move(*decoded));
  }
}

TEST(FrameReader, YieldsWholeFramesFromArbitraryChunks) {
  std::vector<std::uint8_t> stream;
  for (std::uint64_t i = 0; i < 50; ++i) {
    encode_frame(Committed{.request_id = i, .log_index = i * 10}, stream);
    encode_frame(NotLeader{.request_id = i, .leader = "10.0.0.1:7400"}, stream);
  }
  SeededRandom random(7);
  FrameReader reader;
  std::uint64_t committed_seen = 0;
  std::size_t offset = 0;
  while (offset < stream.size()) {
    std::size_t chunk = 1 + random.below(40);
    chunk = std::min(chunk, stream.size() - offset);
    ASSERT_EQ(reader.feed(Bytes(stream.data() + offset, chunk)), chunk);
    offset += chunk;
    for (const Frame& decoded : drain(reader)) {
      if (const auto* committed = std::get_if<Committed>(&decoded)) {
        EXPECT_EQ(committed->request_id, committed_seen);
        EXPECT_EQ(committed->log_index, committed_seen * 10);
        ++committed_seen;
      }
    }
  }
  EXPECT_EQ(committed_seen, 50u);
  EXPECT_EQ(reader.buffered(), 0u);
}

// The pages of `bytes` at `at` that are resident (mincore).
std::size_t resident_pages(const std::uint8_t* at, std::size_t bytes) {
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(at) & ~(page - 1);
  const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(at) + bytes;
  std::vector<unsigned char> pages((end - first + page - 1) / page);
  EXPECT_EQ(::mincore(reinterpret_cast<void*>(first), end - first, pages.data()), 0);
  return static_cast<std::size_t>(
      std::count_if(pages.begin(), pages.end(), [](unsigned char p) { return p & 1; }));
}

// A burst fills the reader far past what it keeps; once the burst is over
// (a release_idle call with no receive past kReaderKeptBytes since the
// previous one) those pages leave memory, and frames read on intact.
TEST(FrameReader, GivesBackTheBurstsPagesOnceIdle) {
  std::vector<std::uint8_t> stream;
  std::vector<std::uint8_t> record(kRecordBytesMax, 0x42);
  for (std::uint64_t i = 0; stream.size() < 600 * 1024; ++i) {
    Submit submit{.request_id = i};
    for (std::uint8_t k = 0; k < 8; ++k) submit.records.push_back({key_of(k), record});
    encode_frame(submit, stream);
  }
  FrameReader reader;
  ASSERT_EQ(reader.feed(stream), stream.size());
  const std::uint8_t* buffer = reader.writable().data() - stream.size();
  EXPECT_GE(resident_pages(buffer, stream.size()), stream.size() / 4096);
  EXPECT_EQ(reader.release_idle(), 0U);  // bytes buffered
  const std::size_t frames = drain(reader).size();
  EXPECT_GT(frames, 0U);
  EXPECT_EQ(reader.touched(), stream.size());
  EXPECT_EQ(reader.release_idle(), 0U);  // the burst reached past the kept bytes since the last call
  const std::size_t released = reader.release_idle();
  EXPECT_GE(released, stream.size() - kReaderKeptBytes - 8192);
  EXPECT_EQ(reader.touched(), kReaderKeptBytes);
  EXPECT_EQ(resident_pages(buffer + kReaderKeptBytes + 4096, stream.size() - kReaderKeptBytes - 8192), 0U);
  EXPECT_EQ(reader.release_idle(), 0U);  // nothing more to give
  // Read on: the same frames decode from the released pages.
  std::size_t again = 0;
  std::size_t offset = 0;
  while (offset < stream.size()) {
    offset +=
        reader.feed(Bytes(stream).subspan(offset, std::min<std::size_t>(70000, stream.size() - offset)));
    for (const Frame& decoded : drain(reader)) {
      ASSERT_TRUE(std::holds_alternative<Submit>(decoded));
      const Bytes got = std::get<Submit>(decoded).records.at(7).record;
      EXPECT_TRUE(std::equal(got.begin(), got.end(), record.begin(), record.end()));
      ++again;
    }
  }
  EXPECT_EQ(again, frames);
}

TEST(FrameReader, RefusesOversizedLengthPrefixAtOnce) {
  FrameReader reader;
  const std::uint8_t prefix[] = {0x7f, 0xff, 0xff, 0xff};
  ASSERT_EQ(reader.feed(prefix), 4u);
  auto frame = reader.next();
  ASSERT_FALSE(frame);
  EXPECT_EQ(frame.error(), FrameError::kFrameTooLarge);
  EXPECT_FALSE(reader.next());  // The error is final.
}

TEST(FrameReader, NeverTakesMoreThanOneMaximalFrame) {
  FrameReader reader;
  std::vector<std::uint8_t> big(kLengthPrefixBytes + kFrameBodyBytesMax + 100, 0);
  EXPECT_EQ(reader.feed(big), kLengthPrefixBytes + kFrameBodyBytesMax);
}

TEST(FrameReader, AcceptsAFrameOfMaximalSize) {
  // A Submit of records filling the frame exactly to kFrameBodyBytesMax.
  std::vector<std::uint8_t> record(kRecordBytesMax, 0x42);
  Submit submit{.request_id = 1};
  std::size_t total = 0;
  while (submit_frame_bytes(submit.records.size() + 1, total + record.size()) <=
         kLengthPrefixBytes + kFrameBodyBytesMax) {
    submit.records.push_back({key_of(static_cast<std::uint8_t>(submit.records.size())), record});
    total += record.size();
  }
  std::vector<std::uint8_t> bytes;
  encode_frame(submit, bytes);
  FrameReader reader;
  std::size_t offset = 0;
  std::size_t frames = 0;
  while (offset < bytes.size()) {
    offset += reader.feed(Bytes(bytes).subspan(offset));
    auto frame = reader.next();
    ASSERT_TRUE(frame);
    if (*frame) {
      ++frames;
      EXPECT_TRUE(decode_frame(**frame));
    }
  }
  EXPECT_EQ(frames, 1u);
}

}  // namespace
}  // namespace rw::submission
