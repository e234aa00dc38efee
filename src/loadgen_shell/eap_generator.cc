// The EAP load's event loop (eap_generator.h): start what is due into free
// slots, drain answers and answer them, expire rounds, sleep until the
// next event.
#include "loadgen_shell/eap_generator.h"

#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "eap/eap_message.h"
#include "io/clock.h"
#include "io/csprng.h"
#include "io/file_descriptor.h"
#include "io/socket_address.h"
#include "loadgen_shell/bench_process_sampler.h"
#include "radius/attribute_crypto.h"
#include "radius/authenticator.h"

namespace rw::loadgen_shell {

namespace {

constexpr int kIdentifiers = 256;
constexpr int kConcurrencyMax = 65'536;  // 256 sockets.
constexpr std::array<std::uint8_t, 4> kNasIp{127, 0, 0, 1};
// Expiry scans every slot; this often is enough against timeouts of seconds.
constexpr Duration kExpiryInterval = Duration::milliseconds(10);
// RFC 5080 §2.2.1's MRT: no wait between retransmissions grows past this.
constexpr Duration kRetransmissionMax = Duration::seconds(16);

double cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// One in-flight conversation and its current round, kept for retransmission.
struct Slot {
  std::unique_ptr<EapSupplicant> supplicant;
  Instant scheduled{};
  Instant deadline{};
  int attempts = 0;
  radius::Authenticator request_authenticator{};
  std::vector<std::uint8_t> state;  // The last Access-Challenge's State (RFC 2865 §5.24).
  std::array<std::uint8_t, radius::kMaxPacketLength> wire{};
  std::size_t length = 0;
  std::size_t user = 0;  // Index into the users: User-Name of every round.
};

class EapLoad {
 public:
  EapLoad(const EapLoadOptions& options, const radius::SharedSecret& secret, SupplicantTls tls)
      : options_(options), secret_(secret), tls_(std::move(tls)) {}

  Result<void, std::string> open();
  void run();
  EapLoadResult take() { return std::move(result_); }

 private:
  void start(std::size_t index, Instant scheduled, Instant now);
  bool send_round(std::size_t index, Bytes eap_packet);
  void transmit(std::size_t index);
  void receive(std::size_t socket, Instant now);
  void on_answer(std::size_t index, Bytes datagram, Instant now);
  void finish(std::size_t index, Instant now, std::optional<SupplicantError> error);
  void expire(Instant now);
  Duration retransmission_timeout(int attempt);

  const EapLoadOptions& options_;
  const radius::SharedSecret& secret_;
  SupplicantTls tls_;
  std::vector<io::FileDescriptor> sockets_;
  std::vector<Slot> slots_;
  std::vector<std::size_t> free_;
  io::FileDescriptor epoll_;
  io::Csprng random_;
  sockaddr_storage address_{};
  socklen_t address_length_ = 0;
  std::uint64_t started_ = 0;
  std::uint64_t finished_ = 0;
  Instant last_end_{};
  EapLoadResult result_;
};

Result<void, std::string> EapLoad::open() {
  address_length_ = io::to_sockaddr(options_.target, address_);
  epoll_ = io::FileDescriptor(::epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_.valid()) return fail(fmt::format("epoll_create1: {}", std::strerror(errno)));
  const int concurrency = std::clamp(options_.concurrency, 1, kConcurrencyMax);
  slots_ = std::vector<Slot>(static_cast<std::size_t>(concurrency));
  for (std::size_t i = slots_.size(); i > 0; --i) free_.push_back(i - 1);
  const int family = options_.target.is_v6 ? AF_INET6 : AF_INET;
  const int sockets = (concurrency + kIdentifiers - 1) / kIdentifiers;
  for (int i = 0; i < sockets; ++i) {
    io::FileDescriptor fd(::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return fail(fmt::format("socket: {}", std::strerror(errno)));
    const int buffer_bytes = 4 << 20;
    if (::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUFFORCE, &buffer_bytes, sizeof buffer_bytes) != 0) {
      (void)::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof buffer_bytes);
    }
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u32 = static_cast<std::uint32_t>(i);
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd.get(), &event) != 0) {
      return fail(fmt::format("epoll_ctl: {}", std::strerror(errno)));
    }
    sockets_.push_back(std::move(fd));
  }
  return {};
}

