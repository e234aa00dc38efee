// Tests of the log entry encoding: round trips and every refusal by name.
#include "accounting/entry.h"

#include <gtest/gtest.h>

#include "accounting/accounting_request_for_test.h"

namespace rw::accounting {
namespace {

using testing::record_of;
using testing::RequestSpec;

std::vector<Record> two_records() {
  RequestSpec interim;
  interim.status_type = status::kInterimUpdate;
  interim.session_time_s = 60;
  return {record_of(RequestSpec{}), record_of(interim)};
}

EntryError decode_error(const std::vector<std::uint8_t>& bytes) {
  auto entry = decode_entry(bytes);
  EXPECT_FALSE(entry.has_value());
  return entry ? EntryError::kTruncated : entry.error();
}

TEST(Entry, RecordsRoundTrip) {
  const std::vector<Record> records = two_records();
  const std::vector<std::uint8_t> bytes = encode_records_entry(records);
  auto entry = decode_entry(bytes);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->type, EntryType::kRecords);
  EXPECT_EQ(entry->records, records);
  EXPECT_EQ(encode_entry(*entry), bytes);
  EXPECT_EQ(validate_entry(bytes).value(), EntryType::kRecords);
}

TEST(Entry, BarrierAndCursorRoundTrip) {
  auto barrier = decode_entry(encode_barrier_entry(7));
  ASSERT_TRUE(barrier.has_value());
  EXPECT_EQ(barrier->type, EntryType::kBarrier);
  EXPECT_EQ(barrier->barrier_term, 7u);
  auto cursor = decode_entry(encode_export_cursor_entry(42));
  ASSERT_TRUE(cursor.has_value());
  EXPECT_EQ(cursor->type, EntryType::kExportCursor);
  EXPECT_EQ(cursor->exported_through, 42u);
}

TEST(Entry, Version2CarriesTheLeaderStampAndVersion1StillDecodes) {
  const std::vector<Record> records = two_records();
  const std::int64_t stamp = 1'700'000'000'123;
  const std::vector<std::uint8_t> v2 = encode_records_entry(records, stamp);
  ASSERT_EQ(v2[2], kEntryVersion);
  auto entry = decode_entry(v2);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->leader_unix_ms, stamp);
  EXPECT_EQ(entry->records, records);
  EXPECT_EQ(encode_entry(*entry), v2);
  // The same records without a stamp: version 1, 8 bytes shorter, no time.
  const std::vector<std::uint8_t> v1 = encode_records_entry(records);
  ASSERT_EQ(v1[2], kEntryVersion1);
  EXPECT_EQ(v2.size(), v1.size() + 8);
  auto old = decode_entry(v1);
  ASSERT_TRUE(old.has_value());
  EXPECT_FALSE(old->leader_unix_ms.has_value());
  EXPECT_EQ(old->records, records);
  EXPECT_EQ(encode_entry(*old), v1);
  // Barrier and cursor: a version 2 header is 12 bytes, then the value.
  const std::vector<std::uint8_t> cursor = encode_export_cursor_entry(42, stamp);
  EXPECT_EQ(cursor.size(), kEntryHeaderLength + 8);
  EXPECT_EQ(decode_entry(cursor)->exported_through, 42u);
  EXPECT_EQ(decode_entry(cursor)->leader_unix_ms, stamp);
  // A version 2 header cut inside its stamp.
  EXPECT_EQ(decode_error({'R', 'A', 2, 2, 0, 0, 0}), EntryError::kTruncated);
  // The builder stamps what it was given.
  EntryBuilder builder(kEntryBytesMax, stamp);
  for (const Record& record : records) ASSERT_TRUE(builder.add(record));
  EXPECT_EQ(builder.finish(), v2);
}

TEST(Entry, BuilderMatchesEncodeAndSplitsAtItsBound) {
  const std::vector<Record> records = two_records();
  EntryBuilder builder;
  for (const Record& record : records) ASSERT_TRUE(builder.add(record));
  EXPECT_EQ(builder.finish(), encode_records_entry(records));
  EXPECT_TRUE(builder.empty());

  std::vector<std::uint8_t> body;
  encode_record(records[0], body);
  EntryBuilder small(kEntryHeaderLength + 4 + 2 + kRecordLengthMax);
  ASSERT_TRUE(small.add_encoded(body));
  ASSERT_TRUE(small.add_encoded(body));
  std::size_t added = 2;
  while (small.add_encoded(body)) ++added;
  EXPECT_EQ(small.record_count(), added);
  EXPECT_LE(small.size(), kEntryHeaderLength + 4 + 2 + kRecordLengthMax);
}

