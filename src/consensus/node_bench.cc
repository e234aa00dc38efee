// Three consensus::Node members on loopback and real disk: entries/s and
// commit latency (p50/p99) with 16 applies in flight, for entries of 1 and 64
// records of 200 bytes, over plain TCP (tls:0) and the TLS transport (tls:1).
// Figures go to docs/consensus.md.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "consensus/dedup_log_for_test.h"
#include "consensus/node.h"
#include "consensus/node_test_support.h"
#include "consensus/tls_for_test.h"

namespace rw::consensus {
namespace {

using Clock = std::chrono::steady_clock;

// A state that counts and keeps nothing, so the bench measures consensus.
class CountingState : public ReplicatedState {
 public:
  void apply(std::uint64_t, Bytes) override { ++applied_; }
  [[nodiscard]] std::vector<std::uint8_t> snapshot() const override { return {}; }
  [[nodiscard]] bool restore(Bytes) override { return true; }

 private:
  std::uint64_t applied_ = 0;
};

void BM_ThreeNodes(benchmark::State& state) {
  const std::size_t records = static_cast<std::size_t>(state.range(0));
  const bool tls = state.range(1) != 0;
  const auto root = fresh_data_root("consensus_bench");
  std::optional<TestAuthority> authority;
  if (tls) authority.emplace(root / "pki", "bench");
  std::vector<Member> voters;
  for (std::uint64_t id = 1; id <= 3; ++id)
    voters.push_back({id, "127.0.0.1:" + std::to_string(free_loopback_port())});
  std::vector<CountingState> states(3);
  std::vector<std::unique_ptr<Node>> nodes;
  for (int i = 0; i < 3; ++i) {
    NodeOptions options;
    options.id = voters[i].id;
    options.address = voters[i].address;
    options.data_dir = (root / std::to_string(i)).string();
    options.voters = voters;
    options.trace_library = false;
    if (tls) {
      const TestCertificate certificate = authority->issue("member-" + std::to_string(voters[i].id));
      TlsTransportOptions transport;
      transport.server_context = transport.client_context =
          tls_context_for_test(authority->certificate_path(), &certificate);
      options.tls = std::move(transport);
    }
    nodes.push_back(std::move(*Node::start(options, states[i])));
  }
  Node* leader = nullptr;
  wait_until(
      [&] {
        for (auto& node : nodes) {
          if (node->ready_for_work()) leader = node.get();
        }
        return leader != nullptr;
      },
      std::chrono::milliseconds(10000));
  if (leader == nullptr) {
    state.SkipWithError("no leader");
    return;
  }
  const std::vector<std::uint8_t> entry(records * 200, 0x5a);
  std::vector<double> latencies_ms;
  std::size_t in_flight = 0;
  std::size_t committed = 0;
  for (auto _ : state) {
    while (in_flight >= 16) {
      if (leader->deliver_completions() == 0) std::this_thread::yield();
    }
    const auto sent = Clock::now();
    ++in_flight;
    (void)leader->submit(entry, [&, sent](const Outcome& outcome) {
      --in_flight;
      committed += outcome.kind == OutcomeKind::kCommitted;
      latencies_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - sent).count());
    });
  }
  while (in_flight > 0) {
    if (leader->deliver_completions() == 0) std::this_thread::yield();
  }
  std::sort(latencies_ms.begin(), latencies_ms.end());
  state.counters["entries_per_s"] =
      benchmark::Counter(static_cast<double>(committed), benchmark::Counter::kIsRate);
  state.counters["records_per_s"] =
      benchmark::Counter(static_cast<double>(committed * records), benchmark::Counter::kIsRate);
  if (!latencies_ms.empty()) {
    state.counters["p50_ms"] = latencies_ms[latencies_ms.size() / 2];
    state.counters["p99_ms"] = latencies_ms[latencies_ms.size() * 99 / 100];
  }
  nodes.clear();
  std::filesystem::remove_all(root);
}
BENCHMARK(BM_ThreeNodes)
    ->ArgNames({"records", "tls"})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Args({64, 0})
    ->Args({64, 1})
    ->Iterations(5000)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace rw::consensus
