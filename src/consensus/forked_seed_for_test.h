// Runs one seed of a randomised test in a forked child process, so that a
// crash inside libraft 0.15.0 (it double-frees in a few seeds, and its
// silent use-after-free would corrupt every later seed of the same process)
// ends that seed only, and is reported as a crash rather than taking the
// test binary down. Test-only; POSIX.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>

namespace rw::consensus {

// How a forked seed ended.
enum class SeedEnd {
  kPassed,    // ran to the end, no violation
  kViolated,  // ran to a check that failed: `text` says which
  kCrashed,   // a signal, or an exit the seed did not choose (a sanitizer's)
};

struct SeedReport {
  SeedEnd end = SeedEnd::kPassed;
  std::string text;    // the violation, or how the child died
  std::string output;  // the child's stderr (sanitizer reports, aborts)
};

namespace forked_detail {

inline constexpr int kViolationStatus = 3;

inline std::string read_all(std::FILE* file) {
  std::string text;
  std::rewind(file);
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, n);
  return text;
}

inline void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace forked_detail

// Runs `body` (returning a violation, or "" when every check held) in a
// child process that is killed after `timeout_s` seconds (a hang counts as
// a crash). Requires: the calling process has a single thread.
inline SeedReport run_forked(const std::function<std::string()>& body, unsigned timeout_s) {
  using namespace forked_detail;
  // Anonymous files, not pipes: the parent reads them after the child ended,
  // so a long sanitizer report cannot block the child on a full pipe.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> verdict(std::tmpfile(), &std::fclose);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> output(std::tmpfile(), &std::fclose);
  if (!verdict || !output) return {SeedEnd::kCrashed, "tmpfile failed", {}};
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) return {SeedEnd::kCrashed, "fork failed", {}};
  if (child == 0) {
    ::dup2(::fileno(output.get()), STDERR_FILENO);
    ::alarm(timeout_s);
    const std::string violation = body();
    write_all(::fileno(verdict.get()), violation);
    // _exit: no destructors, atexit handlers or leak checks of the state
    // copied from the parent.
    ::_exit(violation.empty() ? 0 : kViolationStatus);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return {SeedEnd::kCrashed, "waitpid failed", {}};
  }
  SeedReport report;
  report.output = read_all(output.get());
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return report;
  if (WIFEXITED(status) && WEXITSTATUS(status) == kViolationStatus) {
    report.end = SeedEnd::kViolated;
    report.text = read_all(verdict.get());
    return report;
  }
  report.end = SeedEnd::kCrashed;
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    report.text = "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")" +
                  (signal == SIGALRM ? ": no end within " + std::to_string(timeout_s) + " s" : "");
  } else {
    report.text = "exited with status " + std::to_string(WEXITSTATUS(status));
  }
  return report;
}

}  // namespace rw::consensus
