// fork/exec, a signalfd for SIGCHLD and the stop signals, poll() over the
// children's output pipes, and restart timers.
#include "dev_shell/process_supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "io/clock.h"

namespace rw::dev_shell {

struct ProcessSupervisor::Slot {
  ChildSpec spec;
  deployment::RestartBackoff backoff;
  pid_t pid = 0;  // 0: not running.
  Instant started{};
  std::optional<Instant> restart_at{};
};

struct ProcessSupervisor::OutputStream {
  std::string name;
  io::FileDescriptor fd;
  std::string partial_line{};
};

namespace {

// A line longer than this is passed on in pieces; it bounds each stream's buffer.
constexpr std::size_t kLineBytesMax = 8192;

sigset_t supervised_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (const int signal : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, signal);
  return set;
}

std::string format_delay(Duration delay) {
  const std::int64_t ms = delay.to_ms();
  if (ms < 1000) return fmt::format("{} ms", ms);
  if (ms % 1000 == 0) return fmt::format("{} s", ms / 1000);
  return fmt::format("{}.{} s", ms / 1000, ms % 1000 / 100);
}

void write_all(int fd, std::string_view text) {
  while (fd >= 0 && !text.empty()) {
    const ssize_t written = ::write(fd, text.data(), text.size());
    if (written < 0 && errno == EINTR) continue;
    // The reader is gone (EPIPE) or the terminal refuses: output is best effort.
    if (written <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(written));
  }
}

int poll_timeout_ms(Instant now, Instant deadline) {
  if (deadline <= now) return 0;
  // Rounded up, so that a deadline 0.4 ms away does not spin.
  const std::int64_t ms = (deadline - now).ns / 1'000'000 + 1;
  return static_cast<int>(std::min<std::int64_t>(ms, 60'000));
}

}  // namespace

std::string describe_wait_status(int wait_status) {
  if (WIFEXITED(wait_status)) return fmt::format("exit status {}", WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) return fmt::format("killed by signal {}", WTERMSIG(wait_status));
  return fmt::format("wait status {:#x}", wait_status);
}

Result<std::unique_ptr<ProcessSupervisor>, io::SystemError> ProcessSupervisor::create(
    SupervisorOptions options) {
  const sigset_t set = supervised_signals();
  sigset_t previous_mask;
  if (const int error = pthread_sigmask(SIG_BLOCK, &set, &previous_mask); error != 0) {
    return fail(io::SystemError{"pthread_sigmask", error});
  }
  io::FileDescriptor signal_fd(::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC));
  if (!signal_fd.valid()) {
    io::SystemError error = io::last_system_error("signalfd");
    pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
    return fail(std::move(error));
  }
  io::FileDescriptor null_fd(::open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!null_fd.valid()) {
    io::SystemError error = io::last_system_error("open /dev/null");
    pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
    return fail(std::move(error));
  }
  // A supervisor whose stderr reader went away keeps supervising.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction previous_sigpipe {};
  sigaction(SIGPIPE, &ignore, &previous_sigpipe);
  return std::unique_ptr<ProcessSupervisor>(new ProcessSupervisor(
      std::move(options), std::move(signal_fd), std::move(null_fd), previous_mask, previous_sigpipe));
}

ProcessSupervisor::ProcessSupervisor(SupervisorOptions options, io::FileDescriptor signal_fd,
                                     io::FileDescriptor null_fd, sigset_t previous_mask,
                                     struct sigaction previous_sigpipe)
    : options_(std::move(options)),
      signal_fd_(std::move(signal_fd)),
      null_fd_(std::move(null_fd)),
      previous_mask_(previous_mask),
      previous_sigpipe_(previous_sigpipe) {}

ProcessSupervisor::~ProcessSupervisor() {
  kill_groups(SIGKILL);
  for (const auto& slot : slots_) {
    if (slot->pid > 0) ::waitpid(slot->pid, nullptr, 0);
  }
  sigaction(SIGPIPE, &previous_sigpipe_, nullptr);
  signal_fd_.reset();
  pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
}

std::string ProcessSupervisor::run(std::vector<ChildSpec> children, const EventHandler& on_event,
                                   const TickHandler& on_tick) {
  for (ChildSpec& spec : children) {
    slots_.push_back(std::make_unique<Slot>(
        Slot{.spec = std::move(spec), .backoff = deployment::RestartBackoff(options_.restart)}));
  }
  Instant now = io::monotonic_now();
  for (const auto& slot : slots_) spawn(*slot, now, on_event);
  Instant next_tick = now + options_.tick_interval;
  std::string reason = "request";
  while (!stop_requested_) {
    Instant deadline = next_tick;
    for (const auto& slot : slots_) {
      if (slot->restart_at) deadline = std::min(deadline, *slot->restart_at);
    }
    poll_once(deadline);
    now = io::monotonic_now();
    if (readable_[0]) {
      if (std::optional<std::string> signal = read_signals(now, on_event)) {
        reason = *signal;
        break;
      }
    }
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      if (readable_[i + 1]) read_output(*streams_[i], on_event);
    }
    std::erase_if(streams_, [](const auto& stream) { return !stream->fd.valid(); });
    for (const auto& slot : slots_) {
      if (slot->restart_at && *slot->restart_at <= now) spawn(*slot, now, on_event);
    }
    if (next_tick <= now) {
      on_tick();
      next_tick = io::monotonic_now() + options_.tick_interval;
    }
  }
  notice(fmt::format("{}: stopping every process", reason));
  stop_children(on_event);
  return reason;
}

