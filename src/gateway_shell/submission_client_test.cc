// Integration tests of the submission client over real loopback TCP: a small
// member written here speaks the frames of submission/frames.h (HelloAck,
// Committed, NotLeader, Pong), and the tests check that every record is
// answered once, to the worker its ticket names, only after a Committed;
// that a follower's redirect is followed; and that the bounds refuse.
#include "gateway_shell/submission_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>

#include "io/tls_certificates.h"
#include "submission/frames.h"

namespace rw::gateway_shell {
namespace {

// A member that accepts one connection at a time on 127.0.0.1 and answers
// Hello, Submit and Ping on its own thread.
class FramePeer {
 public:
  struct Options {
    bool is_leader = true;
    std::optional<std::string> leader{};  // Announced in HelloAck and NotLeader.
    bool commit = true;                   // Answer Submits with Committed (else never).
    io::TlsContext tls{};                 // Server context: the peer speaks TLS with its certificate.
  };

  explicit FramePeer(Options options) : options_(std::move(options)) {
    listener_ = io::FileDescriptor(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(listener_.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    EXPECT_EQ(listen(listener_.get(), 4), 0);
    socklen_t length = sizeof(address);
    EXPECT_EQ(getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&address), &length), 0);
    address_ = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
    stop_ = io::FileDescriptor(eventfd(0, EFD_CLOEXEC));
    thread_ = std::thread([this] { run(); });
  }

  ~FramePeer() {
    const std::uint64_t one = 1;
    EXPECT_EQ(write(stop_.get(), &one, sizeof(one)), static_cast<ssize_t>(sizeof(one)));
    thread_.join();
  }

  [[nodiscard]] const std::string& address() const { return address_; }

  // How often each record key was submitted to this peer.
  [[nodiscard]] std::map<submission::RecordKey, int> keys() {
    std::lock_guard lock(mutex_);
    return keys_;
  }
  [[nodiscard]] int hellos() {
    std::lock_guard lock(mutex_);
    return hellos_;
  }