void EapLoad::transmit(std::size_t index) {
  Slot& slot = slots_[index];
  // A failed send leaves the round's timer running: it is retried or lost.
  (void)::sendto(sockets_[index / kIdentifiers].get(), slot.wire.data(), slot.length, 0,
                 reinterpret_cast<const sockaddr*>(&address_), address_length_);
}

bool EapLoad::send_round(std::size_t index, Bytes eap_packet) {
  Slot& slot = slots_[index];
  slot.request_authenticator = radius::make_request_authenticator(random_);
  radius::PacketBuilder builder(slot.wire);
  builder.begin(radius::Code::kAccessRequest, static_cast<std::uint8_t>(index % kIdentifiers),
                slot.request_authenticator);
  builder.reserve_message_authenticator();
  builder.add(radius::attr::kUserName, as_bytes(options_.users[slot.user].name));
  builder.add(radius::attr::kNasIpAddress, kNasIp);
  builder.add_u32(radius::attr::kNasPort, static_cast<std::uint32_t>(index));
  builder.add(radius::attr::kNasIdentifier, as_bytes("radiusward-bench"));
  if (!slot.state.empty()) builder.add(radius::attr::kState, slot.state);
  eap::add_eap_message(builder, eap_packet);
  auto wire = builder.finish();
  if (!wire) return false;
  radius::sign_request(*wire, secret_);
  slot.length = wire->size();
  slot.attempts = 1;
  ++result_.rounds;
  transmit(index);
  return true;
}

void EapLoad::start(std::size_t index, Instant scheduled, Instant now) {
  Slot& slot = slots_[index];
  slot.user = static_cast<std::size_t>(started_ % options_.users.size());
  ++started_;
  const bench::BenchUser& user = options_.users[slot.user];
  slot.supplicant =
      std::make_unique<EapSupplicant>(options_.supplicant, tls_, user.name, user.password, random_);
  slot.scheduled = scheduled;
  slot.state.clear();
  slot.deadline = now + retransmission_timeout(1);
  const std::vector<std::uint8_t> identity = slot.supplicant->identity_response();
  if (!send_round(index, identity)) finish(index, now, SupplicantError::kMalformedRequest);
}

void EapLoad::finish(std::size_t index, Instant now, std::optional<SupplicantError> error) {
  Slot& slot = slots_[index];
  if (error) {
    ++result_.failed_by_reason[static_cast<std::size_t>(*error)];
  } else {
    ++result_.accepted;
    result_.histogram.record(now - slot.scheduled);
  }
  slot.supplicant.reset();
  ++finished_;
  last_end_ = now;
  free_.push_back(index);
}

