// Step and ceiling drivers of the bench (bench_runner.h).
#include "loadgen_shell/bench_runner.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "io/socket_address.h"
#include "loadgen_shell/bench_process_sampler.h"

namespace rw::loadgen_shell {

namespace {

nlohmann::json result_to_json(const GeneratorResult& result) {
  nlohmann::json invalid = nlohmann::json::array();
  for (std::uint64_t count : result.invalid_by_reason) invalid.push_back(count);
  return {{"step", bench::to_json(result.step)},
          {"histogram", bench::histogram_to_json(result.histogram)},
          {"invalid_by_reason", invalid},
          {"identifiers_exhausted", result.identifiers_exhausted},
          {"stray_answers", result.stray_answers},
          {"send_errors", result.send_errors},
          {"send_lag_max_us", result.send_lag_max.ns / 1000},
          {"stopped_early", result.stopped_early}};
}

std::optional<GeneratorResult> result_from_json(const nlohmann::json& json) {
  try {
    GeneratorResult result;
    auto step = bench::step_result_from_json(json.at("step"));
    auto histogram = bench::histogram_from_json(json.at("histogram"));
    if (!step || !histogram) return std::nullopt;
    result.step = *step;
    result.histogram = *histogram;
    const auto& invalid = json.at("invalid_by_reason");
    for (std::size_t i = 0; i < result.invalid_by_reason.size() && i < invalid.size(); ++i) {
      result.invalid_by_reason[i] = invalid[i].get<std::uint64_t>();
    }
    result.identifiers_exhausted = json.at("identifiers_exhausted").get<std::uint64_t>();
    result.stray_answers = json.at("stray_answers").get<std::uint64_t>();
    result.send_errors = json.at("send_errors").get<std::uint64_t>();
    result.send_lag_max = Duration::microseconds(json.at("send_lag_max_us").get<std::int64_t>());
    result.stopped_early = json.at("stopped_early").get<bool>();
    return result;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

// The generator processes this one forked, for the stop signal's handler to
// pass the signal on; lock-free atomics, read in a signal handler.
constexpr std::size_t kForwardedMax = kGeneratorProcessesMax;
std::array<std::atomic<pid_t>, kForwardedMax> g_forward_to{};
std::atomic<std::size_t> g_forward_count{0};
static_assert(std::atomic<pid_t>::is_always_lock_free && std::atomic<std::size_t>::is_always_lock_free);

void forward_to(pid_t pid) {
  const std::size_t index = g_forward_count.load();
  if (index >= kForwardedMax) return;  // Past the bound, a child finishes its schedule.
  g_forward_to[index].store(pid);
  g_forward_count.store(index + 1);
}

extern "C" void on_stop_signal(int signal_number) {
  const int saved_errno = errno;
  stop_sending();
  const std::size_t count = g_forward_count.load();
  for (std::size_t i = 0; i < count && i < kForwardedMax; ++i) ::kill(g_forward_to[i].load(), signal_number);
  errno = saved_errno;
}

// run_step holds the stop signals back while it forks, so that none falls
// between a fork and forward_to(); once the mask is restored, a held one is
// delivered.
sigset_t block_stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigset_t previous;
  ::pthread_sigmask(SIG_BLOCK, &set, &previous);
  return previous;
}

void restore_signal_mask(const sigset_t& previous) { ::pthread_sigmask(SIG_SETMASK, &previous, nullptr); }

struct Child {
  pid_t pid = -1;
  int read_fd = -1;
  std::string acked_log;
};

// Forks a generator for `options`; it writes its result as JSON to a pipe.
Result<Child, std::string> fork_generator(const GeneratorOptions& options, const sigset_t& mask) {
  int fds[2];
  if (::pipe(fds) != 0) return fail(fmt::format("pipe: {}", std::strerror(errno)));
  const pid_t pid = ::fork();
  if (pid < 0) return fail(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    g_forward_count.store(0);  // The parent's other children are not this one's.
    restore_signal_mask(mask);
    ::close(fds[0]);
    auto result = run_generator(options);
    const std::string text = result ? result_to_json(*result).dump() : std::string();
    std::size_t written = 0;
    while (written < text.size()) {
      const ssize_t n = ::write(fds[1], text.data() + written, text.size() - written);
      if (n <= 0) break;
      written += static_cast<std::size_t>(n);
    }
    ::_exit(result ? 0 : 1);
  }
  ::close(fds[1]);
  forward_to(pid);
  return Child{pid, fds[0], options.acked_log};
}

Result<GeneratorResult, std::string> collect(Child& child) {
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(child.read_fd, buffer, sizeof buffer);
    if (n > 0) {
      text.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(child.read_fd);
  int status = 0;
  ::waitpid(child.pid, &status, 0);
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
  auto result = json.is_discarded() ? std::nullopt : result_from_json(json);
  if (!result) return fail(fmt::format("generator process {} failed (status {})", child.pid, status));
  return *result;
}

// Appends a child's acked log to the parent's and removes it.
void append_file(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary | std::ios::app);
  out << in.rdbuf();
  in.close();
  std::remove(from.c_str());
}

}  // namespace

Result<void, std::string> stop_steps_on_signals() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int signal_number : {SIGTERM, SIGINT}) {
    if (::sigaction(signal_number, &action, nullptr) != 0)
      return fail(fmt::format("sigaction: {}", std::strerror(errno)));
  }
  return {};
}

