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

  Seeds seeds;
  seeds["seed-records-1"] = encode_records_entry(std::vector<Record>{record_of(RequestSpec{})});
  seeds["seed-records-3"] = encode_records_entry(
      std::vector<Record>{record_of(RequestSpec{}), with_vendor, record_of(on, 0, "nas2")});
  seeds["seed-barrier"] = encode_barrier_entry(3);
  seeds["seed-export-cursor"] = encode_export_cursor_entry(1);
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
  ledger.apply(++index, encode_export_cursor_entry(1));
  seeds["seed-busy"] = ledger.snapshot();
  return seeds;
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

}  // namespace
}  // namespace rw::accounting
