// Runs bench steps for `radiusward bench run` and `radiusward bench ceiling`
// (docs/benchmarking.md): a step across one or several generator processes
// with /proc sampling of the processes under test, and the ceiling search
// of bench/ceiling.h driving one step after another. Prints a progress line
// per step on stderr and returns the JSON report.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "bench/ceiling.h"
#include "bench/report.h"
#include "loadgen_shell/bench_generator.h"

namespace rw::loadgen_shell {

// The most generator processes of one step: the stop signal reaches that
// many (stop_steps_on_signals).
constexpr int kGeneratorProcessesMax = 256;

struct StepOptions {
  GeneratorOptions generator;
  int processes = 1;              // Generator processes, 1..kGeneratorProcessesMax; the rate is split evenly.
  std::vector<int> watched_pids;  // Processes under test, sampled from /proc.
};

// One step: forks `processes - 1` extra generators when asked, merges their
// results, and judges the step.
[[nodiscard]] Result<bench::StepRecord, std::string> run_step(const StepOptions& options,
                                                              GeneratorResult* merged = nullptr);

struct CeilingOptions {
  StepOptions step;
  bench::SearchOptions search;
  bench::PassCriteria criteria;
  Duration settle = Duration::milliseconds(1000);  // Pause between steps so queues drain.
  std::string label;                               // Names the server under test in the report.
};

// The whole search; every step is in the report in run order.
[[nodiscard]] Result<nlohmann::json, std::string> run_ceiling(const CeilingOptions& options);

// From now on SIGTERM and SIGINT end the schedule of the running step, in
// this process and in the generator processes it forks (stop_sending() in
// each): the requests in flight are still awaited, and the step reports what
// it sent. For `bench run`, whose step may be started long and ended when
// the caller is done (docs/benchmarking.md).
[[nodiscard]] Result<void, std::string> stop_steps_on_signals();

// "step  4000/s  answered 3998/s  p50 0.21 ms  p99 1.30 ms ... PASS".
[[nodiscard]] std::string progress_line(int index, const bench::StepRecord& step);

}  // namespace rw::loadgen_shell