void EapLoad::on_answer(std::size_t index, Bytes datagram, Instant now) {
  Slot& slot = slots_[index];
  auto parsed = radius::Packet::parse(datagram);
  // Only an answer that proves the secret and matches this round counts;
  // anything else (a late answer to an earlier round, a duplicate) is
  // dropped and the round keeps waiting (RFC 2865 §3). RFC 3579 §3.2: an
  // answer carrying EAP-Message must carry a Message-Authenticator; an
  // Access-Reject without EAP (FreeRADIUS's for a refused request) need not.
  if (!slot.supplicant || !parsed ||
      !radius::verify_response_authenticator(*parsed, slot.request_authenticator, secret_)) {
    ++result_.stray_answers;
    return;
  }
  const auto message_authenticator =
      radius::check_response_message_authenticator(*parsed, slot.request_authenticator, secret_);
  if (message_authenticator == radius::MessageAuthenticatorStatus::kInvalid ||
      (message_authenticator == radius::MessageAuthenticatorStatus::kAbsent &&
       parsed->find(radius::attr::kEapMessage).has_value())) {
    ++result_.stray_answers;
    return;
  }
  const radius::Packet& answer = *parsed;
  if (answer.code() == radius::Code::kAccessReject) {
    finish(index, now, slot.supplicant->failure_reason());
    return;
  }
  if (answer.code() == radius::Code::kAccessAccept) {
    std::array<std::uint8_t, radius::kMaxAttributeValueLength> recv_buffer{};
    std::array<std::uint8_t, radius::kMaxAttributeValueLength> send_buffer{};
    const auto recv_value = answer.find_vendor(radius::kVendorMicrosoft, radius::ms::kMppeRecvKey);
    const auto send_value = answer.find_vendor(radius::kVendorMicrosoft, radius::ms::kMppeSendKey);
    if (!recv_value || !send_value) {
      finish(index, now, SupplicantError::kMissingKeys);
      return;
    }
    auto recv_key = radius::decrypt_mppe_key(*recv_value, slot.request_authenticator, secret_, recv_buffer);
    auto send_key = radius::decrypt_mppe_key(*send_value, slot.request_authenticator, secret_, send_buffer);
    if (!recv_key || !send_key) {
      finish(index, now, SupplicantError::kMissingKeys);
      return;
    }
    auto checked = slot.supplicant->on_success(*recv_key, *send_key);
    finish(index, now, checked ? std::nullopt : std::optional<SupplicantError>(checked.error()));
    return;
  }
  if (answer.code() != radius::Code::kAccessChallenge) {
    finish(index, now, SupplicantError::kMalformedRequest);
    return;
  }
  std::array<std::uint8_t, eap::kEapPacketBytesMax> eap_buffer{};
  auto eap_packet = eap::reassemble(answer, eap_buffer);
  if (!eap_packet) {
    finish(index, now, SupplicantError::kMalformedRequest);
    return;
  }
  auto reply = slot.supplicant->on_request(*eap_packet);
  if (!reply) {
    finish(index, now, reply.error());
    return;
  }
  const auto state = answer.find(radius::attr::kState);
  if (state) {
    slot.state.assign(state->value.begin(), state->value.end());
  } else {
    slot.state.clear();
  }
  slot.deadline = now + retransmission_timeout(1);
  if (!send_round(index, *reply)) finish(index, now, SupplicantError::kMalformedRequest);
}

void EapLoad::receive(std::size_t socket, Instant now) {
  std::array<std::uint8_t, radius::kMaxPacketLength> buffer{};
  for (;;) {
    const ssize_t n = ::recv(sockets_[socket].get(), buffer.data(), buffer.size(), 0);
    if (n < 0) return;  // EAGAIN: drained (other errors: nothing to read either).
    if (static_cast<std::size_t>(n) < radius::kHeaderLength) {
      ++result_.stray_answers;
      continue;
    }
    const std::size_t index = socket * kIdentifiers + buffer[1];
    if (index >= slots_.size()) {
      ++result_.stray_answers;
      continue;
    }
    on_answer(index, Bytes(buffer.data(), static_cast<std::size_t>(n)), now);
  }
}

// RFC 5080 §2.2.1, as a NAS retransmits: the timeout doubles with every
// attempt, up to kRetransmissionMax, and each is spread by ±10 % so that
// devices that started together do not retransmit together.
Duration EapLoad::retransmission_timeout(int attempt) {
  std::int64_t ns = options_.timeout.ns;
  for (int i = 1; i < attempt && ns < kRetransmissionMax.ns; ++i) ns *= 2;
  ns = std::min(ns, std::max(kRetransmissionMax.ns, options_.timeout.ns));
  std::array<std::uint8_t, 2> noise{};
  random_.fill(noise);
  const double spread = (static_cast<double>(noise[0] << 8 | noise[1]) / 65535.0 - 0.5) * 0.2;
  return Duration::nanoseconds(static_cast<std::int64_t>(static_cast<double>(ns) * (1 + spread)));
}

void EapLoad::expire(Instant now) {
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    Slot& slot = slots_[i];
    if (!slot.supplicant || slot.deadline > now) continue;
    if (slot.attempts > options_.retries) {
      ++result_.timed_out;
      slot.supplicant.reset();
      ++finished_;
      last_end_ = now;
      free_.push_back(i);
      continue;
    }
    ++slot.attempts;
    ++result_.step.retransmissions;
    slot.deadline = now + retransmission_timeout(slot.attempts);
    transmit(i);  // RFC 5080 §2.2.1: the same bytes, the same Identifier.
  }
}