 private:
  void run() {
    io::FileDescriptor connection;
    std::unique_ptr<io::TlsStream> tls;  // Before `connection` is replaced or closed.
    submission::FrameReader reader;
    for (;;) {
      pollfd fds[3] = {{stop_.get(), POLLIN, 0}, {listener_.get(), POLLIN, 0}, {connection.get(), POLLIN, 0}};
      if (poll(fds, connection.valid() ? 3 : 2, 10'000) <= 0) return;
      if (fds[0].revents != 0) return;
      if (fds[1].revents != 0) {
        tls.reset();
        connection = io::FileDescriptor(accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
        reader = submission::FrameReader();
        if (options_.tls) {
          // Blocking handshake, bounded by the receive timeout.
          timeval timeout{.tv_sec = 2, .tv_usec = 0};
          setsockopt(connection.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
          tls = std::move(*io::TlsStream::attach(options_.tls, connection.get(), io::TlsRole::kServer));
          if (tls->handshake() != io::TlsStream::Status::kDone) {
            tls.reset();
            connection = io::FileDescriptor();
          }
        }
        continue;
      }
      if (!connection.valid() || fds[2].revents == 0) continue;
      const io::TlsStream::Io received = io::receive_some(tls.get(), connection.get(), reader.writable());
      if (received.status != io::TlsStream::Status::kDone || received.bytes == 0) {
        tls.reset();
        connection = io::FileDescriptor();
        continue;
      }
      reader.commit(received.bytes);
      std::vector<std::uint8_t> out;
      for (;;) {
        auto frame = reader.next();
        if (!frame || !*frame) break;
        auto decoded = submission::decode_frame(**frame);
        ASSERT_TRUE(decoded.has_value());
        answer(*decoded, out);
      }
      if (!out.empty()) {
        const io::TlsStream::Io sent = io::send_some(tls.get(), connection.get(), out);
        ASSERT_EQ(sent.bytes, out.size());
      }
    }
  }

  void answer(const submission::Frame& frame, std::vector<std::uint8_t>& out) {
    using namespace submission;
    std::optional<std::string_view> leader;
    if (options_.leader) leader = *options_.leader;
    if (std::holds_alternative<Hello>(frame)) {
      std::lock_guard lock(mutex_);
      ++hellos_;
      encode_frame(HelloAck{.member_id = 1, .is_leader = options_.is_leader, .leader = leader}, out);
    } else if (const auto* submit = std::get_if<Submit>(&frame)) {
      if (!options_.is_leader) {
        encode_frame(NotLeader{.request_id = submit->request_id, .leader = leader}, out);
        return;
      }
      {
        std::lock_guard lock(mutex_);
        for (const SubmitRecord& record : submit->records) ++keys_[record.key];
      }
      if (options_.commit)
        encode_frame(Committed{.request_id = submit->request_id, .log_index = ++index_}, out);
    } else if (const auto* ping = std::get_if<Ping>(&frame)) {
      encode_frame(Pong{.nonce = ping->nonce}, out);
    } else if (const auto* query = std::get_if<SessionCountQuery>(&frame)) {
      // A count anyone can predict: the User-Name's length.
      encode_frame(SessionCountAnswer{.request_id = query->request_id,
                                      .open_sessions = static_cast<std::uint32_t>(query->user_name.size())},
                   out);
    }
  }

  Options options_;
  io::FileDescriptor listener_;
  io::FileDescriptor stop_;
  std::string address_;
  std::thread thread_;
  std::uint64_t index_ = 0;
  std::mutex mutex_;
  std::map<submission::RecordKey, int> keys_;
  int hellos_ = 0;
};

// Collects what the client routes to each worker.
class AnswerLog {
 public:
  AnswerRouter router() {
    return [this](int worker, std::span<const AnswerNotice> answers) {
      std::lock_guard lock(mutex_);
      for (const AnswerNotice& answer : answers) {
        EXPECT_EQ(gateway::ticket_worker(answer.ticket), worker);
        if (answer.kind == gateway::AnswerKind::kSessionCount) {
          counts_[answer.ticket] = answer.open_sessions;
          continue;
        }
        outcomes_[answer.ticket].push_back(answer.committed);
      }
      changed_.notify_all();
    };
  }
  // Waits until `count` tickets have an outcome; false if they never come
  // (the bound only ends a failing test).
  bool wait_for(std::size_t count) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(20), [&] { return outcomes_.size() >= count; });
  }
  std::map<gateway::Ticket, std::vector<bool>> outcomes() {
    std::lock_guard lock(mutex_);
    return outcomes_;
  }
  // Waits until `count` Simultaneous-Use answers arrived and returns them.
  std::map<gateway::Ticket, std::optional<std::uint32_t>> wait_for_counts(std::size_t count) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, std::chrono::seconds(20), [&] { return counts_.size() >= count; });
    return counts_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<gateway::Ticket, std::vector<bool>> outcomes_;
  std::map<gateway::Ticket, std::optional<std::uint32_t>> counts_;
};

accounting::RecordKey key_of(int n) {
  accounting::RecordKey key;
  key.bytes[0] = static_cast<std::uint8_t>(n >> 8);
  key.bytes[1] = static_cast<std::uint8_t>(n);
  key.bytes[15] = 0xAA;
  return key;
}

SubmissionClientOptions options_for(std::vector<std::string> members) {
  SubmissionClientOptions options;
  options.forwarder.members = std::move(members);
  options.forwarder.batch_records_max = 16;
  options.forwarder.batch_delay = Duration::microseconds(200);
  options.forwarder.reconnect_backoff_min = Duration::milliseconds(1);
  options.forwarder.reconnect_backoff_max = Duration::milliseconds(20);
  return options;
}

const std::vector<std::uint8_t> kRecord(40, 0x5A);

// The cluster certificates of these tests, made once in a temporary folder.
class Certificates {
 public:
  Certificates() {
    char pattern[] = "/tmp/rw_submission_client_tls_XXXXXX";
    dir_ = mkdtemp(pattern);
    auto written = io::write_cluster_certificates(
        io::ClusterCertificatesRequest{.dir = dir_, .members = {1, 2}, .gateways = {"test"}});
    EXPECT_TRUE(written.has_value()) << written.error().to_string();
  }
  ~Certificates() { std::filesystem::remove_all(dir_); }
  io::TlsContext context(std::string_view common_name, io::TlsRole role) const {
    auto context = io::make_tls_context(io::cluster_tls_files(dir_, common_name), role);
    EXPECT_TRUE(context.has_value()) << context.error().to_string();
    return context ? *context : nullptr;
  }

