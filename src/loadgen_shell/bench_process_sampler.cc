// /proc sampling of the processes under test (bench_process_sampler.h).
#include "loadgen_shell/bench_process_sampler.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <fstream>
#include <optional>
#include <sstream>

#include "io/clock.h"
#include "io/proc_stat.h"

namespace rw::loadgen_shell {

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// utime + stime in clock ticks (io/proc_stat.h).
std::optional<std::uint64_t> cpu_ticks(int pid) {
  const std::optional<io::ProcStat> stat = io::read_proc_stat(pid);
  if (!stat) return std::nullopt;
  return stat->cpu_ticks;
}

// VmRSS in KiB. (VmHWM is the peak since the process started, not during
// the step, so the peak is taken over the samples instead.)
std::uint64_t rss_kib(int pid) {
  std::istringstream status(read_text("/proc/" + std::to_string(pid) + "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6));
  }
  return 0;
}

}  // namespace

std::vector<int> find_pids_by_name(const std::string& name) {
  std::vector<int> pids;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return pids;
  const std::string wanted = name.substr(0, 15);
  while (const dirent* entry = ::readdir(proc)) {
    const std::string pid_text = entry->d_name;
    if (pid_text.empty() || !std::all_of(pid_text.begin(), pid_text.end(), ::isdigit)) continue;
    std::string comm = read_text("/proc/" + pid_text + "/comm");
    while (!comm.empty() && comm.back() == '\n') comm.pop_back();
    if (comm == wanted) pids.push_back(std::stoi(pid_text));
  }
  ::closedir(proc);
  std::sort(pids.begin(), pids.end());
  return pids;
}

ProcessSampler::ProcessSampler(std::vector<int> pids, Duration interval) : interval_(interval) {
  for (int pid : pids) {
    Tracked tracked;
    tracked.usage.pid = pid;
    std::string comm = read_text("/proc/" + std::to_string(pid) + "/comm");
    while (!comm.empty() && comm.back() == '\n') comm.pop_back();
    tracked.usage.name = comm;
    tracked_.push_back(tracked);
  }
}

ProcessSampler::~ProcessSampler() { stop(); }

void ProcessSampler::sample_all() {
  static const double ticks_per_second = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const Instant now = io::monotonic_now();
  std::lock_guard lock(mutex_);
  for (Tracked& tracked : tracked_) {
    if (!tracked.alive) continue;
    std::optional<std::uint64_t> ticks;
    try {
      ticks = cpu_ticks(tracked.usage.pid);
    } catch (const std::exception&) {
      // A process that exits while its stat file is read leaves a torn
      // line; it is not sampled again.
      ticks.reset();
    }
    if (!ticks) {
      tracked.alive = false;
      continue;
    }
    std::uint64_t rss = 0;
    try {
      rss = rss_kib(tracked.usage.pid);
    } catch (const std::exception&) {
      rss = 0;
    }
    tracked.usage.rss_peak_kib = std::max(tracked.usage.rss_peak_kib, rss);
    if (tracked.usage.samples == 0) {
      tracked.first_ticks = *ticks;
      tracked.first_at = now;
    } else {
      const double seconds = static_cast<double>((now - tracked.last_at).ns) / 1e9;
      if (seconds > 0) {
        const double percent =
            static_cast<double>(*ticks - tracked.last_ticks) / ticks_per_second / seconds * 100;
        tracked.usage.cpu_max_percent = std::max(tracked.usage.cpu_max_percent, percent);
      }
      const double total_seconds = static_cast<double>((now - tracked.first_at).ns) / 1e9;
      if (total_seconds > 0) {
        tracked.usage.cpu_avg_percent =
            static_cast<double>(*ticks - tracked.first_ticks) / ticks_per_second / total_seconds * 100;
      }
    }
    tracked.last_ticks = *ticks;
    tracked.last_at = now;
    ++tracked.usage.samples;
  }
}

void ProcessSampler::start() {
  if (tracked_.empty() || running_.exchange(true)) return;
  sample_all();
  thread_ = std::thread([this] {
    while (running_.load()) {
      std::this_thread::sleep_for(std::chrono::nanoseconds(interval_.ns));
      sample_all();
    }
  });
}

void ProcessSampler::stop() {
  if (!running_.exchange(false)) return;
  if (thread_.joinable()) thread_.join();
}

std::vector<bench::ProcessUsage> ProcessSampler::usage() const {
  std::lock_guard lock(mutex_);
  std::vector<bench::ProcessUsage> out;
  for (const Tracked& tracked : tracked_) out.push_back(tracked.usage);
  return out;
}

}  // namespace rw::loadgen_shell