void EapLoad::run() {
  const std::uint64_t total =
      options_.count > 0 ? options_.count
                         : static_cast<std::uint64_t>(std::max(1.0, options_.rate * options_.duration_s));
  const Instant begin = io::monotonic_now();
  const double cpu_before = cpu_seconds();
  // The schedule: start number i at begin + i / rate (all at `begin` for a storm).
  auto scheduled_at = [&](std::uint64_t i) {
    if (options_.rate <= 0) return begin;
    return begin +
           Duration::nanoseconds(static_cast<std::int64_t>(static_cast<double>(i) * 1e9 / options_.rate));
  };
  const Instant last_start = scheduled_at(total - 1);
  Instant next_expiry = begin + kExpiryInterval;
  std::array<epoll_event, 64> events{};
  while (finished_ < total) {
    Instant now = io::monotonic_now();
    if (now > last_start + options_.deadline) break;
    while (started_ < total && !free_.empty() && scheduled_at(started_) <= now) {
      const std::size_t index = free_.back();
      free_.pop_back();
      start(index, scheduled_at(started_), now);
    }
    if (now >= next_expiry) {
      expire(now);
      next_expiry = now + kExpiryInterval;
    }
    Instant wake = next_expiry;
    if (started_ < total && !free_.empty()) wake = std::min(wake, scheduled_at(started_));
    const std::int64_t wait_ms = std::max<std::int64_t>(0, (wake - now).ns / 1'000'000);
    const int ready = ::epoll_wait(epoll_.get(), events.data(), static_cast<int>(events.size()),
                                   static_cast<int>(std::min<std::int64_t>(wait_ms, 10)));
    now = io::monotonic_now();
    for (int i = 0; i < ready; ++i) receive(events[static_cast<std::size_t>(i)].data.u32, now);
  }
  // What is still in flight at the deadline is lost.
  for (Slot& slot : slots_) {
    if (slot.supplicant) {
      ++result_.timed_out;
      slot.supplicant.reset();
    }
  }
  result_.timed_out += total - std::min(total, started_);
  result_.generator_cpu_s = cpu_seconds() - cpu_before;
  result_.wall_s = static_cast<double>((io::monotonic_now() - begin).ns) / 1e9;
  result_.elapsed_s = static_cast<double>((std::max(last_end_, begin) - begin).ns) / 1e9;
  bench::StepResult& step = result_.step;
  step.target_rate = options_.rate;
  step.duration_s = options_.rate > 0 ? static_cast<double>(total) / options_.rate : result_.elapsed_s;
  step.sent = total;
  step.answered = result_.accepted;
  step.lost = total - result_.accepted;
  std::uint64_t failed = 0;
  for (std::uint64_t count : result_.failed_by_reason) failed += count;
  step.invalid = failed;
  step.p50 = result_.histogram.percentile(0.50);
  step.p99 = result_.histogram.percentile(0.99);
  step.max = result_.histogram.max();
}

}  // namespace

Result<EapLoadResult, std::string> run_eap_load(const EapLoadOptions& options) {
  if (options.users.empty()) return fail(std::string("no users"));
  auto secret = radius::SharedSecret::create(as_bytes(options.secret));
  if (!secret) return fail(std::string("the shared secret is empty or too long"));
  auto tls = SupplicantTls::create(options.supplicant);
  if (!tls) return fail(tls.error());
  auto load = std::make_unique<EapLoad>(options, *secret, std::move(*tls));
  auto opened = load->open();
  if (!opened) return fail(opened.error());
  load->run();
  return load->take();
}

nlohmann::json to_json(const EapLoadResult& result) {
  nlohmann::json failed = nlohmann::json::object();
  for (std::size_t i = 0; i < result.failed_by_reason.size(); ++i) {
    if (result.failed_by_reason[i] > 0) {
      failed[std::string(to_string(static_cast<SupplicantError>(i)))] = result.failed_by_reason[i];
    }
  }
  const double per_auth_ms =
      result.accepted > 0 ? result.generator_cpu_s * 1000 / static_cast<double>(result.accepted) : 0;
  return {
      {"step", bench::to_json(result.step)},
      {"accepted", result.accepted},
      {"timed_out", result.timed_out},
      {"failed", failed},
      {"stray_answers", result.stray_answers},
      {"rounds", result.rounds},
      {"rounds_per_auth",
       result.step.sent > 0 ? static_cast<double>(result.rounds) / static_cast<double>(result.step.sent) : 0},
      {"elapsed_s", result.elapsed_s},
      {"generator_cpu_s", result.generator_cpu_s},
      {"generator_cpu_ms_per_auth", per_auth_ms},
      {"wall_s", result.wall_s},
      {"generator_cpu_percent", result.wall_s > 0 ? 100 * result.generator_cpu_s / result.wall_s : 0},
      {"p50_ms", static_cast<double>(result.step.p50.ns) / 1e6},
      {"p99_ms", static_cast<double>(result.step.p99.ns) / 1e6},
      {"max_ms", static_cast<double>(result.step.max.ns) / 1e6}};
}

