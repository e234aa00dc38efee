// The record key's hash, and the candidates issue 15 asks to weigh against
// it, over the same ~200 bytes (docs/accounting.md "Record key and
// de-duplication"): SHA-256 through the low-level API (what
// compute_record_key uses), through EVP with the algorithm fetched once, and
// through the one-shot SHA256(); BLAKE2s-256 through EVP; SipHash-2-4 with a
// 128-bit output through EVP_MAC (a keyed hash: it would need a key shared by
// every gateway and member); MD5 for scale.
#include <benchmark/benchmark.h>

// SHA256_Init/Update/Final and MD5 are deprecated in OpenSSL 3 (see
// compute_record_key for why the low-level calls are used).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/md5.h>
#include <openssl/params.h>
#include <openssl/sha.h>

#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include "accounting/accounting_request_for_test.h"
#include "accounting/record.h"

namespace rw::accounting {
namespace {

// The bytes compute_record_key hashes for a 211-octet Interim-Update (the
// request of gateway_bench's BM_AccountingReceivePath): version, client
// name, the kept attributes.
std::vector<std::uint8_t> key_input() {
  testing::RequestSpec spec = testing::broadband_start(1);
  spec.status_type = status::kInterimUpdate;
  spec.session_time_s = 1;
  spec.class_value = "radiusward-bench-class";
  const testing::AccountingRequest request(spec);
  const Bytes attributes = request.packet().attribute_bytes();
  constexpr std::array<std::uint8_t, 5> kHead{1, 3, 'n', 'a', 's'};
  std::vector<std::uint8_t> out(kHead.size() + attributes.size());
  std::copy(kHead.begin(), kHead.end(), out.begin());
  std::copy(attributes.begin(), attributes.end(), out.begin() + kHead.size());
  return out;
}

void label(benchmark::State& state, std::size_t size) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * size));
  state.SetLabel(std::to_string(size) + " octets");
}

// compute_record_key as the gateway calls it: the walk, the sort by type
// and SHA-256.
void BM_ComputeRecordKey(benchmark::State& state) {
  const std::vector<std::uint8_t> input = key_input();
  const Bytes attributes = Bytes(input).subspan(5);
  for (auto _ : state) benchmark::DoNotOptimize(compute_record_key(attributes, "nas"));
  label(state, input.size());
}
BENCHMARK(BM_ComputeRecordKey);

void BM_KeyHashSha256LowLevel(benchmark::State& state) {
  const std::vector<std::uint8_t> input = key_input();
  std::array<std::uint8_t, SHA256_DIGEST_LENGTH> digest{};
  for (auto _ : state) {
    SHA256_CTX context;
    SHA256_Init(&context);
    SHA256_Update(&context, input.data(), input.size());
    SHA256_Final(digest.data(), &context);
    benchmark::DoNotOptimize(digest);
  }
  label(state, input.size());
}
BENCHMARK(BM_KeyHashSha256LowLevel);

void BM_KeyHashSha256OneShot(benchmark::State& state) {
  const std::vector<std::uint8_t> input = key_input();
  std::array<std::uint8_t, SHA256_DIGEST_LENGTH> digest{};
  for (auto _ : state) {
    SHA256(input.data(), input.size(), digest.data());
    benchmark::DoNotOptimize(digest);
  }
  label(state, input.size());
}
BENCHMARK(BM_KeyHashSha256OneShot);

// EVP with the algorithm fetched once and one context reused: the cheapest
// way through EVP.
void evp_digest(benchmark::State& state, const char* name) {
  const std::vector<std::uint8_t> input = key_input();
  std::unique_ptr<EVP_MD, decltype(&EVP_MD_free)> md(EVP_MD_fetch(nullptr, name, nullptr), EVP_MD_free);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!md || !context) {
    state.SkipWithError("algorithm not available");
    return;
  }
  std::array<std::uint8_t, EVP_MAX_MD_SIZE> digest{};
  unsigned length = 0;
  for (auto _ : state) {
    EVP_DigestInit_ex2(context.get(), md.get(), nullptr);
    EVP_DigestUpdate(context.get(), input.data(), input.size());
    EVP_DigestFinal_ex(context.get(), digest.data(), &length);
    benchmark::DoNotOptimize(digest);
  }
  label(state, input.size());
}

void BM_KeyHashSha256Evp(benchmark::State& state) { evp_digest(state, "SHA256"); }
BENCHMARK(BM_KeyHashSha256Evp);

void BM_KeyHashBlake2sEvp(benchmark::State& state) { evp_digest(state, "BLAKE2S-256"); }
BENCHMARK(BM_KeyHashBlake2sEvp);

// SipHash-2-4, 128-bit output, key set once; each message re-initialises
// a duplicate of the keyed context (EVP_MAC_init with no key keeps it).
void BM_KeyHashSipHashEvpMac(benchmark::State& state) {
  const std::vector<std::uint8_t> input = key_input();
  std::unique_ptr<EVP_MAC, decltype(&EVP_MAC_free)> mac(EVP_MAC_fetch(nullptr, "SIPHASH", nullptr),
                                                        EVP_MAC_free);
  std::unique_ptr<EVP_MAC_CTX, decltype(&EVP_MAC_CTX_free)> context(
      mac ? EVP_MAC_CTX_new(mac.get()) : nullptr, EVP_MAC_CTX_free);
  std::array<unsigned char, 16> key{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  std::size_t size = 16;
  const std::array<OSSL_PARAM, 2> params{OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &size),
                                         OSSL_PARAM_construct_end()};
  if (!context || EVP_MAC_init(context.get(), key.data(), key.size(), params.data()) != 1) {
    state.SkipWithError("SipHash not available");
    return;
  }
  std::array<std::uint8_t, 16> digest{};
  std::size_t length = 0;
  for (auto _ : state) {
    EVP_MAC_init(context.get(), nullptr, 0, nullptr);
    EVP_MAC_update(context.get(), input.data(), input.size());
    EVP_MAC_final(context.get(), digest.data(), &length, digest.size());
    benchmark::DoNotOptimize(digest);
  }
  label(state, input.size());
}
BENCHMARK(BM_KeyHashSipHashEvpMac);

void BM_KeyHashMd5LowLevel(benchmark::State& state) {
  const std::vector<std::uint8_t> input = key_input();
  std::array<std::uint8_t, MD5_DIGEST_LENGTH> digest{};
  for (auto _ : state) {
    MD5(input.data(), input.size(), digest.data());
    benchmark::DoNotOptimize(digest);
  }
  label(state, input.size());
}
BENCHMARK(BM_KeyHashMd5LowLevel);

}  // namespace
}  // namespace rw::accounting

#pragma GCC diagnostic pop
