// ProcessSupervisor: runs a fixed set of child processes (the members and the
// gateway of `radiusward dev`), passes their output through with a name
// prefix, restarts any that exits after a delay chosen by
// deployment::RestartBackoff, and stops them all on SIGTERM or SIGINT.
// Children run in their own process group and die with the supervisor
// (PR_SET_PDEATHSIG), so none outlives it, even after a kill -9.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <signal.h>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/time.h"
#include "deployment/restart_backoff.h"
#include "io/file_descriptor.h"
#include "io/system_error.h"

namespace rw::dev_shell {

// One process to keep running.
struct ChildSpec {
  std::string name{};               // "member-2": prefixes its output and the notices.
  std::vector<std::string> argv{};  // argv[0] is the path of the executable (execv: no PATH search).
  std::string working_dir{};        // Empty: the supervisor's.
};

struct SupervisorOptions {
  deployment::RestartOptions restart{};
  // How long stopping waits for SIGTERM to end a child before SIGKILL.
  Duration stop_timeout = Duration::seconds(10);
  // How often run() calls its tick handler.
  Duration tick_interval = Duration::milliseconds(500);
  // Starts each notice line: "radiusward dev: member-2 exited (...)".
  std::string notice_prefix = "radiusward dev";
  // Where notices and the children's prefixed output go; -1: nowhere.
  int output_fd = STDERR_FILENO;
};

enum class ChildEventKind : std::uint8_t { kStarted, kExited, kOutput };

// What run() reports to its event handler. The views are valid during the call.
struct ChildEvent {
  ChildEventKind kind = ChildEventKind::kStarted;
  std::string_view name{};
  pid_t pid = 0;
  int wait_status = 0;                      // kExited: as waitpid() gave it.
  std::optional<Duration> restart_delay{};  // kExited while running; absent while stopping.
  std::string_view line{};                  // kOutput: one line, without its '\n'.
};

// "exit status 3", "killed by signal 9", from a waitpid() status.
[[nodiscard]] std::string describe_wait_status(int wait_status);

class ProcessSupervisor {
 public:
  using EventHandler = std::function<void(const ChildEvent&)>;
  using TickHandler = std::function<void()>;

  // Blocks SIGCHLD, SIGTERM, SIGINT and SIGHUP in the calling thread (they
  // are read from a signalfd) and ignores SIGPIPE. Call it before starting
  // any thread. Children get the default mask and dispositions back.
  [[nodiscard]] static Result<std::unique_ptr<ProcessSupervisor>, io::SystemError> create(
      SupervisorOptions options);

  // Kills and reaps any child still running; restores the signal mask and
  // SIGPIPE's disposition.
  ~ProcessSupervisor();
  ProcessSupervisor(const ProcessSupervisor&) = delete;
  ProcessSupervisor& operator=(const ProcessSupervisor&) = delete;

  // Starts every child and keeps them running until SIGTERM or SIGINT
  // arrives or a handler calls request_stop(); then sends SIGTERM to each
  // child's process group, waits up to stop_timeout (a second SIGTERM or
  // SIGINT cuts the wait short) and SIGKILLs what is left. Returns what
  // stopped it: "SIGTERM", "SIGINT" or "request". Handlers run on this
  // thread. A child that cannot be started (fork failed) is retried like one
  // that exited.
  [[nodiscard]] std::string run(std::vector<ChildSpec> children, const EventHandler& on_event,
                                const TickHandler& on_tick);

  // Makes run() stop its children and return; for its handlers.
  void request_stop() { stop_requested_ = true; }

 private:
  struct Slot;
  struct OutputStream;

  ProcessSupervisor(SupervisorOptions options, io::FileDescriptor signal_fd, io::FileDescriptor null_fd,
                    sigset_t previous_mask, struct sigaction previous_sigpipe);

  void spawn(Slot& slot, Instant now, const EventHandler& on_event);
  void reap(Instant now, const EventHandler& on_event);
  // Reads pending signals; returns the stop signal's name if one came.
  std::optional<std::string> read_signals(Instant now, const EventHandler& on_event);
  // Waits for output and signals until `deadline`; returns poll()'s result.
  void poll_once(Instant deadline);
  void read_output(OutputStream& stream, const EventHandler& on_event);
  void emit_line(const std::string& name, std::string_view line, const EventHandler& on_event);
  void notice(std::string_view text);
  void stop_children(const EventHandler& on_event);
  void kill_groups(int signal);

  SupervisorOptions options_;
  io::FileDescriptor signal_fd_;
  io::FileDescriptor null_fd_;
  sigset_t previous_mask_;
  struct sigaction previous_sigpipe_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<std::unique_ptr<OutputStream>> streams_;
  bool stop_requested_ = false;
  bool stopping_ = false;
  std::vector<bool> readable_;  // Per poll_once(): [0] the signalfd, then one per stream.
};

}  // namespace rw::dev_shell
