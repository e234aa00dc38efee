// Cost against the number of NAS clients (issue 15, "cost grows linearly";
// docs/users_and_clients.md "Client lookup"): parsing a clients.conf of N
// clients (start and reload) and the per-datagram longest-prefix lookup.
#include <benchmark/benchmark.h>

#include <array>
#include <string>

#include <fmt/format.h>

#include "config/client_table.h"
#include "config/clients_file.h"

namespace rw::config {
namespace {

// N one-host clients 10.x.y.z plus a /16 and a /8 catch-all, as an operator
// with many access points and a management network writes them.
std::string clients_conf(std::size_t count) {
  std::string text;
  for (std::size_t i = 0; i < count; ++i) {
    text += fmt::format(
        "client ap-{} {{\n  ipaddr = 10.{}.{}.{}\n  secret = secret-of-ap-{}\n  nas_type = other\n}}\n", i,
        (i >> 16) & 0xFF, (i >> 8) & 0xFF, (i & 0xFF) + 0, i);
  }
  text += "client mgmt {\n  ipaddr = 192.168.0.0/16\n  secret = mgmt-secret\n}\n";
  text += "client everything-else {\n  ipaddr = 172.16.0.0/12\n  secret = other-secret\n}\n";
  return text;
}

void BM_ParseClientsFile(benchmark::State& state) {
  const std::string text = clients_conf(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    auto parsed = parse_clients(text, "clients.conf");
    if (!parsed) state.SkipWithError("clients.conf did not parse");
    benchmark::DoNotOptimize(parsed);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.counters["bytes"] = static_cast<double>(text.size());
}
BENCHMARK(BM_ParseClientsFile)->Arg(100)->Arg(10'000)->Unit(benchmark::kMillisecond);

// One lookup per datagram: hosts spread over the table, and a miss that
// falls through to the /12.
void BM_FindClient(benchmark::State& state) {
  const auto count = static_cast<std::size_t>(state.range(0));
  ClientsLimits limits;
  limits.clients_max = count + 2;  // past the default bound (65,536) for the largest case
  auto parsed = parse_clients(clients_conf(count), "clients.conf", limits);
  if (!parsed) {
    state.SkipWithError("clients.conf did not parse");
    return;
  }
  auto built = ClientTable::build(std::move(parsed->clients));
  if (!built) {
    state.SkipWithError("clients.conf did not index");
    return;
  }
  const ClientTable& table = *built;
  std::size_t i = 0;
  std::array<std::uint8_t, 16> address{};
  for (auto _ : state) {
    i = (i + 7919) % (count + 1);
    if (i == count) {
      address = {172, 20, 1, 1};
    } else {
      address = {10, static_cast<std::uint8_t>(i >> 16), static_cast<std::uint8_t>(i >> 8),
                 static_cast<std::uint8_t>(i)};
    }
    benchmark::DoNotOptimize(table.find(address, false));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FindClient)->Arg(100)->Arg(10'000)->Arg(100'000);

}  // namespace
}  // namespace rw::config
