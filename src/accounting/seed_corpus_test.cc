// The seed inputs of entry_fuzz and snapshot_fuzz (tests/corpus/), made from
// real records. The test checks that the checked-in seeds are exactly what
// this generator makes, so a format change cannot leave stale seeds behind;
// with RW_WRITE_SEEDS=1 it rewrites them instead.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "accounting/accounting_request_for_test.h"
#include "accounting/ledger.h"

namespace rw::accounting {
namespace {

using testing::record_of;
using testing::RequestSpec;

using Seeds = std::map<std::string, std::vector<std::uint8_t>>;

Seeds entry_seeds() {
  RequestSpec interim;
  interim.status_type = status::kInterimUpdate;
  interim.session_time_s = 60;
  interim.input_octets = 1000;
  interim.nas_identifier = "ap-7";
  RequestSpec on;
  on.status_type = status::kAccountingOn;
  Record with_vendor = record_of(interim, 1'700'000'060'000);
  const std::vector<std::uint8_t> vsa = {26, 12, 0, 0, 0, 9, 1, 6, 'x', '=', '1', '2'};
  with_vendor.attributes.insert(with_vendor.attributes.end(), vsa.begin(), vsa.end());
  with_vendor.key = compute_record_key(with_vendor.attributes, with_vendor.client);

  // Version 2 entries, stamped as a leader does; seed-records-3-v1 (checked
  // in, not generated) is the same batch as version 1 wrote it.
  const std::int64_t stamp = 1'700'000'061'000;
  Seeds seeds;
  seeds["seed-records-1"] = encode_records_entry(std::vector<Record>{record_of(RequestSpec{})}, stamp);
  seeds["seed-records-3"] = encode_records_entry(
      std::vector<Record>{record_of(RequestSpec{}), with_vendor, record_of(on, 0, "nas2")}, stamp);
  seeds["seed-barrier"] = encode_barrier_entry(3, stamp);
  seeds["seed-export-cursor"] = encode_export_cursor_entry(1, stamp);
  return seeds;
}

Seeds snapshot_seeds() {
  Seeds seeds;
  seeds["seed-empty"] = Ledger().snapshot();
  Ledger ledger;
  std::uint64_t index = 0;
  for (const auto& [name, entry] : entry_seeds()) {
    if (name != "seed-export-cursor") ledger.apply(++index, entry);
  }
  ledger.apply(++index, encode_export_cursor_entry(1, 1'700'000'062'000));
  // A session with what a Disconnect-Request names it by (snapshot version 3).
  RequestSpec named;
  named.session_id = "named-1";
  named.calling_station_id = "aa:bb:cc:dd:ee:01";
  named.framed_ip = std::array<std::uint8_t, 4>{10, 9, 0, 5};
  named.framed_ipv6_prefix = {0, 64, 0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0};
  ledger.apply(++index, encode_records_entry(std::vector<Record>{record_of(named)}, 1'700'000'063'000));
  seeds["seed-busy"] = ledger.snapshot();
  return seeds;
}

std::vector<std::uint8_t> read_seed(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void check_or_write(const std::string& target, const Seeds& seeds) {
  const std::string folder = std::string(RW_SOURCE_ROOT) + "/tests/corpus/" + target + "/";
  const bool write = std::getenv("RW_WRITE_SEEDS") != nullptr;
  for (const auto& [name, bytes] : seeds) {
    const std::string path = folder + name;
    if (write) {
      std::ofstream out(path, std::ios::binary);
      out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
      ASSERT_TRUE(out.good()) << path;
      continue;
    }
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in.good()) << path << " is missing: run accounting_test with RW_WRITE_SEEDS=1";
    const std::vector<std::uint8_t> stored{std::istreambuf_iterator<char>(in),
                                           std::istreambuf_iterator<char>()};
    EXPECT_EQ(stored, bytes) << path << " is stale: run accounting_test with RW_WRITE_SEEDS=1";
  }
}

TEST(SeedCorpus, EntrySeedsAreCurrent) { check_or_write("entry_fuzz", entry_seeds()); }

TEST(SeedCorpus, SnapshotSeedsAreCurrent) { check_or_write("snapshot_fuzz", snapshot_seeds()); }

TEST(SeedCorpus, EntrySeedsAreValid) {
  for (const auto& [name, bytes] : entry_seeds()) EXPECT_TRUE(validate_entry(bytes).has_value()) << name;
}

// Logs and snapshots written before version 2 still apply and restore
// (docs/wire_formats.md): the checked-in version 1 seeds are such bytes.
TEST(SeedCorpus, Version1EntriesAndSnapshotsStillDecode) {
  const std::string root = std::string(RW_SOURCE_ROOT) + "/tests/corpus/";
  auto entry = decode_entry(read_seed(root + "entry_fuzz/seed-records-3-v1"));
  ASSERT_TRUE(entry.has_value()) << to_string(entry.error());
  EXPECT_EQ(entry->records.size(), 3u);
  EXPECT_FALSE(entry->leader_unix_ms.has_value());
  const std::vector<std::uint8_t> v1 = read_seed(root + "snapshot_fuzz/seed-busy-v1");
  ASSERT_EQ(v1.at(4), 1);
  auto restored = Ledger::restore(v1);
  ASSERT_TRUE(restored.has_value()) << to_string(restored.error());
  EXPECT_EQ(restored->last_applied_index(), 4u);
  EXPECT_EQ(restored->records().size(), 3u);
  EXPECT_FALSE(restored->sessions().empty());
  // It is written back as the current version, which restores to the same state.
  const std::vector<std::uint8_t> v2 = restored->snapshot();
  EXPECT_EQ(v2.at(4), 3);
  auto again = Ledger::restore(v2);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->snapshot(), v2);
  EXPECT_EQ(again->sessions().size(), restored->sessions().size());
}

// Snapshots of version 2 (before sessions kept Calling-Station-Id and framed
// addresses) still restore, their sessions without them; seed-busy-v2 is
// such bytes, checked in.
TEST(SeedCorpus, Version2SnapshotsStillRestore) {
  const std::vector<std::uint8_t> v2 =
      read_seed(std::string(RW_SOURCE_ROOT) + "/tests/corpus/snapshot_fuzz/seed-busy-v2");
  ASSERT_EQ(v2.at(4), 2);
  auto restored = Ledger::restore(v2);
  ASSERT_TRUE(restored.has_value()) << to_string(restored.error());
  ASSERT_FALSE(restored->sessions().empty());
  for (const auto& [key, session] : restored->sessions()) {
    EXPECT_TRUE(session.calling_station_id.empty());
    EXPECT_TRUE(session.framed_ip_address.empty());
  }
  const std::vector<std::uint8_t> v3 = restored->snapshot();
  EXPECT_EQ(v3.at(4), 3);
  auto again = Ledger::restore(v3);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->snapshot(), v3);
  EXPECT_EQ(again->sessions(), restored->sessions());
}

}  // namespace
}  // namespace rw::accounting
