// Flags of `radiusward bench` mapped onto io/bench_runner.h.
#include "app/bench_command.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "app/exit_codes.h"
#include "gateway/floor_handler.h"
#include "gateway_shell/udp_server.h"
#include "io/clock.h"
#include "io/signals.h"
#include "io/socket_address.h"
#include "loadgen_shell/bench_process_sampler.h"
#include "loadgen_shell/bench_runner.h"
#include "loadgen_shell/eap_generator.h"

namespace rw::app {

namespace {

// Room for "-" and a 20-digit session number within one 253-octet attribute.
constexpr std::size_t kSessionTagMax = 200;

void add_common_flags(CLI::App& command, BenchCommand& flags) {
  command.add_option("--target", flags.target, "HOST:PORT receiving Access-Requests")->required();
  command.add_option("--acct-target", flags.acct_target,
                     "HOST:PORT receiving Accounting-Requests (default: the target's port + 1)");
  command.add_option("--secret", flags.secret, "Shared secret (default testing123)");
  command.add_option("--scenario", flags.scenario, "pap, chap, mschapv2, acct or mixed")
      ->check(CLI::IsMember({"pap", "chap", "mschapv2", "acct", "mixed"}));
  command.add_option("--sockets", flags.sockets, "UDP sockets per generator process (256 Identifiers each)");
  command.add_option("--processes", flags.processes, "Generator processes; the rate is split between them")
      ->check(CLI::Range(1, loadgen_shell::kGeneratorProcessesMax));
  command.add_option("--timeout-ms", flags.timeout_ms, "Wait for an answer per attempt");
  command.add_option("--retries", flags.retries, "Retransmissions before a request counts as lost");
  command.add_option("--users", flags.users,
                     "count:N (bench-user-I/bench-password-I) or a file of `name password`");
  command.add_option("--json", flags.json_out, "Write the JSON report here");
  command.add_option("--acked-log", flags.acked_log,
                     "Append `Acct-Session-Id Status` of every acknowledged accounting record");
  command.add_option("--pid", flags.pids, "A process under test to sample from /proc; repeatable");
  command.add_option("--process-name", flags.process_names,
                     "Sample every process with this name (/proc/PID/comm); repeatable");
  command.add_flag("--no-require-message-authenticator", flags.no_require_message_authenticator,
                   "Accept Access-Accepts without a Message-Authenticator (older servers)");
}

std::optional<std::vector<bench::BenchUser>> load_users(const std::string& spec) {
  if (spec.rfind("count:", 0) == 0) return bench::parse_users(spec);
  std::ifstream in(spec);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return bench::parse_users(text.str());
}

// Builds the step options; prints the first error and returns nothing.
std::optional<loadgen_shell::StepOptions> step_options(const BenchCommand& flags) {
  loadgen_shell::StepOptions options;
  loadgen_shell::GeneratorOptions& g = options.generator;
  auto target = loadgen_shell::parse_endpoint(flags.target);
  if (!target) {
    std::fprintf(stderr, "--target %s: expected HOST:PORT with a numeric address\n", flags.target.c_str());
    return std::nullopt;
  }
  g.auth_target = *target;
  g.acct_target = *target;
  g.acct_target.port = static_cast<std::uint16_t>(target->port + 1);
  if (!flags.acct_target.empty()) {
    auto acct = loadgen_shell::parse_endpoint(flags.acct_target);
    if (!acct) {
      std::fprintf(stderr, "--acct-target %s: expected HOST:PORT\n", flags.acct_target.c_str());
      return std::nullopt;
    }
    g.acct_target = *acct;
  }
  g.scenario = *bench::parse_scenario(flags.scenario);
  auto users = load_users(flags.users);
  if (!users) {
    std::fprintf(stderr, "--users %s: not count:N nor a readable list of `name password`\n",
                 flags.users.c_str());
    return std::nullopt;
  }
  g.users = std::move(*users);
  g.secret = flags.secret;
  // Acct-Session-Ids unique across runs: the start time in microseconds.
  g.run_tag =
      flags.session_tag.empty() ? fmt::format("rwb{:x}", io::monotonic_now().ns / 1000) : flags.session_tag;
  if (flags.live_sessions > 0 && g.scenario != bench::Scenario::kAccounting) {
    std::fprintf(stderr, "--live-sessions: only with --scenario acct\n");
    return std::nullopt;
  }
  // The tag and "-<session>" make the Acct-Session-Id, one attribute of at
  // most 253 octets.
  if (flags.session_tag.size() > kSessionTagMax) {
    std::fprintf(stderr, "--session-tag: at most %zu characters\n", kSessionTagMax);
    return std::nullopt;
  }
  if (flags.interims_only && flags.live_sessions == 0) {
    std::fprintf(stderr, "--interims-only: needs --live-sessions\n");
    return std::nullopt;
  }
  g.live_sessions = {.count = flags.live_sessions, .open = !flags.interims_only};
  g.rate = flags.rate;
  g.duration_s = flags.duration_s;
  g.sockets = flags.sockets;
  g.timeout = Duration::milliseconds(flags.timeout_ms);
  g.retries = flags.retries;
  g.require_message_authenticator = !flags.no_require_message_authenticator;
  g.acked_log = flags.acked_log;
  options.processes = flags.processes;
  options.watched_pids = flags.pids;
  for (const std::string& name : flags.process_names) {
    for (int pid : loadgen_shell::find_pids_by_name(name)) options.watched_pids.push_back(pid);
  }
  return options;
}

int write_json(const std::string& path, const nlohmann::json& json) {
  if (path.empty()) return kExitOk;
  std::ofstream out(path);
  out << json.dump(2) << "\n";
  if (!out) {
    std::fprintf(stderr, "%s: cannot write\n", path.c_str());
    return kExitRuntimeFailure;
  }
  return kExitOk;
}

int run_once(const BenchCommand& flags) {
  auto options = step_options(flags);
  if (!options) return kExitConfigError;
  if (auto installed = loadgen_shell::stop_steps_on_signals(); !installed) {
    std::fprintf(stderr, "bench: %s\n", installed.error().c_str());
    return kExitRuntimeFailure;
  }
  loadgen_shell::GeneratorResult merged;
  auto step = loadgen_shell::run_step(*options, &merged);
  if (!step) {
    std::fprintf(stderr, "bench: %s\n", step.error().c_str());
    return kExitRuntimeFailure;
  }
  std::fprintf(stderr, "%s\n", loadgen_shell::progress_line(1, *step).c_str());
  nlohmann::json json = bench::to_json(*step);
  json["scenario"] = flags.scenario;
  json["identifiers_exhausted"] = merged.identifiers_exhausted;
  json["stray_answers"] = merged.stray_answers;
  json["send_errors"] = merged.send_errors;
  json["send_lag_max_us"] = merged.send_lag_max.ns / 1000;
  json["stopped_early"] = merged.stopped_early;
  return write_json(flags.json_out, json);
}

int run_search(const BenchCommand& flags) {
  auto step = step_options(flags);
  if (!step) return kExitConfigError;
  loadgen_shell::CeilingOptions options;
  options.step = std::move(*step);
  options.step.generator.duration_s = flags.duration_s;
  options.search = flags.search;
  options.criteria.p99_max = Duration::milliseconds(flags.p99_max_ms);
  options.settle = Duration::milliseconds(flags.settle_ms);
  options.label = flags.label.empty() ? flags.target : flags.label;
  auto report = loadgen_shell::run_ceiling(options);
  if (!report) {
    std::fprintf(stderr, "bench: %s\n", report.error().c_str());
    return kExitRuntimeFailure;
  }
  std::fprintf(stderr, "ceiling %s %s: %s\n", options.label.c_str(), flags.scenario.c_str(),
               (*report)["ceiling"]["text"].get<std::string>().c_str());
  return write_json(flags.json_out, *report);
}

// The floor server (gateway/floor_handler.h) in the gateway's own UdpServer,
// until SIGTERM or SIGINT.
int run_floor(const BenchCommand& flags) {
  auto listen = loadgen_shell::parse_endpoint(flags.floor_listen);
  if (!listen) {
    std::fprintf(stderr, "--listen %s: expected HOST:PORT with a numeric address\n",
                 flags.floor_listen.c_str());
    return kExitConfigError;
  }
  auto secret = radius::SharedSecret::create(as_bytes(flags.secret));
  if (!secret) {
    std::fprintf(stderr, "--secret: %s\n", std::string(radius::to_string(secret.error())).c_str());
    return kExitConfigError;
  }
  if (auto blocked = io::block_process_signals(); !blocked) {
    std::fprintf(stderr, "bench floor: %s\n", blocked.error().to_string().c_str());
    return kExitRuntimeFailure;
  }
  gateway_shell::UdpServerOptions options;
  options.listen = {*listen};
  options.auth_port = listen->port;
  options.acct_port = 0;  // unused: the floor answers Access-Requests only
  options.workers = flags.floor_workers;
  gateway::FloorHandlerFactory factory(std::move(*secret));
  auto server = gateway_shell::UdpServer::start(options, factory);
  if (!server) {
    std::fprintf(stderr, "bench floor: %s\n", server.error().to_string().c_str());
    return kExitRuntimeFailure;
  }
  std::fprintf(stderr, "bench floor: answering %s with %d worker(s)\n",
               io::to_string((*server)->listeners().front().local).c_str(), (*server)->worker_count());
  const std::string_view signal = io::wait_for_stop_signal();
  (*server)->stop();
  std::fprintf(stderr, "bench floor: %.*s, stopped\n", static_cast<int>(signal.size()), signal.data());
  return kExitOk;
}

// `bench eap`: one load (a rate for --duration-s, or --count conversations,
// all at once with --rate 0), or with --ceiling the step-and-bisect search.
int run_eap(const BenchCommand& flags) {
  loadgen_shell::EapLoadOptions load;
  auto target = loadgen_shell::parse_endpoint(flags.target);
  if (!target) {
    std::fprintf(stderr, "--target %s: expected HOST:PORT with a numeric address\n", flags.target.c_str());
    return kExitConfigError;
  }
  load.target = *target;
  load.secret = flags.secret;
  auto users = load_users(flags.users);
  if (!users) {
    std::fprintf(stderr, "--users %s: not count:N nor a readable list of `name password`\n",
                 flags.users.c_str());
    return kExitConfigError;
  }
  load.users = std::move(*users);
  load.supplicant.method = *loadgen_shell::parse_eap_bench_method(flags.eap_method);
  load.supplicant.tls_version =
      flags.eap_tls_version == "1.3" ? eap::TlsVersion::k1_3 : eap::TlsVersion::k1_2;
  load.supplicant.ca_file = flags.eap_ca;
  load.supplicant.certificate_file = flags.eap_certificate;
  load.supplicant.key_file = flags.eap_key;
  load.supplicant.fragment_octets = flags.eap_fragment_octets;
  load.rate = flags.rate;
  load.count = flags.eap_count;
  load.duration_s = flags.duration_s;
  load.concurrency = flags.eap_concurrency;
  load.timeout = Duration::milliseconds(flags.timeout_ms);
  load.retries = flags.retries;
  std::vector<int> pids = flags.pids;
  for (const std::string& name : flags.process_names) {
    for (int pid : loadgen_shell::find_pids_by_name(name)) pids.push_back(pid);
  }
  const std::string label = flags.label.empty() ? flags.target : flags.label;
  if (flags.eap_ceiling) {
    loadgen_shell::EapCeilingOptions options;
    options.load = std::move(load);
    options.watched_pids = std::move(pids);
    options.search = flags.search;
    options.criteria.p99_max = Duration::milliseconds(flags.p99_max_ms);
    options.settle = Duration::milliseconds(flags.settle_ms);
    options.label = label;
    auto report = loadgen_shell::run_eap_ceiling(options);
    if (!report) {
      std::fprintf(stderr, "bench eap: %s\n", report.error().c_str());
      return kExitRuntimeFailure;
    }
    std::fprintf(stderr, "ceiling %s eap-%s: %s\n", label.c_str(), flags.eap_method.c_str(),
                 (*report)["ceiling"]["text"].get<std::string>().c_str());
    return write_json(flags.json_out, *report);
  }
  loadgen_shell::ProcessSampler sampler(pids);
  sampler.start();
  auto result = loadgen_shell::run_eap_load(load);
  sampler.stop();
  if (!result) {
    std::fprintf(stderr, "bench eap: %s\n", result.error().c_str());
    return kExitRuntimeFailure;
  }
  nlohmann::json json = loadgen_shell::to_json(*result);
  json["label"] = label;
  json["method"] = flags.eap_method;
  json["tls_version"] = flags.eap_tls_version;
  json["fragment_octets"] = flags.eap_fragment_octets;
  json["concurrency"] = flags.eap_concurrency;
  json["processes"] = nlohmann::json::array();
  for (const bench::ProcessUsage& usage : sampler.usage()) json["processes"].push_back(bench::to_json(usage));
  std::fprintf(
      stderr,
      "bench eap %s: %llu started, %llu accepted, %llu timed out, %llu failed, p50 %.1f ms, p99 %.1f ms, "
      "max %.1f ms, all done in %.2f s, %llu retransmissions, generator %.2f ms cpu/auth\n",
      flags.eap_method.c_str(), static_cast<unsigned long long>(result->step.sent),
      static_cast<unsigned long long>(result->accepted), static_cast<unsigned long long>(result->timed_out),
      static_cast<unsigned long long>(result->step.invalid), json["p50_ms"].get<double>(),
      json["p99_ms"].get<double>(), json["max_ms"].get<double>(), result->elapsed_s,
      static_cast<unsigned long long>(result->step.retransmissions),
      json["generator_cpu_ms_per_auth"].get<double>());
  return write_json(flags.json_out, json);
}

}  // namespace

CLI::App* add_bench_command(CLI::App& app, BenchCommand& flags) {
  CLI::App* bench = app.add_subcommand("bench", "Load generator and ceiling search (docs/benchmarking.md)");
  bench->require_subcommand(1);
  flags.run_command = bench->add_subcommand("run", "One open-loop step at a fixed rate");
  add_common_flags(*flags.run_command, flags);
  flags.run_command->add_option("--rate", flags.rate, "Requests per second");
  flags.run_command->add_option(
      "--duration-s", flags.duration_s,
      "Length of the step in seconds (SIGTERM or SIGINT ends it early, with its report)");
  flags.run_command
      ->add_option("--live-sessions", flags.live_sessions,
                   "acct: N sessions left open, Starts first, then Interim-Updates over all of them")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{100'000'000}));
  flags.run_command->add_flag("--interims-only", flags.interims_only,
                              "With --live-sessions: no Starts (sessions an earlier run with the same "
                              "--session-tag opened)");
  flags.run_command->add_option("--session-tag", flags.session_tag,
                                "Prefix of the Acct-Session-Ids (default: unique per run)");

  flags.ceiling_command =
      bench->add_subcommand("ceiling", "Step up, then bisect, to the highest passing rate");
  CLI::App& ceiling = *flags.ceiling_command;
  add_common_flags(ceiling, flags);
  ceiling.add_option("--step-s", flags.duration_s, "Length of each step in seconds (default 5)");
  ceiling.add_option("--start-rate", flags.search.start_rate, "Rate of the first step");
  ceiling.add_option("--factor", flags.search.factor, "While climbing: next = rate * factor + increment");
  ceiling.add_option("--increment", flags.search.increment, "While climbing: added after the factor");
  ceiling.add_option("--max-rate", flags.search.max_rate,
                     "Highest rate tried; passing it gives a lower bound");
  ceiling.add_option("--resolution", flags.search.resolution,
                     "Stop bisecting below this fraction of the failed rate");
  ceiling.add_option("--max-steps", flags.search.max_steps, "Hard bound on the number of steps");
  ceiling.add_option("--settle-ms", flags.settle_ms, "Pause between steps");
  ceiling.add_option("--p99-max-ms", flags.p99_max_ms, "Pass rule: p99 at most this (default 500)");
  ceiling.add_option("--label", flags.label, "Name of the server under test in the report");

  flags.floor_command = bench->add_subcommand(
      "floor", "The smallest correct Access-Request responder, to measure the gateway against");
  flags.floor_command->add_option("--listen", flags.floor_listen,
                                  "HOST:PORT to answer (default 127.0.0.1:1812)");
  flags.floor_command->add_option("--secret", flags.secret, "Shared secret (default testing123)");
  flags.floor_command->add_option("--workers", flags.floor_workers,
                                  "Worker threads, as the gateway's `workers` (0: one per CPU)");

  flags.eap_command = bench->add_subcommand(
      "eap",
      "EAP-TLS or PEAP-MSCHAPv2 supplicants: one load, a boot storm (--count N --rate 0) or --ceiling");
  CLI::App& eap = *flags.eap_command;
  eap.add_option("--target", flags.target, "HOST:PORT receiving Access-Requests")->required();
  eap.add_option("--secret", flags.secret, "Shared secret (default testing123)");
  eap.add_option("--method", flags.eap_method, "tls or peap")->check(CLI::IsMember({"tls", "peap"}));
  eap.add_option("--users", flags.users,
                 "count:N or a file of `name password`: identities (and PEAP passwords), taken in turn");
  eap.add_option("--ca", flags.eap_ca, "PEM file of the CA that signed the server's certificate")->required();
  eap.add_option("--cert", flags.eap_certificate, "EAP-TLS: the client certificate (PEM)");
  eap.add_option("--key", flags.eap_key, "EAP-TLS: its private key (PEM)");
  eap.add_option("--tls-version", flags.eap_tls_version, "1.2 or 1.3")->check(CLI::IsMember({"1.2", "1.3"}));
  eap.add_option("--fragment-octets", flags.eap_fragment_octets, "TLS octets per EAP-Response (64..3000)")
      ->check(CLI::Range(64, 3000));
  eap.add_option("--concurrency", flags.eap_concurrency, "Conversations in flight at most (1..65536)")
      ->check(CLI::Range(1, 65536));
  eap.add_option("--rate", flags.rate, "Conversations started per second (0: all at once)");
  eap.add_option("--duration-s", flags.duration_s, "Length of the load, or of each ceiling step");
  eap.add_option("--count", flags.eap_count, "Conversations in all (default: rate * duration)");
  eap.add_option("--timeout-ms", flags.timeout_ms, "Wait for an answer per round trip");
  eap.add_option("--retries", flags.retries, "Retransmissions of a round before the conversation is lost");
  eap.add_option("--json", flags.json_out, "Write the JSON report here");
  eap.add_option("--pid", flags.pids, "A process under test to sample from /proc; repeatable");
  eap.add_option("--label", flags.label, "Name of the server under test in the report");
  eap.add_flag("--ceiling", flags.eap_ceiling, "Step up, then bisect, to the highest passing rate");
  eap.add_option("--start-rate", flags.search.start_rate, "Ceiling: rate of the first step");
  eap.add_option("--factor", flags.search.factor, "Ceiling: next = rate * factor while climbing");
  eap.add_option("--max-rate", flags.search.max_rate, "Ceiling: highest rate tried");
  eap.add_option("--resolution", flags.search.resolution, "Ceiling: stop bisecting below this fraction");
  eap.add_option("--max-steps", flags.search.max_steps, "Ceiling: hard bound on the number of steps");
  eap.add_option("--settle-ms", flags.settle_ms, "Ceiling: pause between steps");
  eap.add_option("--p99-max-ms", flags.p99_max_ms, "Ceiling pass rule: p99 of a whole authentication");
  return bench;
}

int run_bench(const BenchCommand& flags) {
  if (flags.run_command != nullptr && *flags.run_command) return run_once(flags);
  if (flags.ceiling_command != nullptr && *flags.ceiling_command) return run_search(flags);
  if (flags.floor_command != nullptr && *flags.floor_command) return run_floor(flags);
  if (flags.eap_command != nullptr && *flags.eap_command) return run_eap(flags);
  return kExitConfigError;
}

}  // namespace rw::app
