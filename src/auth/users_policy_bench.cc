// Measures the users-file policy on a 100,000-user file: loading it, and
// deciding one request (index lookup, DEFAULT walk, comparisons). The index
// should make the decision independent of the file's size.
#include <benchmark/benchmark.h>

#include <string>

#include "auth/users_policy.h"

namespace rw::auth {
namespace {

std::string make_users_file(int users) {
  std::string text;
  text.reserve(static_cast<std::size_t>(users) * 120);
  for (int i = 0; i < users; ++i) {
    text +=
        "user" + std::to_string(i) + "\tCleartext-Password := \"secret" + std::to_string(i) +
        "\"\n\tTunnel-Type:1 = VLAN,\n\tTunnel-Medium-Type:1 = IEEE-802,\n\tTunnel-Private-Group-Id:1 = \"" +
        std::to_string(100 + i % 50) + "\",\n\tFall-Through = Yes\n";
  }
  text += "DEFAULT\tCalled-Station-Id =~ \":guest$\"\n\tSession-Timeout := 1800,\n\tFall-Through = Yes\n";
  text += "DEFAULT\tService-Type == Framed-User\n\tFramed-Protocol = PPP,\n\tFall-Through = Yes\n";
  text += "DEFAULT\n\tSession-Timeout = 3600,\n\tIdle-Timeout = 600\n";
  return text;
}

const config::UsersFile& users_100k() {
  static const config::UsersFile users = [] {
    auto parsed = config::UsersFile::parse(make_users_file(100'000), "users", radius::Dictionary::builtin());
    if (!parsed) std::abort();
    return std::move(*parsed);
  }();
  return users;
}

void BM_ParseUsersFile(benchmark::State& state) {
  std::string text = make_users_file(static_cast<int>(state.range(0)));
  auto dictionary = radius::Dictionary::builtin();
  for (auto _ : state) {
    auto parsed = config::UsersFile::parse(text, "users", dictionary);
    benchmark::DoNotOptimize(parsed);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseUsersFile)->Arg(1'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

void BM_EvaluateUsers(benchmark::State& state) {
  const config::UsersFile& users = users_100k();
  const radius::Dictionary& dictionary = users.dictionary();
  std::string called = "00-11-22-33-44-55:corp";
  std::vector<std::uint8_t> framed = {0, 0, 0, 2};
  RequestAttribute attributes[] = {{dictionary.find("Called-Station-Id"), as_bytes(called)},
                                   {dictionary.find("Service-Type"), framed}};
  RequestAttributeList request(attributes);
  UsersDecision decision;
  std::vector<std::string> names;
  for (int i = 0; i < 1024; ++i) names.push_back("user" + std::to_string((i * 7919) % 100'000));
  std::size_t next = 0;
  for (auto _ : state) {
    auto done = evaluate_users(users, names[next++ % names.size()], request, decision);
    benchmark::DoNotOptimize(done);
    benchmark::DoNotOptimize(decision.reply().size());
  }
}
BENCHMARK(BM_EvaluateUsers);

}  // namespace
}  // namespace rw::auth
