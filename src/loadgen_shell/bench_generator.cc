// The open-loop generator's event loop (bench_generator.h): send what is
// due, drain answers, expire attempts, sleep until the next event.
#include "loadgen_shell/bench_generator.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <memory>

#include <fmt/format.h>

#include "base/assert.h"
#include "io/clock.h"
#include "io/csprng.h"
#include "io/file_descriptor.h"
#include "io/socket_address.h"

namespace rw::loadgen_shell {

namespace {

constexpr int kIdentifiers = 256;
constexpr int kReceiveBatch = 32;
constexpr std::size_t kReceiveBuffer = 4096;

// One in-flight request, kept whole for retransmission.
struct Slot {
  bool busy = false;
  std::uint32_t generation = 0;
  Instant scheduled{};
  int attempts = 0;
  bool to_accounting = false;
  std::uint16_t length = 0;
  std::array<std::uint8_t, bench::kMaxRequestLength> wire{};
  bench::Outstanding outstanding;
};

struct GeneratorSocket {
  io::FileDescriptor fd;
  std::array<Slot, kIdentifiers> slots{};
  std::vector<std::uint8_t> free_ids;
};

// When an attempt expires; stale entries (the slot moved on) are skipped.
struct Deadline {
  Instant at;
  std::uint32_t socket;
  std::uint8_t identifier;
  std::uint32_t generation;
};

// Set by stop_sending(), possibly in a signal handler.
std::atomic<bool> g_stop_sending{false};
static_assert(std::atomic<bool>::is_always_lock_free, "stop_sending() must be async-signal-safe");

class Generator {
 public:
  explicit Generator(const GeneratorOptions& options, const radius::SharedSecret& secret)
      : options_(options),
        secret_(secret),
        factory_(options.scenario, options.users, secret, options.run_tag, options.live_sessions) {}

  Result<void, std::string> open();
  void run();
  GeneratorResult take() { return std::move(result_); }

 private:
  void send_new(std::uint64_t sequence, Instant scheduled, Instant now);
  bool transmit(std::uint32_t socket, Slot& slot);
  void receive(std::uint32_t socket, Instant now);
  void on_answer(std::uint32_t socket, Bytes datagram, Instant now);
  void expire(Instant now);
  void release(std::uint32_t socket, Slot& slot);

  const GeneratorOptions& options_;
  const radius::SharedSecret& secret_;
  bench::RequestFactory factory_;
  std::vector<std::unique_ptr<GeneratorSocket>> sockets_;
  io::FileDescriptor epoll_;
  std::deque<Deadline> deadlines_;
  std::uint32_t cursor_ = 0;
  std::uint64_t in_flight_ = 0;
  std::FILE* acked_log_ = nullptr;
  io::Csprng random_;
  sockaddr_storage auth_address_{};
  socklen_t auth_length_ = 0;
  sockaddr_storage acct_address_{};
  socklen_t acct_length_ = 0;
  GeneratorResult result_;
};

Result<void, std::string> Generator::open() {
  auth_length_ = io::to_sockaddr(options_.auth_target, auth_address_);
  acct_length_ = io::to_sockaddr(options_.acct_target, acct_address_);
  epoll_ = io::FileDescriptor(::epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_.valid()) return fail(fmt::format("epoll_create1: {}", std::strerror(errno)));
  const int family = options_.auth_target.is_v6 ? AF_INET6 : AF_INET;
  for (int i = 0; i < std::max(1, options_.sockets); ++i) {
    auto socket = std::make_unique<GeneratorSocket>();
    socket->fd = io::FileDescriptor(::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!socket->fd.valid()) return fail(fmt::format("socket: {}", std::strerror(errno)));
    // Best effort: large buffers so that bursts of answers are not dropped
    // here. The *FORCE forms pass net.core.[rw]mem_max when allowed (root);
    // otherwise the kernel caps the plain forms there.
    const int buffer_bytes = 4 << 20;
    const int fd = socket->fd.get();
    if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer_bytes, sizeof buffer_bytes) != 0) {
      (void)::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof buffer_bytes);
    }
    if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buffer_bytes, sizeof buffer_bytes) != 0) {
      (void)::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer_bytes, sizeof buffer_bytes);
    }
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u32 = static_cast<std::uint32_t>(i);
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, socket->fd.get(), &event) != 0) {
      return fail(fmt::format("epoll_ctl: {}", std::strerror(errno)));
    }
    // Identifiers are handed out in a rotating order so that a late answer
    // to a lost request rarely meets a new request with the same Identifier.
    for (int id = kIdentifiers - 1; id >= 0; --id) socket->free_ids.push_back(static_cast<std::uint8_t>(id));
    sockets_.push_back(std::move(socket));
  }
  if (!options_.acked_log.empty()) {
    acked_log_ = std::fopen(options_.acked_log.c_str(), "a");
    if (acked_log_ == nullptr) {
      return fail(fmt::format("{}: {}", options_.acked_log, std::strerror(errno)));
    }
  }
  return {};
}

