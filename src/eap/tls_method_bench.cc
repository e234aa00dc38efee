// The CPU cost of one whole EAP-TLS handshake on the server side
// (tls_method.h), TLS 1.2 and TLS 1.3, with EC P-256 certificates (server
// and client) and 1,000-octet fragments, as docs/authentication.md
// "EAP-TLS" reports. Only the server's calls (start and on_response) are
// timed, in this thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so the figure
// is the server's CPU per handshake, unaffected by other load; the test
// peer's client work between the calls is not counted.
#include <benchmark/benchmark.h>

#include <time.h>

#include <chrono>

#include "eap/tls_peer_for_test.h"

namespace rw::eap {
namespace {

// A clock of this thread's CPU time, for std::chrono arithmetic.
struct Clock {
  using duration = std::chrono::nanoseconds;
  using time_point = std::chrono::time_point<Clock>;
  static time_point now() {
    timespec spec{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec);
    return time_point(duration(spec.tv_sec * 1'000'000'000LL + spec.tv_nsec));
  }
};

using testing::Octets;
using testing::TlsTestPeer;
using testing::TlsTestPki;

void handshake(benchmark::State& state, TlsVersion version) {
  auto context = TlsServerContext::create(TlsTestPki::get().server_config());
  if (!context) {
    state.SkipWithError(context.error().to_string().c_str());
    return;
  }
  for (auto _ : state) {
    TlsTestPeer peer(TlsTestPeer::Options{.version = version, .certificate = &TlsTestPki::get().valid});
    Clock::duration server{};
    Clock::time_point begin = Clock::now();
    TlsMethod method(*context, "alice");
    MethodStep step = method.start();
    server += Clock::now() - begin;
    while (step.kind == MethodStep::Kind::kRequest) {
      const Octets response = peer.on_request(step.type_data);
      begin = Clock::now();
      step = method.on_response(response);
      server += Clock::now() - begin;
    }
    if (step.kind != MethodStep::Kind::kSuccess) {
      state.SkipWithError(step.reason.c_str());
      return;
    }
    state.SetIterationTime(std::chrono::duration<double>(server).count());
  }
}

void BM_EapTlsHandshakeServerTls12(benchmark::State& state) { handshake(state, TlsVersion::k1_2); }
void BM_EapTlsHandshakeServerTls13(benchmark::State& state) { handshake(state, TlsVersion::k1_3); }
BENCHMARK(BM_EapTlsHandshakeServerTls12)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EapTlsHandshakeServerTls13)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace rw::eap
