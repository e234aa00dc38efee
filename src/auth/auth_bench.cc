// Cost of one verification per method and stored password form, for
// docs/authentication.md: the fast hashes versus crypt(3), which is slow by
// design.
#include <benchmark/benchmark.h>
#include <crypt.h>

#include <array>
#include <string>

#include "auth/chap.h"
#include "auth/mab.h"
#include "auth/mschap.h"
#include "auth/password.h"
#include "base/random.h"

namespace rw::auth {
namespace {

void pap(benchmark::State& state, const Credential& credential) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(verify_pap(credential, "correct horse battery"));
  }
}

std::string crypt_hash(const char* prefix, unsigned long cost) {
  std::array<std::uint8_t, 16> salt{};
  SeededRandom(1).fill(salt);
  std::array<char, CRYPT_GENSALT_OUTPUT_SIZE> setting{};
  crypt_gensalt_rn(prefix, cost, reinterpret_cast<const char*>(salt.data()), static_cast<int>(salt.size()),
                   setting.data(), static_cast<int>(setting.size()));
  crypt_data scratch{};
  return crypt_rn("correct horse battery", setting.data(), &scratch, sizeof scratch);
}

void BM_PapCleartext(benchmark::State& state) { pap(state, Credential::cleartext("correct horse battery")); }
void BM_PapNtHash(benchmark::State& state) {
  pap(state, Credential::nt_hash(nt_password_hash("correct horse battery").value()));
}
// crypt(3) at libxcrypt's default cost for each method (cost 0).
void BM_PapCryptSha512(benchmark::State& state) { pap(state, Credential::crypt(crypt_hash("$6$", 0))); }
void BM_PapCryptBcrypt(benchmark::State& state) { pap(state, Credential::crypt(crypt_hash("$2b$", 0))); }
void BM_PapCryptYescrypt(benchmark::State& state) { pap(state, Credential::crypt(crypt_hash("$y$", 0))); }

void BM_Chap(benchmark::State& state) {
  const std::array<std::uint8_t, 16> authenticator{1, 2, 3};
  const auto password = chap_password(7, "correct horse battery", authenticator);
  const Credential credential = Credential::cleartext("correct horse battery");
  const ChapRequest request{.chap_password = password, .request_authenticator = authenticator};
  for (auto _ : state) benchmark::DoNotOptimize(verify_chap(credential, request));
}

void BM_MsChap2(benchmark::State& state) {
  std::array<std::uint8_t, kMsChap2ChallengeSize> challenge{};
  std::array<std::uint8_t, kMsChapResponseSize> response{};
  SeededRandom(2).fill(challenge);
  SeededRandom(3).fill(std::span(response).subspan(2, kPeerChallengeSize));
  const NtHash hash = nt_password_hash("correct horse battery").value();
  const auto challenge8 =
      challenge_hash(std::span(response).subspan(2, kPeerChallengeSize), challenge, "alice");
  const auto nt_response = challenge_response(challenge8, hash);
  std::copy(nt_response.begin(), nt_response.end(), response.begin() + 26);
  const Credential credential = Credential::nt_hash(hash);
  const MsChap2Request request{
      .ms_chap_challenge = challenge, .ms_chap2_response = response, .user_name = "alice"};
  for (auto _ : state) benchmark::DoNotOptimize(verify_ms_chap2(credential, request));
}

void BM_IsMabRequest(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(is_mab_request("aabbccddeeff", "AA-BB-CC-DD-EE-FF", "aa:bb:cc:dd:ee:ff"));
  }
}

BENCHMARK(BM_PapCleartext);
BENCHMARK(BM_PapNtHash);
BENCHMARK(BM_PapCryptSha512)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PapCryptBcrypt)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PapCryptYescrypt)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Chap);
BENCHMARK(BM_MsChap2);
BENCHMARK(BM_IsMabRequest);

}  // namespace
}  // namespace rw::auth