bool Generator::transmit(std::uint32_t socket, Slot& slot) {
  const sockaddr_storage& address = slot.to_accounting ? acct_address_ : auth_address_;
  const socklen_t length = slot.to_accounting ? acct_length_ : auth_length_;
  const ssize_t sent = ::sendto(sockets_[socket]->fd.get(), slot.wire.data(), slot.length, 0,
                                reinterpret_cast<const sockaddr*>(&address), length);
  if (sent < 0) ++result_.send_errors;  // The attempt's timer still runs: it is retried or lost.
  return sent >= 0;
}

void Generator::send_new(std::uint64_t sequence, Instant scheduled, Instant now) {
  ++result_.step.sent;
  result_.send_lag_max = std::max(result_.send_lag_max, now - scheduled);
  for (std::size_t tried = 0; tried < sockets_.size(); ++tried) {
    const std::uint32_t index = cursor_;
    cursor_ = (cursor_ + 1) % static_cast<std::uint32_t>(sockets_.size());
    GeneratorSocket& socket = *sockets_[index];
    if (socket.free_ids.empty()) continue;
    const std::uint8_t id = socket.free_ids.back();
    socket.free_ids.pop_back();
    Slot& slot = socket.slots[id];
    auto wire = factory_.build(sequence, id, random_, slot.wire, slot.outstanding);
    RW_ASSERT(wire.has_value());  // Bench requests are small and fixed in shape.
    slot.busy = true;
    ++slot.generation;
    slot.scheduled = scheduled;
    slot.attempts = 1;
    slot.to_accounting = bench::is_accounting(slot.outstanding.kind);
    slot.length = static_cast<std::uint16_t>(wire->size());
    ++in_flight_;
    transmit(index, slot);
    deadlines_.push_back({now + options_.timeout, index, id, slot.generation});
    return;
  }
  // Every Identifier of every socket is in flight: the server is far behind.
  ++result_.identifiers_exhausted;
  ++result_.step.lost;
}

void Generator::release(std::uint32_t socket, Slot& slot) {
  slot.busy = false;
  --in_flight_;
  sockets_[socket]->free_ids.insert(sockets_[socket]->free_ids.begin(), slot.outstanding.identifier);
}