 private:
  std::string dir_;
};

// A started TLS client (certificate gateway-test) that expects member 1 at
// `peer` and has one record to submit.
std::unique_ptr<SubmissionClient> tls_client_of(const Certificates& certificates, const FramePeer& peer,
                                                AnswerLog& log) {
  SubmissionClientOptions options = options_for({peer.address()});
  options.tls = certificates.context("gateway-test", io::TlsRole::kClient);
  options.member_ids[peer.address()] = 1;
  auto client = SubmissionClient::create(std::move(options));
  EXPECT_TRUE(client.has_value());
  EXPECT_TRUE((*client)->submit(key_of(1), kRecord, gateway::make_ticket(0, 1, 1)));
  EXPECT_TRUE((*client)->start(log.router()).has_value());
  return std::move(*client);
}

// docs/security.md "Submission port": the member must present the
// certificate of the id configured for its address.
TEST(SubmissionClient, SubmitsOverTlsToTheMemberItMeant) {
  Certificates certificates;
  FramePeer peer({.tls = certificates.context("member-1", io::TlsRole::kServer)});
  AnswerLog log;
  auto client = tls_client_of(certificates, peer, log);
  ASSERT_TRUE(log.wait_for(1));
  client->stop();
  EXPECT_EQ(log.outcomes().begin()->second, std::vector<bool>{true});
  EXPECT_EQ(client->tls_refused(), 0u);
}

TEST(SubmissionClient, RefusesAMemberPresentingAnotherMembersCertificate) {
  Certificates certificates;
  // Configured as member 1, the peer presents member-2's certificate.
  FramePeer peer({.tls = certificates.context("member-2", io::TlsRole::kServer)});
  AnswerLog log;
  auto client = tls_client_of(certificates, peer, log);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (client->tls_refused() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  client->stop();
  EXPECT_GE(client->tls_refused(), 2u);  // Refused, and again on the retry.
  EXPECT_EQ(peer.hellos(), 0);           // Nothing was sent to it.
  EXPECT_TRUE(peer.keys().empty());
  EXPECT_TRUE(log.outcomes().empty());
}

TEST(SubmissionClient, RoutesSessionCountsToTheWorkerOfTheirTicket) {
  FramePeer peer({});
  auto client = SubmissionClient::create(options_for({peer.address()}));
  ASSERT_TRUE(client.has_value()) << client.error().to_string();
  AnswerLog log;
  ASSERT_TRUE((*client)->count_sessions("bob", gateway::make_ticket(1, 4, 9)));
  ASSERT_TRUE((*client)->count_sessions("carol", gateway::make_ticket(2, 0, 1)));
  // A name a frame cannot carry is refused at once: the caller decides.
  EXPECT_FALSE((*client)->count_sessions(std::string(254, 'x'), gateway::make_ticket(1, 5, 1)));
  EXPECT_FALSE((*client)->count_sessions("", gateway::make_ticket(1, 6, 1)));
  ASSERT_TRUE((*client)->start(log.router()).has_value());
  const auto counts = log.wait_for_counts(2);
  (*client)->stop();
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts.at(gateway::make_ticket(1, 4, 9)), std::optional<std::uint32_t>(3));
  EXPECT_EQ(counts.at(gateway::make_ticket(2, 0, 1)), std::optional<std::uint32_t>(5));
  EXPECT_EQ((*client)->status().counters.session_answers, 2u);
}

TEST(SubmissionClient, AnswersEveryRecordOnceToItsWorkerAfterCommit) {
  FramePeer peer({});
  auto client = SubmissionClient::create(options_for({peer.address()}));
  ASSERT_TRUE(client.has_value()) << client.error().to_string();
  AnswerLog log;
  // Records queued before start wait for it.
  constexpr int kRecords = 300;
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE((*client)->submit(
        key_of(i), kRecord,
        gateway::make_ticket(static_cast<std::uint16_t>(i % 3), static_cast<std::uint16_t>(i), 1)));
  }
  ASSERT_TRUE((*client)->start(log.router()).has_value());
  for (int i = 10; i < kRecords; ++i) {
    ASSERT_TRUE((*client)->submit(
        key_of(i), kRecord,
        gateway::make_ticket(static_cast<std::uint16_t>(i % 3), static_cast<std::uint16_t>(i), 1)));
  }
  ASSERT_TRUE(log.wait_for(kRecords));
  for (const auto& [ticket, outcomes] : log.outcomes()) {
    EXPECT_EQ(outcomes, std::vector<bool>{true}) << ticket;
  }
  const auto keys = peer.keys();
  EXPECT_EQ(keys.size(), static_cast<std::size_t>(kRecords));
  for (const auto& [key, count] : keys) EXPECT_EQ(count, 1);
  (*client)->stop();
  const submission::ForwarderStatus status = (*client)->status();
  EXPECT_EQ(status.counters.answers, static_cast<std::uint64_t>(kRecords));
  EXPECT_EQ(status.pending_records, 0u);
  EXPECT_LT(status.counters.batches_sent, static_cast<std::uint64_t>(kRecords)) << "records are batched";
}

// A started client of the one member `peer`, sending at most one Submit per
// `batch_delay` of at most `batch_records_max` records; null if it failed.
std::unique_ptr<SubmissionClient> batching_client(const FramePeer& peer, std::size_t batch_records_max,
                                                  Duration batch_delay, AnswerLog& log) {
  SubmissionClientOptions options = options_for({peer.address()});
  options.forwarder.batch_records_max = batch_records_max;
  options.forwarder.batch_delay = batch_delay;
  auto client = SubmissionClient::create(options);
  if (!client) {
    ADD_FAILURE() << "create: " << client.error().to_string();
    return nullptr;
  }
  if (auto started = (*client)->start(log.router()); !started) {
    ADD_FAILURE() << "start: " << started.error().to_string();
    return nullptr;
  }
  return std::move(*client);
}

// The same, once a first record went at once (the gateway was quiet) and
// was answered: the batching delay has begun.
std::unique_ptr<SubmissionClient> client_after_one_submit(const FramePeer& peer,
                                                          std::size_t batch_records_max, Duration batch_delay,
                                                          AnswerLog& log) {
  auto client = batching_client(peer, batch_records_max, batch_delay, log);
  if (!client) return nullptr;
  if (!client->submit(key_of(0), kRecord, gateway::make_ticket(0, 0, 1))) {
    ADD_FAILURE() << "the first record was refused";
    return nullptr;
  }
  if (!log.wait_for(1)) {
    ADD_FAILURE() << "the first record was never answered";
    return nullptr;
  }
  return client;
}

// docs/accounting.md "Waking the submission thread": while a Submit left
// less than batch_delay ago, records gather in the queue without waking the
// client thread, which takes them when the next Submit is due. Woken per
// record, the thread would be woken about once per record here.
TEST(SubmissionClient, RecordsWaitingForTheNextSubmitDoNotWakeTheThreadOneByOne) {
  FramePeer peer({});
  AnswerLog log;
  auto client = batching_client(peer, 512, Duration::milliseconds(50), log);
  ASSERT_NE(client, nullptr);
  constexpr int kRecords = 300;
  for (int i = 0; i < kRecords; ++i) {
    ASSERT_TRUE(
        client->submit(key_of(i), kRecord, gateway::make_ticket(0, static_cast<std::uint16_t>(i), 1)));
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  ASSERT_TRUE(log.wait_for(kRecords));
  client->stop();
  for (const auto& [ticket, outcomes] : log.outcomes())
    EXPECT_EQ(outcomes, std::vector<bool>{true}) << ticket;
  for (const auto& [key, count] : peer.keys()) EXPECT_EQ(count, 1);
  EXPECT_EQ(peer.keys().size(), static_cast<std::size_t>(kRecords));
  // About one wake-up per 50 ms Submit (the records took ~150 ms or more).
  EXPECT_LT(client->record_wakeups(), static_cast<std::uint64_t>(kRecords / 4));
  EXPECT_LT(client->status().counters.batches_sent, static_cast<std::uint64_t>(kRecords / 4));
}

// A batch's worth of records wakes the thread even while a Submit is not
// due: the forwarder sends a full batch at once.
TEST(SubmissionClient, ABatchsWorthOfRecordsIsSentBeforeTheDelayEnds) {
  FramePeer peer({});
  AnswerLog log;
  auto client = client_after_one_submit(peer, 16, Duration::seconds(30), log);
  ASSERT_NE(client, nullptr);
  for (int i = 1; i <= 16; ++i) {
    ASSERT_TRUE(
        client->submit(key_of(i), kRecord, gateway::make_ticket(0, static_cast<std::uint16_t>(i), 1)));
  }
  ASSERT_TRUE(log.wait_for(17)) << "the full batch waited for the 30-s delay";
  client->stop();
  EXPECT_EQ(peer.keys().size(), 17u);
}

// A Simultaneous-Use query is not held back with the records: an
// Access-Request waits on it.
TEST(SubmissionClient, ASessionQueryGoesAtOnceWhileRecordsWaitForTheNextSubmit) {
  FramePeer peer({});
  AnswerLog log;
  auto client = client_after_one_submit(peer, 16, Duration::seconds(3), log);
  ASSERT_NE(client, nullptr);
  // Within the 3 s after that Submit: the record waits, the query does not.
  ASSERT_TRUE(client->submit(key_of(2), kRecord, gateway::make_ticket(0, 2, 1)));
  ASSERT_TRUE(client->count_sessions("bob", gateway::make_ticket(1, 3, 1)));
  const auto counts = log.wait_for_counts(1);
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts.begin()->second, std::optional<std::uint32_t>(3));
  EXPECT_EQ(log.outcomes().size(), 1u) << "the second record waits for its Submit";
  ASSERT_TRUE(log.wait_for(2));
  client->stop();
  EXPECT_EQ(peer.keys().size(), 2u);
}

TEST(SubmissionClient, FollowsAFollowersRedirectToTheLeader) {
  FramePeer leader({});
  FramePeer follower({.is_leader = false, .leader = leader.address()});
  auto client = SubmissionClient::create(options_for({follower.address(), leader.address()}));
  ASSERT_TRUE(client.has_value());
  AnswerLog log;
  ASSERT_TRUE((*client)->start(log.router()).has_value());
  for (int i = 0; i < 20; ++i)
    ASSERT_TRUE(
        (*client)->submit(key_of(i), kRecord, gateway::make_ticket(0, static_cast<std::uint16_t>(i), 7)));
  ASSERT_TRUE(log.wait_for(20));
  for (const auto& [ticket, outcomes] : log.outcomes()) EXPECT_EQ(outcomes, std::vector<bool>{true});
  EXPECT_EQ(leader.keys().size(), 20u);
  EXPECT_TRUE(follower.keys().empty());
  EXPECT_GE(follower.hellos(), 1);
}

TEST(SubmissionClient, QueueBoundRefusesAtOnce) {
  SubmissionClientOptions options = options_for({"127.0.0.1:9"});
  options.queue_records_max = 2;
  auto client = SubmissionClient::create(options);
  ASSERT_TRUE(client.has_value());
  EXPECT_TRUE((*client)->submit(key_of(1), kRecord, 1));
  EXPECT_TRUE((*client)->submit(key_of(2), kRecord, 2));
  EXPECT_FALSE((*client)->submit(key_of(3), kRecord, 3));
  EXPECT_EQ((*client)->queue_refused(), 1u);
}

TEST(SubmissionClient, ForwarderRefusalIsRoutedAndNothingIsAnsweredWithoutCommit) {
  FramePeer peer({.commit = false});
  SubmissionClientOptions options = options_for({peer.address()});
  options.forwarder.pending_records_max = 1;
  auto client = SubmissionClient::create(options);
  ASSERT_TRUE(client.has_value());
  AnswerLog log;
  ASSERT_TRUE((*client)->start(log.router()).has_value());
  const gateway::Ticket first = gateway::make_ticket(1, 1, 1);
  const gateway::Ticket second = gateway::make_ticket(2, 2, 1);
  ASSERT_TRUE((*client)->submit(key_of(1), kRecord, first));
  ASSERT_TRUE((*client)->submit(key_of(2), kRecord, second));
  ASSERT_TRUE(log.wait_for(1));
  (*client)->stop();
  const auto outcomes = log.outcomes();
  ASSERT_EQ(outcomes.size(), 1u) << "the pending record waits for a Committed that never comes";
  EXPECT_EQ(outcomes.at(second), std::vector<bool>{false});
}

}  // namespace
}  // namespace rw::gateway_shell
