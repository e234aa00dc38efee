// The TLS raft transport with real Nodes, sockets on 127.0.0.1 and real disk:
// three members elect, commit and fail over; a rogue Node that impersonates a
// member without a valid member certificate never gets a vote or an append
// (and the same rogue in plaintext does take over, so the test can fail);
// raw TLS and plaintext clients with every kind of wrong identity are closed
// before libraft sees a byte; a member never talks to an impostor server.
// Label: integration.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "consensus/dedup_log_for_test.h"
#include "consensus/node.h"
#include "consensus/node_test_support.h"
#include "consensus/raft_c.h"
#include "consensus/tls_for_test.h"
#include "consensus/tls_preamble.h"

namespace rw::consensus {
namespace {

using std::chrono::milliseconds;
using Bytes8 = std::vector<std::uint8_t>;

// The raw clients below write with OpenSSL into sockets the member closes:
// EPIPE, not death by SIGPIPE.
const bool kSigpipeIgnored = [] { return std::signal(SIGPIPE, SIG_IGN) != SIG_ERR; }();

// The certificates every test uses: the cluster CA and its CRL, a foreign CA.
struct Pki {
  Pki()
      : root(fresh_data_root("consensus_tls_pki")),
        cluster(root / "cluster", "cluster"),
        foreign(root / "foreign", "foreign"),
        member{cluster.issue("member-1"), cluster.issue("member-2"), cluster.issue("member-3")},
        revoked_member_2(cluster.issue("member-2")),
        foreign_member_2(foreign.issue("member-2")),
        gateway(cluster.issue("gateway-x")),
        member_9(cluster.issue("member-9")),
        crl(cluster.crl({revoked_member_2.serial})) {}
  ~Pki() { std::filesystem::remove_all(root); }

  // A context that trusts the cluster CA (with its CRL) and presents `own`.
  std::shared_ptr<SSL_CTX> context(const TestCertificate* own) const {
    auto made = tls_context_for_test(cluster.certificate_path(), own, crl);
    EXPECT_NE(made, nullptr);
    return made;
  }
  TlsTransportOptions transport(const TestCertificate& own) const {
    TlsTransportOptions options;
    options.server_context = options.client_context = context(&own);
    options.log_interval_ms = 0;
    return options;
  }