void Generator::on_answer(std::uint32_t socket, Bytes datagram, Instant now) {
  if (datagram.size() < radius::kHeaderLength) {
    ++result_.invalid_by_reason[static_cast<std::size_t>(bench::VerifyError::kMalformed)];
    ++result_.step.invalid;
    return;
  }
  Slot& slot = sockets_[socket]->slots[datagram[1]];
  if (!slot.busy) {
    ++result_.stray_answers;
    return;
  }
  auto verified =
      bench::verify_answer(datagram, slot.outstanding, secret_, options_.require_message_authenticator);
  if (!verified) {
    // A wrong answer is counted and the request keeps waiting: only a valid
    // answer ends it (RFC 2865 §3: silently discard bad authenticators).
    ++result_.invalid_by_reason[static_cast<std::size_t>(verified.error())];
    ++result_.step.invalid;
    return;
  }
  result_.histogram.record(now - slot.scheduled);
  ++result_.step.answered;
  if (acked_log_ != nullptr && slot.to_accounting) {
    const std::string id = factory_.session_id(slot.outstanding.session);
    // Wall-clock time of the answer and its wait, so that a fault test can
    // tell when answers resumed after a fault healed (docs/benchmarking.md).
    timespec wall{};
    ::clock_gettime(CLOCK_REALTIME, &wall);
    const auto wall_us = static_cast<long long>(wall.tv_sec) * 1'000'000 + wall.tv_nsec / 1000;
    std::fprintf(acked_log_, "%s %s %lld %lld\n", id.c_str(),
                 std::string(bench::status_name(slot.outstanding.kind)).c_str(), wall_us,
                 static_cast<long long>((now - slot.scheduled).ns / 1000));
  }
  release(socket, slot);
}

void Generator::receive(std::uint32_t socket, Instant now) {
  static thread_local std::array<std::array<std::uint8_t, kReceiveBuffer>, kReceiveBatch> buffers;
  std::array<mmsghdr, kReceiveBatch> messages{};
  std::array<iovec, kReceiveBatch> vectors{};
  for (;;) {
    for (int i = 0; i < kReceiveBatch; ++i) {
      vectors[i] = {buffers[i].data(), buffers[i].size()};
      messages[i] = {};
      messages[i].msg_hdr.msg_iov = &vectors[i];
      messages[i].msg_hdr.msg_iovlen = 1;
    }
    const int count =
        ::recvmmsg(sockets_[socket]->fd.get(), messages.data(), kReceiveBatch, MSG_DONTWAIT, nullptr);
    if (count <= 0) return;
    for (int i = 0; i < count; ++i) on_answer(socket, Bytes(buffers[i].data(), messages[i].msg_len), now);
    if (count < kReceiveBatch) return;
  }
}

void Generator::expire(Instant now) {
  while (!deadlines_.empty() && deadlines_.front().at <= now) {
    const Deadline deadline = deadlines_.front();
    deadlines_.pop_front();
    Slot& slot = sockets_[deadline.socket]->slots[deadline.identifier];
    if (!slot.busy || slot.generation != deadline.generation) continue;
    if (slot.attempts <= options_.retries) {
      // RFC 5080 §2.2.1: a retransmission is the same packet, same
      // Identifier and Request Authenticator.
      ++slot.attempts;
      ++slot.generation;
      ++result_.step.retransmissions;
      transmit(deadline.socket, slot);
      deadlines_.push_back({now + options_.timeout, deadline.socket, deadline.identifier, slot.generation});
    } else {
      ++result_.step.lost;
      release(deadline.socket, slot);
    }
  }
}