TEST(Entry, RefusesEachMalformedHeader) {
  std::vector<std::uint8_t> good = encode_barrier_entry(1);
  EXPECT_EQ(decode_error({}), EntryError::kTruncated);
  auto bad_magic = good;
  bad_magic[0] = 'X';
  EXPECT_EQ(decode_error(bad_magic), EntryError::kBadMagic);
  auto bad_version = good;
  bad_version[2] = 3;
  EXPECT_EQ(decode_error(bad_version), EntryError::kUnsupportedVersion);
  bad_version[2] = 0;
  EXPECT_EQ(decode_error(bad_version), EntryError::kUnsupportedVersion);
  auto bad_type = good;
  bad_type[3] = 9;
  EXPECT_EQ(decode_error(bad_type), EntryError::kUnknownType);
  auto trailing = good;
  trailing.push_back(0);
  EXPECT_EQ(decode_error(trailing), EntryError::kTrailingBytes);
  auto short_barrier = good;
  short_barrier.pop_back();
  EXPECT_EQ(decode_error(short_barrier), EntryError::kTruncated);
  EXPECT_EQ(decode_error({'R', 'A', 1, 1, 0, 0, 0, 0}), EntryError::kEmptyBatch);
  EXPECT_EQ(decode_error({'R', 'A', 1, 1, 0, 0, 0x10, 1}), EntryError::kTooManyRecords);
}

// Builds a one-record entry from a hand-edited record.
std::vector<std::uint8_t> entry_with(const Record& record) {
  std::vector<std::uint8_t> bytes = {'R', 'A', 1, 1, 0, 0, 0, 1};
  std::vector<std::uint8_t> body;
  encode_record(record, body);
  bytes.push_back(static_cast<std::uint8_t>(body.size() >> 8));
  bytes.push_back(static_cast<std::uint8_t>(body.size()));
  bytes.insert(bytes.end(), body.begin(), body.end());
  return bytes;
}

TEST(Entry, RefusesEachMalformedRecord) {
  const Record good = record_of(RequestSpec{});

  Record malformed = good;
  malformed.attributes.push_back(1);  // half a header
  EXPECT_EQ(decode_error(entry_with(malformed)), EntryError::kMalformedAttributes);

  Record proxied = good;
  for (std::uint8_t b : {std::uint8_t{33}, std::uint8_t{3}, std::uint8_t{'x'}})
    proxied.attributes.push_back(b);
  EXPECT_EQ(decode_error(entry_with(proxied)), EntryError::kForbiddenAttribute);

  Record wrong_status = good;
  wrong_status.status_type = status::kStop;
  EXPECT_EQ(decode_error(entry_with(wrong_status)), EntryError::kStatusTypeMismatch);

  RequestSpec no_session;
  no_session.session_id = "x";
  Record without_session = record_of(no_session);
  // Rewrite the one-octet Acct-Session-Id into a User-Name.
  for (std::size_t at = 0; at < without_session.attributes.size(); at += without_session.attributes[at + 1]) {
    if (without_session.attributes[at] == radius::attr::kAcctSessionId) {
      without_session.attributes[at] = radius::attr::kUserName;
    }
  }
  EXPECT_EQ(decode_error(entry_with(without_session)), EntryError::kNoSessionId);

  auto truncated = entry_with(good);
  truncated.pop_back();
  EXPECT_EQ(decode_error(truncated), EntryError::kTruncated);
}

TEST(ValidateEntry, RefusesWrongKey) {
  Record forged = record_of(RequestSpec{});
  forged.key.bytes[0] ^= 1;
  const auto bytes = entry_with(forged);
  EXPECT_TRUE(decode_entry(bytes).has_value());
  auto validated = validate_entry(bytes);
  ASSERT_FALSE(validated.has_value());
  EXPECT_EQ(validated.error(), EntryError::kKeyMismatch);
}

TEST(EntryError, EveryReasonHasAName) {
  for (std::size_t i = 0; i < kEntryErrorCount; ++i) {
    EXPECT_NE(to_string(static_cast<EntryError>(i)), "unknown") << i;
  }
}

}  // namespace
}  // namespace rw::accounting