  std::filesystem::path root;
  TestAuthority cluster;
  TestAuthority foreign;
  TestCertificate member[3];
  TestCertificate revoked_member_2;
  TestCertificate foreign_member_2;
  TestCertificate gateway;
  TestCertificate member_9;
  std::string crl;
};

const Pki& pki() {
  static const Pki instance;
  return instance;
}

// Three members on distinct free loopback ports (the kernel may hand the
// same free port to two calls in a row).
std::vector<Member> loopback_voters() {
  std::vector<std::uint16_t> ports;
  while (ports.size() < 3) {
    const std::uint16_t port = free_loopback_port();
    if (std::find(ports.begin(), ports.end(), port) == ports.end()) ports.push_back(port);
  }
  std::vector<Member> voters;
  for (std::uint64_t id = 1; id <= 3; ++id)
    voters.push_back({id, "127.0.0.1:" + std::to_string(ports[id - 1])});
  return voters;
}

std::uint16_t port_of(const Member& member) {
  return static_cast<std::uint16_t>(std::stoi(member.address.substr(member.address.rfind(':') + 1)));
}

Bytes8 bytes_of(const std::string& text) { return Bytes8(text.begin(), text.end()); }

NodeOptions node_options(const std::filesystem::path& root, const std::vector<Member>& voters,
                         std::size_t i) {
  NodeOptions options;
  options.id = voters[i].id;
  options.address = voters[i].address;
  options.data_dir = (root / ("member" + std::to_string(voters[i].id))).string();
  options.voters = voters;
  options.trace_library = false;
  // Refusals in the test output, where a failure needs them.
  options.log = [id = options.id](LogLevel level, std::string_view message) {
    if (level >= LogLevel::kWarning)
      std::fprintf(stderr, "member %llu: %.*s\n", static_cast<unsigned long long>(id),
                   static_cast<int>(message.size()), message.data());
  };
  return options;
}

std::unique_ptr<Node> start_node(NodeOptions options, ReplicatedState& state) {
  auto node = Node::start(std::move(options), state);
  EXPECT_TRUE(node.has_value()) << node.error().message;
  return node ? std::move(*node) : nullptr;
}

// Submits `entry` and waits for its outcome.
Outcome submit_and_wait(Node& node, const Bytes8& entry) {
  std::atomic<bool> done{false};
  Outcome result;
  if (node.submit(entry, [&](const Outcome& outcome) { result = outcome, done = true; }) !=
      Node::SubmitStatus::kQueued) {
    return result;
  }
  wait_until([&] { return node.deliver_completions(), done.load(); }, milliseconds(10000));
  return result;
}

// Entries of a /proc/self folder: open descriptors or running threads.
std::size_t count_entries(const char* folder) {
  return static_cast<std::size_t>(
      std::distance(std::filesystem::directory_iterator(folder), std::filesystem::directory_iterator()));
}

TEST(TlsCluster, ElectsCommitsAndFailsOverOverTls) {
  const auto root = fresh_data_root("consensus_tls_cluster");
  const std::vector<Member> voters = loopback_voters();
  {
    // A one-member cluster commits once first: libuv's disk thread pool and
    // OpenSSL's globals stay for the process, and are not counted.
    DedupLog warm_up_state;
    NodeOptions options = node_options(root / "warm-up", {voters[0]}, 0);
    options.tls = pki().transport(pki().member[0]);
    auto warm_up = start_node(std::move(options), warm_up_state);
    ASSERT_NE(warm_up, nullptr);
    ASSERT_TRUE(wait_until([&] { return warm_up->ready_for_work(); }, milliseconds(5000)));
    ASSERT_EQ(submit_and_wait(*warm_up, bytes_of("warm-up")).kind, OutcomeKind::kCommitted);
  }
  const std::size_t descriptors_before = count_entries("/proc/self/fd");
  const std::size_t threads_before = count_entries("/proc/self/task");
  std::vector<std::unique_ptr<DedupLog>> states;
  std::vector<std::unique_ptr<Node>> nodes(3);
  for (std::size_t i = 0; i < 3; ++i) {
    states.push_back(std::make_unique<DedupLog>());
    NodeOptions options = node_options(root, voters, i);
    options.tls = pki().transport(pki().member[i]);
    nodes[i] = start_node(std::move(options), *states[i]);
    ASSERT_NE(nodes[i], nullptr);
  }
  auto ready_leader = [&] {
    for (std::size_t i = 0; i < 3; ++i) {
      if (nodes[i] && nodes[i]->ready_for_work()) return static_cast<int>(i);
    }
    return -1;
  };
  int leader = -1;
  ASSERT_TRUE(wait_until([&] { return (leader = ready_leader()) >= 0; }, milliseconds(10000)));

  std::uint64_t last = 0;
  for (int i = 0; i < 200; ++i) {
    const Outcome outcome = submit_and_wait(*nodes[leader], bytes_of("tls-record-" + std::to_string(i)));
    ASSERT_EQ(outcome.kind, OutcomeKind::kCommitted) << i;
    last = outcome.index;
  }
  for (auto& node : nodes) {
    ASSERT_TRUE(wait_until([&] { return node->status().last_applied >= last; }, milliseconds(10000)));
  }

  // The leader dies; the two others elect over TLS and go on.
  nodes[leader]->stop(false);
  int next = -1;
  ASSERT_TRUE(
      wait_until([&] { return (next = ready_leader()) >= 0 && next != leader; }, milliseconds(10000)));
  const Outcome after = submit_and_wait(*nodes[next], bytes_of("after-failover"));
  EXPECT_EQ(after.kind, OutcomeKind::kCommitted);

  for (std::size_t i = 0; i < 3; ++i) {
    if (static_cast<int>(i) == leader) continue;
    const TlsTransportCounters counters = nodes[i]->status().transport;
    EXPECT_GE(counters.inbound_accepted, 1U);
    EXPECT_GE(counters.outbound_connected, 1U);
    EXPECT_EQ(counters.refused_handshake + counters.refused_identity + counters.refused_preamble +
                  counters.refused_timeout + counters.refused_overload,
              0U);
  }
  nodes.clear();
  // Closed cleanly: every bridge thread joined, every socket closed.
  EXPECT_EQ(count_entries("/proc/self/fd"), descriptors_before);
  EXPECT_EQ(count_entries("/proc/self/task"), threads_before);
  for (std::size_t i = 0; i < 3; ++i) {
    for (int r = 0; r < 200; ++r) {
      EXPECT_TRUE(states[i]->holds(bytes_of("tls-record-" + std::to_string(r)))) << "member " << i + 1;
    }
  }
  std::filesystem::remove_all(root);
}

struct RogueRun {
  bool rogue_led = false;
  bool rogue_entry_committed = false;
  std::uint64_t honest_term_before = 0;
  std::uint64_t honest_term_after = 0;
  std::uint64_t honest_applied_before = 0;
  std::uint64_t honest_applied_after = 0;
  bool honest_holds_rogue_entry = false;
  TlsTransportCounters honest_counters;
};

// A fresh honest member 1 whose two peers are down, and a rogue Node that
// claims to be member 2 at member 2's address (same member list, pre-vote
// off so that it asks for real votes, a short election timeout so that it
// asks first). Runs for `duration` or until the
// rogue's entry reached the honest member.
RogueRun attack_lone_member(const std::string& name, std::optional<TlsTransportOptions> honest_tls,
                            std::optional<TlsTransportOptions> rogue_tls, milliseconds duration) {
  const auto root = fresh_data_root(name);
  const std::vector<Member> voters = loopback_voters();
  DedupLog honest_state;
  DedupLog rogue_state;
  NodeOptions honest_options = node_options(root, voters, 0);
  honest_options.tls = std::move(honest_tls);
  // The rogue asks first: otherwise, in plaintext, the honest member wins
  // its own election with the rogue's vote (a takeover too, but a less
  // legible one).
  honest_options.election_timeout_ms = 1000;
  auto honest = start_node(std::move(honest_options), honest_state);
  RogueRun run;
  if (!honest) return run;
  wait_until([&] { return honest->status().role != Role::kUnavailable; }, milliseconds(2000));
  std::this_thread::sleep_for(milliseconds(200));
  run.honest_term_before = honest->status().term;
  run.honest_applied_before = honest->status().last_applied;

  NodeOptions rogue_options = node_options(root, voters, 1);
  rogue_options.data_dir = (root / "rogue").string();
  rogue_options.pre_vote = false;
  rogue_options.election_timeout_ms = 100;
  rogue_options.heartbeat_timeout_ms = 20;
  rogue_options.tls = std::move(rogue_tls);
  auto rogue = start_node(std::move(rogue_options), rogue_state);
  if (!rogue) return run;

  const Bytes8 rogue_entry = bytes_of("ROGUE: drop the unexported records");
  std::atomic<bool> submitted{false};
  std::atomic<std::uint64_t> rogue_index{0};
  const auto deadline = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < deadline) {
    if (rogue->status().role == Role::kLeader) run.rogue_led = true;
    if (rogue->ready_for_work() && !submitted.exchange(true)) {
      (void)rogue->submit(rogue_entry, [&](const Outcome& outcome) {
        if (outcome.kind == OutcomeKind::kCommitted) rogue_index = outcome.index;
      });
    }
    rogue->deliver_completions();
    if (rogue_index != 0 && honest->status().last_applied >= rogue_index) break;
    std::this_thread::sleep_for(milliseconds(5));
  }
  run.rogue_entry_committed = rogue_index != 0;
  const NodeStatus after = honest->status();
  run.honest_term_after = after.term;
  run.honest_applied_after = after.last_applied;
  run.honest_counters = after.transport;
  rogue.reset();
  honest.reset();
  run.honest_holds_rogue_entry = honest_state.holds(rogue_entry);
  std::filesystem::remove_all(root);
  return run;
}

// The control: without TLS the rogue wins the honest member's vote, becomes
// leader and writes its entry into the honest member's log. This is what
// the TLS transport exists to prevent; if it stops happening, the refusals
// below prove nothing and this test says so.
TEST(TlsRogue, PlaintextRogueTakesOverALoneMember) {
  const RogueRun run =
      attack_lone_member("consensus_tls_rogue_plain", std::nullopt, std::nullopt, milliseconds(8000));
  EXPECT_TRUE(run.rogue_led);
  EXPECT_TRUE(run.rogue_entry_committed);
  EXPECT_GT(run.honest_term_after, run.honest_term_before);
  EXPECT_TRUE(run.honest_holds_rogue_entry);
}

TEST(TlsRogue, RogueWithoutAMemberIdentityGetsNoVoteAndNoAppend) {
  const Pki& p = pki();
  struct Variant {
    const char* name;
    const TestCertificate* certificate;  // nullptr: none.
  };
  // Each rogue trusts the cluster CA (public) but holds no valid member-2
  // certificate; the last holds a genuine member-3 certificate and claims id 2.
  const Variant variants[] = {{"no certificate", nullptr},
                              {"foreign CA member-2", &p.foreign_member_2},
                              {"revoked member-2", &p.revoked_member_2},
                              {"gateway-x", &p.gateway},
                              {"member-3 claiming id 2", &p.member[2]}};
  for (const Variant& variant : variants) {
    SCOPED_TRACE(variant.name);
    TlsTransportOptions rogue;
    rogue.server_context = rogue.client_context =
        tls_context_for_test(p.cluster.certificate_path(), variant.certificate);
    ASSERT_NE(rogue.server_context, nullptr);
    const RogueRun run = attack_lone_member("consensus_tls_rogue", p.transport(p.member[0]), std::move(rogue),
                                            milliseconds(2500));
    EXPECT_FALSE(run.rogue_led);
    EXPECT_FALSE(run.rogue_entry_committed);
    EXPECT_EQ(run.honest_term_after, run.honest_term_before);
    EXPECT_EQ(run.honest_applied_after, run.honest_applied_before);
    EXPECT_FALSE(run.honest_holds_rogue_entry);
    EXPECT_GE(run.honest_counters.refused_handshake + run.honest_counters.refused_identity, 1U);
    EXPECT_EQ(run.honest_counters.inbound_accepted, 0U);
    EXPECT_GE(run.honest_counters.outbound_failed, 1U);  // It would not talk to the rogue either.
    EXPECT_EQ(run.honest_counters.outbound_connected, 0U);
  }
}

// ---- Raw clients against one member's raft port -------------------------

sockaddr_in loopback_address(std::uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  return address;
}

int connect_loopback(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval timeout{.tv_sec = 5, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  const sockaddr_in address = loopback_address(port);
  EXPECT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
  return fd;
}

void put64le(Bytes8& out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
}

// A libraft RequestVote (uv_encoding: type, header length, then term,
// candidate, last index, last term, flags; little-endian) for term 1000 with
// disrupt_leader set: any member that reads it moves to term 1000.
Bytes8 request_vote_term_1000(std::uint64_t candidate) {
  Bytes8 message;
  put64le(message, RAFT_IO_REQUEST_VOTE);
  put64le(message, 40);
  put64le(message, 1000);
  put64le(message, candidate);
  put64le(message, 1000);
  put64le(message, 1000);
  put64le(message, 1);
  return message;
}

struct RawAttempt {
  bool accepted = false;  // Got the acceptance answer.
  Bytes8 received;        // Everything read (plaintext: raw bytes).
  bool closed = false;    // The server closed the connection.
};

// A TLS client with `context` (nullptr: plain TCP) that sends `first` (a
// preamble, or whatever a hostile peer sends) and a RequestVote of term 1000,
// then reads until the server closes or 5 s pass. Pipelined: both at once,
// as a hostile peer may; otherwise the vote only after the acceptance, as a
// member does.
RawAttempt raw_attempt(std::uint16_t port, SSL_CTX* context, const Bytes8& first, bool pipelined = true) {
  RawAttempt attempt;
  const int fd = connect_loopback(port);
  const Bytes8 vote = request_vote_term_1000(2);
  Bytes8 sent = first;
  if (pipelined) sent.insert(sent.end(), vote.begin(), vote.end());
  if (context == nullptr) {
    (void)::send(fd, sent.data(), sent.size(), MSG_NOSIGNAL);
    std::uint8_t buffer[4096];
    for (;;) {
      const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) {
        attempt.closed = n == 0 || errno == ECONNRESET;
        break;
      }
      attempt.received.insert(attempt.received.end(), buffer, buffer + n);
    }
    ::close(fd);
    return attempt;
  }
  SSL* ssl = SSL_new(context);
  SSL_set_fd(ssl, fd);
  if (SSL_connect(ssl) == 1 && SSL_write(ssl, sent.data(), static_cast<int>(sent.size())) > 0) {
    std::uint8_t buffer[4096];
    for (;;) {
      const int n = SSL_read(ssl, buffer, sizeof buffer);
      if (n <= 0) {
        const int error = SSL_get_error(ssl, n);
        attempt.closed = error == SSL_ERROR_ZERO_RETURN || error == SSL_ERROR_SSL ||
                         (error == SSL_ERROR_SYSCALL && errno != EAGAIN && errno != EWOULDBLOCK);
        break;
      }
      attempt.received.insert(attempt.received.end(), buffer, buffer + n);
      attempt.accepted =
          attempt.received.size() >= kPreambleAccepted.size() &&
          std::equal(kPreambleAccepted.begin(), kPreambleAccepted.end(), attempt.received.begin());
      if (attempt.accepted && !pipelined) {
        (void)SSL_write(ssl, vote.data(), static_cast<int>(vote.size()));
        break;  // A member's inbound stream carries nothing back.
      }
    }
  } else {
    attempt.closed = true;  // Refused within the handshake.
  }
  SSL_free(ssl);
  ::close(fd);
  return attempt;
}

// A raw client's context: trusts the cluster CA (so it gets as far as it
// can), presents `own` (nullptr: no certificate) and speaks TLS 1.3.
std::shared_ptr<SSL_CTX> client_context(const TestCertificate* own) {
  auto context = tls_context_for_test(pki().cluster.certificate_path(), own);
  EXPECT_NE(context, nullptr);
  return context;
}

TEST(TlsPort, ClosesEveryPeerWithoutAMemberIdentityBeforeLibraftSeesAByte) {
  const Pki& p = pki();
  const auto root = fresh_data_root("consensus_tls_port");
  const std::vector<Member> voters = loopback_voters();
  DedupLog state;
  NodeOptions options = node_options(root, voters, 0);
  options.tls = p.transport(p.member[0]);
  options.tls->handshake_timeout_ms = 1000;
  options.tls->max_pending_inbound = 4;
  auto node = start_node(std::move(options), state);
  ASSERT_NE(node, nullptr);
  const std::uint16_t port = port_of(voters[0]);
  ASSERT_TRUE(wait_until([&] { return node->status().role != Role::kUnavailable; }, milliseconds(2000)));
  const std::uint64_t term = node->status().term;
  ASSERT_LT(term, 1000U);

  // Plaintext: libraft's own TCP handshake (protocol 1, id 2, address) and a
  // vote. The answer is nothing, or one TLS alert record, and a close.
  {
    Bytes8 handshake;
    put64le(handshake, 1);
    put64le(handshake, 2);
    put64le(handshake, 16);
    const std::string address = voters[1].address + std::string(16 - voters[1].address.size(), '\0');
    handshake.insert(handshake.end(), address.begin(), address.end());
    const RawAttempt plain = raw_attempt(port, nullptr, handshake);
    EXPECT_TRUE(plain.closed);
    if (!plain.received.empty()) {
      EXPECT_EQ(plain.received[0], 0x15) << "not a TLS alert";
    }
    EXPECT_LE(plain.received.size(), 7U);
  }
  const Bytes8 preamble_2 = encode_preamble({.id = 2, .address = voters[1].address});
  struct Refused {
    const char* name;
    const TestCertificate* certificate;
    Bytes8 first;
    bool pipelined = true;
  };
  const Refused refused[] = {
      {"no certificate", nullptr, preamble_2},
      {"foreign CA member-2", &p.foreign_member_2, preamble_2},
      {"revoked member-2", &p.revoked_member_2, preamble_2},
      {"gateway-x", &p.gateway, preamble_2},
      {"member-3 with preamble id 2", &p.member[2], preamble_2, /*pipelined=*/false},
      {"member-9, not a member", &p.member_9, encode_preamble({.id = 9, .address = "127.0.0.1:9"})},
      {"member-1, the member itself", &p.member[0], encode_preamble({.id = 1, .address = voters[0].address})},
      {"member-2 sending garbage", &p.member[1], bytes_of("GET / HTTP/1.1\r\n\r\n")},
      {"member-2 sending before the acceptance", &p.member[1], preamble_2},
      {"member-2 with an oversized preamble", &p.member[1], Bytes8(4096, 'r')},
  };
  for (const Refused& attempt : refused) {
    SCOPED_TRACE(attempt.name);
    auto context = client_context(attempt.certificate);
    const RawAttempt result = raw_attempt(port, context.get(), attempt.first, attempt.pipelined);
    EXPECT_FALSE(result.accepted);
    EXPECT_TRUE(result.received.empty());
    EXPECT_TRUE(result.closed);
  }
  // A peer that says nothing is closed at the handshake deadline, and peers
  // beyond the pending cap at once.
  {
    std::vector<int> silent;
    for (int i = 0; i < 6; ++i) silent.push_back(connect_loopback(port));
    const auto opened = std::chrono::steady_clock::now();
    for (const int fd : silent) {
      std::uint8_t byte;
      EXPECT_LE(::recv(fd, &byte, 1, 0), 0);
      ::close(fd);
    }
    const auto waited = std::chrono::steady_clock::now() - opened;
    EXPECT_LT(waited, milliseconds(3000));
  }
  ASSERT_TRUE(wait_until(
      [&] {
        const TlsTransportCounters c = node->status().transport;
        return c.refused_timeout >= 4 && c.refused_overload >= 2;
      },
      milliseconds(3000)));

  std::this_thread::sleep_for(milliseconds(300));
  NodeStatus now = node->status();
  EXPECT_EQ(now.term, term) << "a refused peer's RequestVote reached libraft";
  EXPECT_EQ(now.transport.inbound_accepted, 0U);
  EXPECT_GE(now.transport.refused_handshake, 4U);  // Plaintext, none, foreign, revoked.
  EXPECT_GE(now.transport.refused_identity, 4U);   // gateway, 3-as-2, 9, 1.
  EXPECT_GE(now.transport.refused_preamble, 3U);   // Garbage, before the acceptance, oversized.

  // The control: the same bytes from a genuine member-2 reach libraft, so the
  // refusals above are what kept the term.
  auto genuine = client_context(&p.member[1]);
  const RawAttempt accepted = raw_attempt(port, genuine.get(), preamble_2, /*pipelined=*/false);
  EXPECT_TRUE(accepted.accepted);
  EXPECT_TRUE(wait_until([&] { return node->status().term >= 1000; }, milliseconds(5000)));
  EXPECT_EQ(node->status().transport.inbound_accepted, 1U);
  node.reset();
  std::filesystem::remove_all(root);
}

// ---- A member connecting out ----------------------------------------------

// A TLS server on a loopback port that records the application bytes its
// clients send. Stands in for a peer member.
class FakeMember {
 public:
  FakeMember(std::uint16_t port, std::shared_ptr<SSL_CTX> context) : context_(std::move(context)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    const sockaddr_in address = loopback_address(port);
    EXPECT_EQ(::bind(listener_, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
    ::listen(listener_, 8);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeMember() {
    stop_ = true;
    thread_.join();
    ::close(listener_);
  }
  [[nodiscard]] std::size_t connections() const { return connections_; }
  [[nodiscard]] Bytes8 received() const {
    std::lock_guard lock(mutex_);
    return received_;
  }

 private:
  void serve() {
    while (!stop_) {
      pollfd ready{listener_, POLLIN, 0};
      if (::poll(&ready, 1, 50) <= 0) continue;
      const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      ++connections_;
      timeval timeout{.tv_sec = 1, .tv_usec = 0};
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
      SSL* ssl = SSL_new(context_.get());
      SSL_set_fd(ssl, fd);
      if (SSL_accept(ssl) == 1) {
        std::uint8_t buffer[1024];
        const int n = SSL_read(ssl, buffer, sizeof buffer);
        if (n > 0) {
          std::lock_guard lock(mutex_);
          received_.insert(received_.end(), buffer, buffer + n);
        }
      }
      SSL_free(ssl);
      ::close(fd);
    }
  }

  std::shared_ptr<SSL_CTX> context_;
  int listener_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> connections_{0};
  mutable std::mutex mutex_;
  Bytes8 received_;
  std::thread thread_;
};

TEST(TlsPort, SendsNothingToAPeerWhoseCertificateIsNotThatMember) {
  const Pki& p = pki();
  const auto root = fresh_data_root("consensus_tls_outbound");
  const std::vector<Member> voters = loopback_voters();
  DedupLog state;
  {
    // Member 2's address answers with a genuine member-3 certificate, member
    // 3's with a member-3 certificate of another CA.
    FakeMember wrong_member(port_of(voters[1]), p.context(&p.member[2]));
    auto foreign_context = tls_context_for_test(p.cluster.certificate_path(), &p.foreign_member_2);
    FakeMember foreign_ca(port_of(voters[2]), foreign_context);
    NodeOptions options = node_options(root, voters, 0);
    options.tls = p.transport(p.member[0]);
    auto node = start_node(std::move(options), state);
    ASSERT_NE(node, nullptr);
    ASSERT_TRUE(wait_until(
        [&] {
          return wrong_member.connections() >= 2 && foreign_ca.connections() >= 2 &&
                 node->status().transport.outbound_failed >= 4;
        },
        milliseconds(5000)));
    EXPECT_TRUE(wrong_member.received().empty());
    EXPECT_TRUE(foreign_ca.received().empty());
    EXPECT_EQ(node->status().transport.outbound_connected, 0U);
  }
  {
    // The control: a genuine member 2 gets the preamble naming member 1.
    FakeMember genuine(port_of(voters[1]), p.context(&p.member[1]));
    NodeOptions options = node_options(root, voters, 0);
    options.tls = p.transport(p.member[0]);
    auto node = start_node(std::move(options), state);
    ASSERT_NE(node, nullptr);
    ASSERT_TRUE(
        wait_until([&] { return genuine.received().size() >= kPreambleHeadSize; }, milliseconds(5000)));
    const Bytes8 got = genuine.received();
    auto parsed = parse_preamble(std::span(got).first(kPreambleHeadSize + voters[0].address.size()));
    ASSERT_TRUE(parsed.has_value() && parsed->has_value());
    EXPECT_EQ((*parsed)->id, 1U);
    EXPECT_EQ((*parsed)->address, voters[0].address);
  }
  std::filesystem::remove_all(root);
}

TEST(TlsPort, ABusyRaftPortFailsTheStartCleanly) {
  const auto root = fresh_data_root("consensus_tls_busy");
  const std::vector<Member> voters = loopback_voters();
  FakeMember squatter(port_of(voters[0]), pki().context(&pki().member[1]));
  DedupLog state;
  NodeOptions options = node_options(root, voters, 0);
  options.tls = pki().transport(pki().member[0]);
  std::string logged;
  options.log = [&](LogLevel, std::string_view message) { logged += std::string(message) + "\n"; };
  auto node = Node::start(std::move(options), state);
  ASSERT_FALSE(node.has_value());
  // "raft_start (DATA_DIR): raft tls: listen on ADDRESS: Address already in use"
  EXPECT_NE(
      node.error().message.find("raft_start (" + (root / "member1").string() + "): raft tls: listen on " +
                                voters[0].address + ": Address already in use"),
      std::string::npos)
      << node.error().message;
  EXPECT_NE(logged.find("listen on " + voters[0].address), std::string::npos) << logged;
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace rw::consensus
