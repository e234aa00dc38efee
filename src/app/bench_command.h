// `radiusward bench run`, `bench ceiling`, `bench floor` and `bench eap`: the
// load generator, the ceiling search, the floor server and the EAP load (docs/benchmarking.md). Flags only;
// the work is in io/bench_runner.h and bench/.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/ceiling.h"

namespace rw::app {

// Every flag of the bench subcommands.
struct BenchCommand {
  std::string target;       // HOST:PORT of Access-Requests.
  std::string acct_target;  // HOST:PORT of Accounting-Requests; default: target's port + 1.
  std::string secret = "testing123";
  std::string scenario = "pap";
  double rate = 1000;
  double duration_s = 5;
  int sockets = 32;
  int processes = 1;
  int timeout_ms = 1000;
  int retries = 2;
  std::string users = "count:100";
  std::string json_out;
  std::string acked_log;
  std::vector<int> pids;
  std::vector<std::string> process_names;
  bool no_require_message_authenticator = false;
  // run only: accounting over a fixed set of live sessions (bench/scenario.h LiveSessions).
  std::uint64_t live_sessions = 0;
  bool interims_only = false;
  std::string session_tag;
  // ceiling only
  bench::SearchOptions search;
  int settle_ms = 1000;
  int p99_max_ms = 500;
  std::string label;

  // eap only (loadgen_shell/eap_generator.h).
  std::string eap_method = "tls";
  std::string eap_ca;
  std::string eap_certificate;
  std::string eap_key;
  std::string eap_tls_version = "1.2";
  std::size_t eap_fragment_octets = 1000;
  int eap_concurrency = 256;
  std::uint64_t eap_count = 0;  // A fixed number of conversations (a boot storm with --rate 0).
  bool eap_ceiling = false;

  // floor only: HOST:PORT answered, worker threads (0: one per CPU).
  std::string floor_listen = "127.0.0.1:1812";
  int floor_workers = 0;

  CLI::App* run_command = nullptr;
  CLI::App* ceiling_command = nullptr;
  CLI::App* floor_command = nullptr;
  CLI::App* eap_command = nullptr;
};

// Registers `bench` with its `run` and `ceiling` subcommands on `app`;
// `command` receives the flags and must outlive parsing.
CLI::App* add_bench_command(CLI::App& app, BenchCommand& command);

// Runs whichever bench subcommand was parsed.
[[nodiscard]] int run_bench(const BenchCommand& command);

}  // namespace rw::app