void ProcessSupervisor::spawn(Slot& slot, Instant now, const EventHandler& on_event) {
  slot.restart_at.reset();
  // Everything the child needs is built before fork(): after it, only
  // async-signal-safe calls.
  std::vector<char*> argv;
  for (std::string& arg : slot.spec.argv) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const std::string exec_failed = fmt::format("cannot execute {}\n", slot.spec.argv.at(0));
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    notice(fmt::format("cannot start {}: {}", slot.spec.name, io::last_system_error("pipe2").to_string()));
    slot.restart_at = now + slot.backoff.on_exit(now, now);
    return;
  }
  io::FileDescriptor read_end(pipe_fds[0]);
  io::FileDescriptor write_end(pipe_fds[1]);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    notice(fmt::format("cannot start {}: {}", slot.spec.name, io::last_system_error("fork").to_string()));
    slot.restart_at = now + slot.backoff.on_exit(now, now);
    return;
  }
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    // Its own process group: a Ctrl-C at the terminal reaches the supervisor
    // only, which then stops the children in order.
    ::setpgid(0, 0);
    // Dies with the supervisor, even after a kill -9 of it; SIGTERM so that a
    // leader member still hands leadership over.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(126);
    ::dup2(null_fd_.get(), STDIN_FILENO);
    ::dup2(write_end.get(), STDOUT_FILENO);
    ::dup2(write_end.get(), STDERR_FILENO);
    if (!slot.spec.working_dir.empty() && ::chdir(slot.spec.working_dir.c_str()) != 0) ::_exit(126);
    ::execv(argv[0], argv.data());
    [[maybe_unused]] const ssize_t ignored = ::write(STDERR_FILENO, exec_failed.data(), exec_failed.size());
    ::_exit(127);
  }
  // Also here, so that a stop signal sent right away finds the group.
  ::setpgid(pid, pid);
  ::fcntl(read_end.get(), F_SETFL, O_NONBLOCK);
  streams_.push_back(
      std::make_unique<OutputStream>(OutputStream{.name = slot.spec.name, .fd = std::move(read_end)}));
  slot.pid = pid;
  slot.started = now;
  notice(fmt::format("started {} (pid {})", slot.spec.name, pid));
  on_event(ChildEvent{.kind = ChildEventKind::kStarted, .name = slot.spec.name, .pid = pid});
}

void ProcessSupervisor::reap(Instant now, const EventHandler& on_event) {
  for (const auto& slot : slots_) {
    if (slot->pid <= 0) continue;
    int status = 0;
    const pid_t done = ::waitpid(slot->pid, &status, WNOHANG);
    if (done != slot->pid) continue;
    const pid_t pid = std::exchange(slot->pid, 0);
    ChildEvent event{
        .kind = ChildEventKind::kExited, .name = slot->spec.name, .pid = pid, .wait_status = status};
    if (stopping_) {
      notice(fmt::format("{} stopped ({})", slot->spec.name, describe_wait_status(status)));
    } else {
      const Duration delay = slot->backoff.on_exit(slot->started, now);
      slot->restart_at = now + delay;
      event.restart_delay = delay;
      notice(fmt::format("{} exited ({}); restarting in {}{}", slot->spec.name, describe_wait_status(status),
                         format_delay(delay),
                         slot->backoff.crashes_in_a_row() > 1
                             ? fmt::format(" ({} crashes in a row)", slot->backoff.crashes_in_a_row())
                             : ""));
    }
    on_event(event);
  }
}

