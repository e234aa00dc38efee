// radiusward-sim: runs the whole-system simulator (simulator.h).
//   radiusward-sim --seed N [--trace]   one seed in this process: same output on every run
//   radiusward-sim --seeds A-B          seeds A..B, each in a forked child
// Exit status 0 when every seed held every invariant, 1 otherwise. A crash
// inside libraft is tolerated only with libraft's signature (its frame
// under the abort) and in a seed listed in known_library_crashes.h, or in
// any seed with --tolerate-library-crashes (the campaign's, which counts them).
#include <execinfo.h>
#include <unistd.h>

#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "consensus/forked_seed_for_test.h"
#include "sim/known_library_crashes.h"
#include "sim/simulator.h"

namespace {

using rw::consensus::SeedEnd;

void usage() {
  std::fprintf(
      stderr,
      "usage: radiusward-sim (--seed N | --seeds A-B | --seeds A,B,...) [--trace] [--fault-ms MS] "
      "[--quiet-ms MS]\n"
      "                      [--tolerate-library-crashes] [--sabotage early-answer|split-transaction]\n");
}

std::string summary(std::uint64_t seed, const rw::sim::RunReport& r) {
  char line[512];
  std::snprintf(line, sizeof line,
                "seed %" PRIu64 " %s requests=%" PRIu64 " acknowledged=%" PRIu64 " in_database=%" PRIu64
                " duplicated=%" PRIu64 " faults=%" PRIu64 " steps=%" PRIu64 " longest_wait_ms=%" PRId64
                " recovered_ms=%" PRId64 " virtual_ms=%" PRId64 " digest=%016" PRIx64 " [%s]",
                seed, r.violation.empty() ? "ok" : "VIOLATION", r.requests, r.acknowledged, r.in_database,
                r.duplicated, r.faults, r.steps, r.longest_unanswered_ms, r.recovered_ms, r.virtual_ms,
                r.digest, r.profile.c_str());
  std::string text = line;
  if (!r.violation.empty()) text += "\n  " + r.violation;
  return text;
}

// In the forked child: a fatal signal prints the stack (after a
// "backtrace:" line) before the process dies of it, so that the parent can
// tell a crash inside libraft from one in radiusward's or the simulator's
// code; glibc's heap abort alone cannot (the heap libraft corrupts may be
// freed by anyone).
[[maybe_unused]] void on_fatal_signal(int signal) {
  void* frames[64];
  const int n = backtrace(frames, 64);
  static const char kHead[] = "backtrace:\n";
  (void)!::write(STDERR_FILENO, kHead, sizeof kHead - 1);
  backtrace_symbols_fd(frames, n, STDERR_FILENO);
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

void print_stack_on_crash() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // The sanitizer's own report names the faulting frames (has_library_signature reads it).
#else
  void* warm[1];
  (void)backtrace(warm, 1);  // Loads the unwinder now, not in the handler.
  for (int signal : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(signal, on_fatal_signal);
#endif
}

// A crash inside libraft (docs/consensus.md "Known library problems seen in
// tests"), in a seed whose faults provoke them: the first frame below the
// signal handler and the C library's abort/free frames is in libraft.so
// (or, under ASan, the faulting frame's caller, as consensus_test checks).
bool has_library_signature(std::uint64_t seed, const rw::consensus::SeedReport& report) {
  if (report.output.find("radiusward: assertion failed") != std::string::npos) return false;
  const std::string profile = rw::sim::profile_of(seed);
  if (profile.find("disk_faults") == std::string::npos && profile.find("snapshots") == std::string::npos)
    return false;
  const std::size_t asan = report.output.find("ERROR: AddressSanitizer");
  if (asan != std::string::npos) {
    const std::size_t frame = report.output.find("    #1 ", asan);
    const std::size_t end = report.output.find('\n', frame);
    return frame != std::string::npos &&
           report.output.substr(frame, end - frame).find("libraft.so") != std::string::npos;
  }
  const std::size_t stack = report.output.find("backtrace:\n");
  if (stack == std::string::npos) return false;
  std::istringstream lines(report.output.substr(stack + 11));
  std::string line;
  bool past_handler = false;
  while (std::getline(lines, line)) {
    const bool libc = line.find("libc.so") != std::string::npos;
    if (!past_handler) {
      past_handler = libc;  // The handler's own frames come first, then the signal trampoline.
      continue;
    }
    if (libc) continue;
    return line.find("libraft.so") != std::string::npos;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  rw::sim::RunOptions options;
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::vector<std::uint64_t> listed;
  std::string seeds_text;
  bool single = false;
  bool tolerate = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (arg == "--seed" && value) {
      first = last = std::strtoull(value, nullptr, 10);
      single = true;
      ++i;
    } else if (arg == "--seeds" && value) {
      // A-B, or a list a,b,c (the named regression seeds).
      seeds_text = value;
      char* end = nullptr;
      first = std::strtoull(value, &end, 10);
      last = first;
      if (end && *end == '-') {
        last = std::strtoull(end + 1, nullptr, 10);
      } else {
        while (end && *end == ',') listed.push_back(std::strtoull(end + 1, &end, 10));
        if (!listed.empty()) listed.insert(listed.begin(), first);
      }
      ++i;
    } else if (arg == "--trace") {
      options.trace = true;
    } else if (arg == "--fault-ms" && value) {
      options.fault_ms = std::strtoll(value, nullptr, 10);
      ++i;
    } else if (arg == "--quiet-ms" && value) {
      options.quiet_ms = std::strtoll(value, nullptr, 10);
      ++i;
    } else if (arg == "--sabotage" && value) {
      const std::string what = value;
      if (what == "early-answer") {
        options.sabotage = rw::sim::RunOptions::Sabotage::kEarlyAnswer;
      } else if (what == "split-transaction") {
        options.sabotage = rw::sim::RunOptions::Sabotage::kSplitTransaction;
      } else {
        usage();
        return 2;
      }
      ++i;
    } else if (arg == "--tolerate-library-crashes") {
      tolerate = true;
    } else {
      usage();
      return 2;
    }
  }
  if (first == 0 || last < first) {
    usage();
    return 2;
  }

  if (single) {
    // In this process, so that a debugger or a sanitizer sees the replay.
    options.seed = first;
    const rw::sim::RunReport report = rw::sim::run(options);
    std::printf("%s\n", summary(first, report).c_str());
    return report.violation.empty() ? 0 : 1;
  }

  unsigned passed = 0, violated = 0, crashed = 0, library_crashes = 0;
  if (listed.empty()) {
    for (std::uint64_t seed = first; seed <= last; ++seed) listed.push_back(seed);
  }
  for (const std::uint64_t seed : listed) {
    options.seed = seed;
    std::string line;
    const rw::consensus::SeedReport report = rw::consensus::run_forked(
        [&] {
          print_stack_on_crash();
          const rw::sim::RunReport r = rw::sim::run(options);
          std::printf("%s\n", summary(seed, r).c_str());
          std::fflush(stdout);
          return r.violation;
        },
        120);
    if (report.end == SeedEnd::kPassed) {
      ++passed;
    } else if (report.end == SeedEnd::kViolated) {
      ++violated;
      std::printf("  replay: radiusward-sim --seed %" PRIu64 " --trace\n", seed);
    } else {
      const auto known = rw::sim::kKnownLibraryCrashes.find(seed);
      const bool library = has_library_signature(seed, report);
      if (library && (known != rw::sim::kKnownLibraryCrashes.end() || tolerate)) {
        ++library_crashes;
        std::printf(
            "seed %" PRIu64 " libraft crash (%s): %s\n", seed, report.text.c_str(),
            known != rw::sim::kKnownLibraryCrashes.end() ? known->second : "libraft's frame under the abort");
      } else {
        ++crashed;
        std::printf("seed %" PRIu64 " CRASHED: %s\n  replay: radiusward-sim --seed %" PRIu64
                    "\n--- its stderr (head) ---\n%s\n",
                    seed, report.text.c_str(), seed, report.output.substr(0, 4000).c_str());
      }
    }
    std::fflush(stdout);
  }
  std::printf("seeds %s: %u passed, %u violated, %u crashed, %u libraft crashes tolerated\n",
              seeds_text.c_str(), passed, violated, crashed, library_crashes);
  return violated == 0 && crashed == 0 ? 0 : 1;
}
