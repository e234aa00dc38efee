// Benchmarks of dictionary lookups and value conversion, the per-attribute
// work of decoding a packet and of reading a users file.
#include <benchmark/benchmark.h>

#include <array>
#include <filesystem>
#include <string_view>

#include "radius/dictionary.h"

namespace rw::radius {
namespace {

void BM_DictionaryFindByName(benchmark::State& state) {
  auto dictionary = Dictionary::builtin();
  constexpr std::array<std::string_view, 4> kNames = {"User-Name", "acct-status-type", "MS-CHAP2-Response",
                                                      "Cleartext-Password"};
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(dictionary->find(kNames[i++ % kNames.size()]));
  }
}
BENCHMARK(BM_DictionaryFindByName);

void BM_DictionaryFindByNumber(benchmark::State& state) {
  auto dictionary = Dictionary::builtin();
  std::uint32_t type = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(dictionary->find(0, type));
    type = type % 100 + 1;
  }
}
BENCHMARK(BM_DictionaryFindByNumber);

void BM_DictionaryParseIntegerValueName(benchmark::State& state) {
  const AttributeDef& def = *Dictionary::builtin()->find("NAS-Port-Type");
  for (auto _ : state) benchmark::DoNotOptimize(parse_value(def, "Wireless-802.11"));
}
BENCHMARK(BM_DictionaryParseIntegerValueName);

void BM_DictionaryFormatIpAddr(benchmark::State& state) {
  const AttributeDef& def = *Dictionary::builtin()->find("Framed-IP-Address");
  const std::array<std::uint8_t, 4> address = {192, 0, 2, 1};
  for (auto _ : state) benchmark::DoNotOptimize(format_value(def, address));
}
BENCHMARK(BM_DictionaryFormatIpAddr);

// Start-up cost of reading Debian's whole dictionary tree.
void BM_DictionaryLoadDebian(benchmark::State& state) {
  constexpr const char* kPath = "/usr/share/freeradius/dictionary";
  if (!std::filesystem::exists(kPath)) {
    state.SkipWithError("freeradius-common is not installed");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(Dictionary::load(kPath));
}
BENCHMARK(BM_DictionaryLoadDebian)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace rw::radius
