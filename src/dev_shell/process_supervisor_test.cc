// ProcessSupervisor on real short-lived children (/bin/sh, /bin/sleep): they
// are restarted with backoff, their output passed through, and stopped with
// SIGTERM, or SIGKILL when they ignore it.
#include "dev_shell/process_supervisor.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/wait.h>

#include <cerrno>
#include <string>
#include <vector>

#include "io/clock.h"

namespace rw::dev_shell {
namespace {

struct Recorded {
  std::vector<pid_t> started;
  std::vector<ChildEvent> exits;
  std::vector<std::string> lines;
};

SupervisorOptions fast_options() {
  return SupervisorOptions{.restart = {.delay = Duration::milliseconds(10),
                                       .delay_max = Duration::milliseconds(40),
                                       .stable_after = Duration::seconds(30)},
                           .stop_timeout = Duration::seconds(5),
                           .tick_interval = Duration::milliseconds(20),
                           .notice_prefix = "supervisor test",
                           .output_fd = STDERR_FILENO};
}

ChildSpec shell(std::string name, std::string script) {
  return ChildSpec{.name = std::move(name), .argv = {"/bin/sh", "-c", std::move(script)}};
}

// Runs `children` under a new supervisor; `stop_when` decides after each
// event whether to request the stop. Gives up (and fails) after 20 s.
std::string supervise(SupervisorOptions options, std::vector<ChildSpec> children, Recorded& recorded,
                      const std::function<bool(const ChildEvent&)>& stop_when) {
  auto supervisor = ProcessSupervisor::create(std::move(options));
  EXPECT_TRUE(supervisor) << supervisor.error().to_string();
  if (!supervisor) return "";
  ProcessSupervisor& running = **supervisor;
  const Instant give_up = io::monotonic_now() + Duration::seconds(20);
  return running.run(
      std::move(children),
      [&](const ChildEvent& event) {
        if (event.kind == ChildEventKind::kStarted) recorded.started.push_back(event.pid);
        if (event.kind == ChildEventKind::kExited) recorded.exits.push_back(event);
        if (event.kind == ChildEventKind::kOutput) recorded.lines.emplace_back(event.line);
        if (stop_when(event)) running.request_stop();
      },
      [&] {
        if (io::monotonic_now() > give_up) {
          ADD_FAILURE() << "the supervised run did not end";
          running.request_stop();
        }
      });
}

bool gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

TEST(ProcessSupervisor, RestartsAnExitingChildWithBackoffUntilStopped) {
  Recorded recorded;
  const std::string reason = supervise(fast_options(), {shell("crasher", "exit 3")}, recorded,
                                       [&](const ChildEvent&) { return recorded.started.size() == 4; });
  EXPECT_EQ(reason, "request");
  ASSERT_EQ(recorded.started.size(), 4u);
  ASSERT_GE(recorded.exits.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(WIFEXITED(recorded.exits[i].wait_status));
    EXPECT_EQ(WEXITSTATUS(recorded.exits[i].wait_status), 3);
  }
  EXPECT_EQ(recorded.exits[0].restart_delay, Duration::milliseconds(10));
  EXPECT_EQ(recorded.exits[1].restart_delay, Duration::milliseconds(20));
  EXPECT_EQ(recorded.exits[2].restart_delay, Duration::milliseconds(40));
  for (const pid_t pid : recorded.started) EXPECT_TRUE(gone(pid)) << pid;
}

TEST(ProcessSupervisor, StopsARunningChildWithSigterm) {
  Recorded recorded;
  const std::string reason =
      supervise(fast_options(), {ChildSpec{.name = "sleeper", .argv = {"/bin/sleep", "1000"}}}, recorded,
                [](const ChildEvent& event) { return event.kind == ChildEventKind::kStarted; });
  EXPECT_EQ(reason, "request");
  ASSERT_EQ(recorded.started.size(), 1u);
  ASSERT_EQ(recorded.exits.size(), 1u);
  EXPECT_TRUE(WIFSIGNALED(recorded.exits[0].wait_status));
  EXPECT_EQ(WTERMSIG(recorded.exits[0].wait_status), SIGTERM);
  EXPECT_FALSE(recorded.exits[0].restart_delay);
  EXPECT_TRUE(gone(recorded.started[0]));
}

TEST(ProcessSupervisor, KillsAChildThatIgnoresSigterm) {
  SupervisorOptions options = fast_options();
  options.stop_timeout = Duration::milliseconds(200);
  Recorded recorded;
  (void)supervise(options, {shell("stubborn", "trap '' TERM; echo ready; while :; do sleep 1; done")},
                  recorded, [](const ChildEvent& event) { return event.line == "ready"; });
  ASSERT_EQ(recorded.exits.size(), 1u);
  EXPECT_TRUE(WIFSIGNALED(recorded.exits[0].wait_status));
  EXPECT_EQ(WTERMSIG(recorded.exits[0].wait_status), SIGKILL);
  EXPECT_TRUE(gone(recorded.started[0]));
}

TEST(ProcessSupervisor, PassesOutputThroughLineByLine) {
  SupervisorOptions options = fast_options();
  // No restart within the test: the child's exit is what ends its output.
  options.restart.delay = Duration::seconds(60);
  Recorded recorded;
  (void)supervise(options, {shell("talker", "echo one; echo two >&2; printf three")}, recorded,
                  [](const ChildEvent& event) { return event.line == "three"; });
  // "three" has no newline: it is passed on at the end of the output.
  EXPECT_EQ(recorded.lines, (std::vector<std::string>{"one", "two", "three"}));
  EXPECT_EQ(recorded.started.size(), 1u);
}

TEST(ProcessSupervisor, StopsOnSigterm) {
  Recorded recorded;
  const std::string reason =
      supervise(fast_options(), {ChildSpec{.name = "sleeper", .argv = {"/bin/sleep", "1000"}}}, recorded,
                [](const ChildEvent& event) {
                  // Blocked in this thread, so it waits in the signalfd.
                  if (event.kind == ChildEventKind::kStarted) pthread_kill(pthread_self(), SIGTERM);
                  return false;
                });
  EXPECT_EQ(reason, "SIGTERM");
  ASSERT_EQ(recorded.exits.size(), 1u);
  EXPECT_TRUE(gone(recorded.started[0]));
}

TEST(ProcessSupervisor, ReportsAChildThatCannotBeExecuted) {
  Recorded recorded;
  (void)supervise(fast_options(), {ChildSpec{.name = "missing", .argv = {"/nonexistent/radiusward"}}},
                  recorded, [&](const ChildEvent&) { return recorded.exits.size() == 1; });
  ASSERT_GE(recorded.exits.size(), 1u);
  EXPECT_EQ(WEXITSTATUS(recorded.exits[0].wait_status), 127);
}

TEST(DescribeWaitStatus, NamesExitStatusAndSignal) {
  EXPECT_EQ(describe_wait_status(3 << 8), "exit status 3");
  EXPECT_EQ(describe_wait_status(SIGKILL), "killed by signal 9");
}

}  // namespace
}  // namespace rw::dev_shell
