// radiusward-sim: runs the whole-system simulator (simulator.h).
//   radiusward-sim --seed N [--trace]   one seed in this process: same output on every run
//   radiusward-sim --seeds A-B          seeds A..B, each in a forked child
// Exit status 0 when every seed held every invariant, 1 otherwise. A crash
// inside libraft, or libraft's stall of an idle follower, is tolerated only
// with libraft's signature and in a seed listed in known_library_crashes.h
// (or any seed with --tolerate-library-faults, for the campaign).
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "consensus/forked_seed_for_test.h"
#include "sim/known_library_crashes.h"
#include "sim/simulator.h"

namespace {

using rw::consensus::SeedEnd;

void usage() {
  std::fprintf(
      stderr,
      "usage: radiusward-sim (--seed N | --seeds A-B) [--trace] [--fault-ms MS] [--quiet-ms MS]\n"
      "                      [--tolerate-library-faults] [--sabotage early-answer|split-transaction]\n");
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

// libraft's own crashes, as glibc reports a corrupted heap (docs/consensus.md
// "Known library problems seen in tests"), in a seed whose faults provoke them.
bool has_library_signature(std::uint64_t seed, const rw::consensus::SeedReport& report) {
  if (report.output.find("radiusward: assertion failed") != std::string::npos) return false;
  const std::string profile = rw::sim::profile_of(seed);
  const bool provoking =
      profile.find("disk_faults") != std::string::npos || profile.find("snapshots") != std::string::npos;
  // Under ASan: the faulting frame's caller (#1, as consensus_test checks) is in libraft.so.
  const std::size_t asan = report.output.find("ERROR: AddressSanitizer");
  if (asan != std::string::npos) {
    const std::size_t frame = report.output.find("    #1 ", asan);
    const std::size_t end = report.output.find('\n', frame);
    return provoking && frame != std::string::npos &&
           report.output.substr(frame, end - frame).find("libraft.so") != std::string::npos;
  }
  const bool heap = report.output.find("double free") != std::string::npos ||
                    report.output.find("free(): ") != std::string::npos ||
                    report.output.find("corrupted") != std::string::npos ||
                    report.text.find("signal 11") != std::string::npos;
  return provoking && heap;
}

}  // namespace

int main(int argc, char** argv) {
  rw::sim::RunOptions options;
  std::uint64_t first = 0;
  std::uint64_t last = 0;
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
      char* dash = nullptr;
      first = std::strtoull(value, &dash, 10);
      last = (dash && *dash == '-') ? std::strtoull(dash + 1, nullptr, 10) : first;
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
    } else if (arg == "--tolerate-library-faults") {
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

  unsigned passed = 0, violated = 0, crashed = 0, known_faults = 0;
  for (std::uint64_t seed = first; seed <= last; ++seed) {
    options.seed = seed;
    std::string line;
    const rw::consensus::SeedReport report = rw::consensus::run_forked(
        [&] {
          const rw::sim::RunReport r = rw::sim::run(options);
          std::printf("%s\n", summary(seed, r).c_str());
          std::fflush(stdout);
          return r.violation;
        },
        120);
    if (report.end == SeedEnd::kPassed) {
      ++passed;
    } else if (report.end == SeedEnd::kViolated) {
      const auto known = rw::sim::kKnownLibraryStalls.find(seed);
      const bool library = report.text.find("members have not converged") != std::string::npos &&
                           report.text.find("(libraft stall:") != std::string::npos &&
                           report.text.find(" || also: ") == std::string::npos;
      if (library && (known != rw::sim::kKnownLibraryStalls.end() || tolerate)) {
        ++known_faults;
        std::printf(
            "seed %" PRIu64 " libraft stall tolerated: %s\n", seed,
            known != rw::sim::kKnownLibraryStalls.end() ? known->second : "libraft's stall signature");
      } else {
        ++violated;
        std::printf("  replay: radiusward-sim --seed %" PRIu64 " --trace\n", seed);
      }
    } else {
      const auto known = rw::sim::kKnownLibraryCrashes.find(seed);
      const bool library = has_library_signature(seed, report);
      if (library && (known != rw::sim::kKnownLibraryCrashes.end() || tolerate)) {
        ++known_faults;
        std::printf(
            "seed %" PRIu64 " libraft crash (%s): %s\n", seed, report.text.c_str(),
            known != rw::sim::kKnownLibraryCrashes.end() ? known->second : "libraft's heap signature");
      } else {
        ++crashed;
        std::printf("seed %" PRIu64 " CRASHED: %s\n  replay: radiusward-sim --seed %" PRIu64
                    "\n--- its stderr (head) ---\n%s\n",
                    seed, report.text.c_str(), seed, report.output.substr(0, 4000).c_str());
      }
    }
    std::fflush(stdout);
  }
  std::printf("seeds %" PRIu64 "-%" PRIu64
              ": %u passed, %u violated, %u crashed, %u libraft faults tolerated\n",
              first, last, passed, violated, crashed, known_faults);
  return violated == 0 && crashed == 0 ? 0 : 1;
}