std::string progress_line(int index, const bench::StepRecord& step) {
  const bench::StepResult& r = step.result;
  std::string line = fmt::format(
      "step {:2}  target {:8.0f}/s  answered {:8.0f}/s  p50 {:7.2f} ms  p99 {:7.2f} ms  max {:7.1f} ms  "
      "lost {}  retrans {}  invalid {}  {}",
      index, r.target_rate, r.answered_rate(), static_cast<double>(r.p50.ns) / 1e6,
      static_cast<double>(r.p99.ns) / 1e6, static_cast<double>(r.max.ns) / 1e6, r.lost, r.retransmissions,
      r.invalid, step.verdict.passed ? "PASS" : "FAIL: " + step.verdict.reason);
  for (const bench::ProcessUsage& usage : step.processes) {
    line += fmt::format("\n         {}[{}] cpu avg {:.0f}% max {:.0f}%  rss peak {:.1f} MiB", usage.name,
                        usage.pid, usage.cpu_avg_percent, usage.cpu_max_percent,
                        static_cast<double>(usage.rss_peak_kib) / 1024.0);
  }
  return line;
}

Result<bench::StepRecord, std::string> run_step(const StepOptions& options, GeneratorResult* merged) {
  const int processes = std::max(1, options.processes);
  std::vector<Child> children;
  GeneratorOptions own = options.generator;
  own.rate = options.generator.rate / processes;
  // Forks come first, before the sampler's thread exists.
  const sigset_t mask = block_stop_signals();
  for (int i = 1; i < processes; ++i) {
    GeneratorOptions child = own;
    child.run_tag = fmt::format("{}-p{}", own.run_tag, i);
    if (!own.acked_log.empty()) child.acked_log = fmt::format("{}.p{}", own.acked_log, i);
    auto forked = fork_generator(child, mask);
    if (!forked) {
      restore_signal_mask(mask);
      return fail(forked.error());
    }
    children.push_back(*forked);
  }
  restore_signal_mask(mask);
  ProcessSampler sampler(options.watched_pids);
  sampler.start();
  auto result = run_generator(own);
  std::vector<GeneratorResult> others;
  std::string error;
  for (Child& child : children) {
    auto collected = collect(child);
    if (collected) {
      others.push_back(std::move(*collected));
    } else {
      error = collected.error();
    }
    if (!child.acked_log.empty()) append_file(child.acked_log, own.acked_log);
  }
  g_forward_count.store(0);  // Reaped: their pids may be reused.
  sampler.stop();
  if (!result) return fail(result.error());
  if (!error.empty()) return fail(error);
  for (const GeneratorResult& other : others) merge_results(*result, other);
  result->step.target_rate = options.generator.rate;

  bench::StepRecord record;
  record.result = result->step;
  record.verdict = bench::judge(record.result);
  record.processes = sampler.usage();
  for (std::size_t i = 0; i < result->invalid_by_reason.size(); ++i) {
    if (result->invalid_by_reason[i] == 0) continue;
    record.invalid_by_reason.emplace_back(std::string(bench::to_string(static_cast<bench::VerifyError>(i))),
                                          result->invalid_by_reason[i]);
  }
  if (merged != nullptr) *merged = std::move(*result);
  return record;
}

Result<nlohmann::json, std::string> run_ceiling(const CeilingOptions& options) {
  bench::CeilingSearch search(options.search);
  nlohmann::json steps = nlohmann::json::array();
  std::vector<bench::StepRecord> records;
  int index = 0;
  while (auto rate = search.next_rate()) {
    StepOptions step_options = options.step;
    step_options.generator.rate = *rate;
    step_options.generator.run_tag = fmt::format("{}-s{}", options.step.generator.run_tag, index);
    GeneratorResult merged;
    auto step = run_step(step_options, &merged);
    if (!step) return fail(step.error());
    step->verdict = bench::judge(step->result, options.criteria);
    ++index;
    std::fprintf(stderr, "%s\n", progress_line(index, *step).c_str());
    nlohmann::json json = bench::to_json(*step);
    json["index"] = index;
    json["identifiers_exhausted"] = merged.identifiers_exhausted;
    json["stray_answers"] = merged.stray_answers;
    json["send_errors"] = merged.send_errors;
    json["send_lag_max_us"] = merged.send_lag_max.ns / 1000;
    steps.push_back(json);
    records.push_back(*step);
    search.on_step(*rate, step->verdict.passed);
    std::this_thread::sleep_for(std::chrono::nanoseconds(options.settle.ns));
  }
  const bench::Ceiling ceiling = search.ceiling();
  nlohmann::json at_ceiling = nullptr;
  for (const bench::StepRecord& record : records) {
    if (record.verdict.passed && record.result.target_rate == ceiling.rate)
      at_ceiling = bench::to_json(record);
  }
  const GeneratorOptions& g = options.step.generator;
  return nlohmann::json{
      {"label", options.label},
      {"scenario", std::string(bench::to_string(g.scenario))},
      {"auth_target", io::to_string(g.auth_target)},
      {"acct_target", io::to_string(g.acct_target)},
      {"options",
       {{"start_rate", options.search.start_rate},
        {"factor", options.search.factor},
        {"increment", options.search.increment},
        {"max_rate", options.search.max_rate},
        {"resolution", options.search.resolution},
        {"max_steps", options.search.max_steps},
        {"step_s", g.duration_s},
        {"sockets", g.sockets},
        {"processes", options.step.processes},
        {"timeout_ms", g.timeout.to_ms()},
        {"retries", g.retries},
        {"users", g.users.size()},
        {"p99_max_ms", options.criteria.p99_max.to_ms()},
        {"answered_fraction_min", options.criteria.answered_fraction_min}}},
      {"steps", steps},
      {"ceiling", bench::to_json(ceiling)},
      {"at_ceiling", at_ceiling},
  };
}

}  // namespace rw::loadgen_shell