Result<nlohmann::json, std::string> run_eap_ceiling(const EapCeilingOptions& options) {
  bench::CeilingSearch search(options.search);
  nlohmann::json steps = nlohmann::json::array();
  nlohmann::json at_ceiling = nullptr;
  std::vector<std::pair<double, nlohmann::json>> passed;
  int index = 0;
  while (auto rate = search.next_rate()) {
    EapLoadOptions load = options.load;
    load.rate = *rate;
    load.count = 0;
    ProcessSampler sampler(options.watched_pids);
    sampler.start();
    auto result = run_eap_load(load);
    sampler.stop();
    if (!result) return fail(result.error());
    bench::StepRecord record;
    record.result = result->step;
    record.verdict = bench::judge(record.result, options.criteria);
    record.processes = sampler.usage();
    ++index;
    nlohmann::json json = bench::to_json(record);
    json["index"] = index;
    json["eap"] = to_json(*result);
    std::fprintf(stderr,
                 "step %2d  target %6.0f/s  accepted %6.0f/s  p50 %7.1f ms  p99 %7.1f ms  timed out %llu  "
                 "failed %llu  retrans %llu  generator %.2f ms cpu/auth  %s\n",
                 index, *rate, record.result.answered_rate(), json["eap"]["p50_ms"].get<double>(),
                 json["eap"]["p99_ms"].get<double>(), static_cast<unsigned long long>(result->timed_out),
                 static_cast<unsigned long long>(record.result.invalid),
                 static_cast<unsigned long long>(record.result.retransmissions),
                 json["eap"]["generator_cpu_ms_per_auth"].get<double>(),
                 record.verdict.passed ? "PASS" : ("FAIL: " + record.verdict.reason).c_str());
    for (const bench::ProcessUsage& usage : record.processes) {
      std::fprintf(stderr, "         %s[%d] cpu avg %.0f%% max %.0f%%\n", usage.name.c_str(), usage.pid,
                   usage.cpu_avg_percent, usage.cpu_max_percent);
    }
    if (record.verdict.passed) passed.emplace_back(*rate, json);
    steps.push_back(json);
    search.on_step(*rate, record.verdict.passed);
    std::this_thread::sleep_for(std::chrono::nanoseconds(options.settle.ns));
  }
  const bench::Ceiling ceiling = search.ceiling();
  for (const auto& [rate, json] : passed) {
    if (rate == ceiling.rate) at_ceiling = json;
  }
  const EapLoadOptions& l = options.load;
  return nlohmann::json{
      {"label", options.label},
      {"scenario", fmt::format("eap-{}", to_string(l.supplicant.method))},
      {"auth_target", io::to_string(l.target)},
      {"options",
       {{"start_rate", options.search.start_rate},
        {"factor", options.search.factor},
        {"max_rate", options.search.max_rate},
        {"resolution", options.search.resolution},
        {"max_steps", options.search.max_steps},
        {"step_s", l.duration_s},
        {"concurrency", l.concurrency},
        {"timeout_ms", l.timeout.to_ms()},
        {"retries", l.retries},
        {"users", l.users.size()},
        {"tls_version", std::string(eap::to_string(l.supplicant.tls_version))},
        {"fragment_octets", l.supplicant.fragment_octets},
        {"p99_max_ms", options.criteria.p99_max.to_ms()},
        {"answered_fraction_min", options.criteria.answered_fraction_min}}},
      {"steps", steps},
      {"ceiling", bench::to_json(ceiling)},
      {"at_ceiling", at_ceiling},
  };
}

}  // namespace rw::loadgen_shell