void Generator::run() {
  auto total = static_cast<std::uint64_t>(std::llround(options_.rate * options_.duration_s));
  const double interval_ns = 1e9 / options_.rate;
  const Instant start = io::monotonic_now();
  std::uint64_t next = 0;
  std::array<epoll_event, 64> events{};
  for (;;) {
    Instant now = io::monotonic_now();
    if (next < total && g_stop_sending.load(std::memory_order_relaxed)) {
      total = next;
      result_.stopped_early = true;
    }
    // Send everything whose time has come, however late: the schedule never
    // waits on answers.
    while (next < total) {
      const Instant scheduled =
          start + Duration::nanoseconds(std::llround(static_cast<double>(next) * interval_ns));
      if (scheduled > now) break;
      send_new(next, scheduled, now);
      ++next;
    }
    const int ready = ::epoll_wait(epoll_.get(), events.data(), static_cast<int>(events.size()), 0);
    now = io::monotonic_now();
    for (int i = 0; i < ready; ++i) receive(events[i].data.u32, now);
    expire(now);
    if (next >= total && in_flight_ == 0) break;

    // Sleep until the next send or deadline, at most 5 ms.
    Instant wake = now + Duration::milliseconds(5);
    if (next < total) {
      wake = std::min(wake,
                      start + Duration::nanoseconds(std::llround(static_cast<double>(next) * interval_ns)));
    }
    if (!deadlines_.empty()) wake = std::min(wake, deadlines_.front().at);
    if (ready == 0 && wake > now) {
      const Duration wait = wake - now;
      pollfd poll_fd{epoll_.get(), POLLIN, 0};
      const timespec timeout{static_cast<time_t>(wait.ns / 1'000'000'000),
                             static_cast<long>(wait.ns % 1'000'000'000)};
      (void)::ppoll(&poll_fd, 1, &timeout, nullptr);
    }
  }
  if (acked_log_ != nullptr) std::fclose(acked_log_);
  acked_log_ = nullptr;
  bench::StepResult& step = result_.step;
  step.target_rate = options_.rate;
  step.duration_s = result_.stopped_early ? static_cast<double>(total) / options_.rate : options_.duration_s;
  step.p50 = result_.histogram.percentile(0.50);
  step.p99 = result_.histogram.percentile(0.99);
  step.max = result_.histogram.max();
}

}  // namespace

std::optional<gateway::Endpoint> parse_endpoint(const std::string& text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 >= text.size()) return std::nullopt;
  std::string host = text.substr(0, colon);
  const std::string port_text = text.substr(colon + 1);
  unsigned long port = 0;
  for (char c : port_text) {
    if (c < '0' || c > '9') return std::nullopt;
    port = port * 10 + static_cast<unsigned long>(c - '0');
    if (port > 65535) return std::nullopt;
  }
  gateway::Endpoint endpoint;
  endpoint.port = static_cast<std::uint16_t>(port);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    endpoint.is_v6 = true;
    if (::inet_pton(AF_INET6, host.c_str(), endpoint.address.data()) != 1) return std::nullopt;
    return endpoint;
  }
  if (::inet_pton(AF_INET, host.c_str(), endpoint.address.data()) != 1) return std::nullopt;
  return endpoint;
}

Result<GeneratorResult, std::string> run_generator(const GeneratorOptions& options) {
  if (options.users.empty()) return fail(std::string("no bench users"));
  if (!(options.rate > 0) || !(options.duration_s > 0))
    return fail(std::string("rate and duration must be > 0"));
  auto secret = radius::SharedSecret::create(as_bytes(options.secret));
  if (!secret) return fail(fmt::format("secret: {}", radius::to_string(secret.error())));
  auto generator = std::make_unique<Generator>(options, *secret);
  if (auto opened = generator->open(); !opened) return fail(opened.error());
  generator->run();
  return generator->take();
}

void stop_sending() noexcept { g_stop_sending.store(true, std::memory_order_relaxed); }

void merge_results(GeneratorResult& into, const GeneratorResult& other) {
  bench::StepResult& step = into.step;
  step.target_rate += other.step.target_rate;
  step.duration_s = std::max(step.duration_s, other.step.duration_s);
  step.sent += other.step.sent;
  step.answered += other.step.answered;
  step.lost += other.step.lost;
  step.retransmissions += other.step.retransmissions;
  step.invalid += other.step.invalid;
  into.histogram.merge(other.histogram);
  for (std::size_t i = 0; i < into.invalid_by_reason.size(); ++i) {
    into.invalid_by_reason[i] += other.invalid_by_reason[i];
  }
  into.identifiers_exhausted += other.identifiers_exhausted;
  into.stray_answers += other.stray_answers;
  into.send_errors += other.send_errors;
  into.send_lag_max = std::max(into.send_lag_max, other.send_lag_max);
  into.stopped_early = into.stopped_early || other.stopped_early;
  step.p50 = into.histogram.percentile(0.50);
  step.p99 = into.histogram.percentile(0.99);
  step.max = into.histogram.max();
}

}  // namespace rw::loadgen_shell
