// CPU and memory of the processes under test, sampled from /proc/PID/stat
// (utime + stime) and /proc/PID/status (VmRSS) on a thread of its own
// while a bench step runs (docs/benchmarking.md "The load generator: `radiusward bench run`").
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/time.h"
#include "bench/report.h"

namespace rw::loadgen_shell {

// The pids whose /proc/PID/comm equals `name` (at most 15 characters are
// compared, as the kernel truncates comm).
[[nodiscard]] std::vector<int> find_pids_by_name(const std::string& name);

// Samples every `interval` from start() until stop(); usage() then holds
// one ProcessUsage per pid. A process that exits stops being sampled.
class ProcessSampler {
 public:
  explicit ProcessSampler(std::vector<int> pids, Duration interval = Duration::milliseconds(250));
  ProcessSampler(const ProcessSampler&) = delete;
  ProcessSampler& operator=(const ProcessSampler&) = delete;
  ~ProcessSampler();

  void start();
  void stop();
  [[nodiscard]] std::vector<bench::ProcessUsage> usage() const;

 private:
  struct Tracked {
    bench::ProcessUsage usage;
    std::uint64_t first_ticks = 0;
    std::uint64_t last_ticks = 0;
    Instant first_at{};
    Instant last_at{};
    bool alive = true;
  };

  void sample_all();

  Duration interval_;
  std::vector<Tracked> tracked_;
  mutable std::mutex mutex_;
  std::atomic<bool> running_{false};
  std::thread thread_;
};

}  // namespace rw::loadgen_shell