std::optional<std::string> ProcessSupervisor::read_signals(Instant now, const EventHandler& on_event) {
  std::optional<std::string> stop;
  signalfd_siginfo info;
  while (::read(signal_fd_.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    switch (info.ssi_signo) {
      case SIGCHLD:
        reap(now, on_event);
        break;
      case SIGTERM:
        stop = "SIGTERM";
        break;
      case SIGINT:
        stop = "SIGINT";
        break;
      default:
        notice("SIGHUP ignored");
        break;
    }
  }
  // SIGCHLD coalesces; reaping once more costs a waitpid per child.
  reap(now, on_event);
  return stop;
}

void ProcessSupervisor::poll_once(Instant deadline) {
  std::vector<pollfd> fds;
  fds.push_back(pollfd{.fd = signal_fd_.get(), .events = POLLIN, .revents = 0});
  for (const auto& stream : streams_)
    fds.push_back(pollfd{.fd = stream->fd.get(), .events = POLLIN, .revents = 0});
  const int ready = ::poll(fds.data(), fds.size(), poll_timeout_ms(io::monotonic_now(), deadline));
  if (ready < 0 && errno != EINTR) die(io::last_system_error("poll"));
  readable_.assign(fds.size(), false);
  for (std::size_t i = 0; ready > 0 && i < fds.size(); ++i) readable_[i] = fds[i].revents != 0;
}

void ProcessSupervisor::read_output(OutputStream& stream, const EventHandler& on_event) {
  char buffer[4096];
  for (;;) {
    const ssize_t got = ::read(stream.fd.get(), buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && errno == EAGAIN) return;
    if (got <= 0) {
      // EOF: every holder of the write end (the child) is gone.
      if (!stream.partial_line.empty()) emit_line(stream.name, stream.partial_line, on_event);
      stream.fd.reset();
      return;
    }
    stream.partial_line.append(buffer, static_cast<std::size_t>(got));
    std::size_t start = 0;
    for (std::size_t end; (end = stream.partial_line.find('\n', start)) != std::string::npos;
         start = end + 1) {
      emit_line(stream.name, std::string_view(stream.partial_line).substr(start, end - start), on_event);
    }
    stream.partial_line.erase(0, start);
    if (stream.partial_line.size() >= kLineBytesMax) {
      emit_line(stream.name, stream.partial_line, on_event);
      stream.partial_line.clear();
    }
  }
}

void ProcessSupervisor::emit_line(const std::string& name, std::string_view line,
                                  const EventHandler& on_event) {
  write_all(options_.output_fd, fmt::format("{:<9}| {}\n", name, line));
  on_event(ChildEvent{.kind = ChildEventKind::kOutput, .name = name, .line = line});
}

void ProcessSupervisor::notice(std::string_view text) {
  write_all(options_.output_fd, fmt::format("{}: {}\n", options_.notice_prefix, text));
}

void ProcessSupervisor::kill_groups(int signal) {
  for (const auto& slot : slots_) {
    if (slot->pid > 0) ::kill(-slot->pid, signal);
  }
}

void ProcessSupervisor::stop_children(const EventHandler& on_event) {
  stopping_ = true;
  for (const auto& slot : slots_) slot->restart_at.reset();
  kill_groups(SIGTERM);
  const auto running = [this] {
    return std::any_of(slots_.begin(), slots_.end(), [](const auto& slot) { return slot->pid > 0; });
  };
  Instant deadline = io::monotonic_now() + options_.stop_timeout;
  while (running() && io::monotonic_now() < deadline) {
    poll_once(deadline);
    const Instant now = io::monotonic_now();
    if (readable_[0] && read_signals(now, on_event)) {
      notice("second stop signal: killing every process");
      deadline = now;
    }
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      if (readable_[i + 1]) read_output(*streams_[i], on_event);
    }
    std::erase_if(streams_, [](const auto& stream) { return !stream->fd.valid(); });
  }
  if (running()) {
    notice(fmt::format("not stopped after {}: SIGKILL", format_delay(options_.stop_timeout)));
    kill_groups(SIGKILL);
    for (const auto& slot : slots_) {
      if (slot->pid > 0) {
        int status = 0;
        ::waitpid(slot->pid, &status, 0);
        const pid_t pid = std::exchange(slot->pid, 0);
        notice(fmt::format("{} stopped ({})", slot->spec.name, describe_wait_status(status)));
        on_event(ChildEvent{
            .kind = ChildEventKind::kExited, .name = slot->spec.name, .pid = pid, .wait_status = status});
      }
    }
  }
  // What the children wrote last; a grandchild still holding a pipe must not
  // hold the supervisor up, so each stream is read once more, not to EOF.
  for (const auto& stream : streams_) read_output(*stream, on_event);
  streams_.clear();
}

}  // namespace rw::dev_shell
